package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"thv/pipeline"
	"thv/protocol"
)

// executorRow is one executor of thv, a row of executors.
type executorRow struct {
	name string // what --executor calls it
	help string // what it is, in --executor's help: "in process"
	// flags are the flags it owns: given with another executor, they
	// are refused.
	flags []*executorFlag
	// check checks the values of its flags before anything is made;
	// nil: nothing to check.
	check func(f *executorFlags) error
	// repro makes the executor a repro (or a reading) runs tasks with,
	// and the image digest to record in the lock ("" outside
	// containers); a nil executor is the runner's default, in process.
	repro func(f *executorFlags, proj *protocol.Project) (pipeline.Executor, string, error)
	// verify returns how a verification makes its executor, which reads
	// the project store and writes to a scratch store; a nil function is
	// in process. nil: it cannot verify, because noVerify.
	verify   func(f *executorFlags, proj *protocol.Project) (newVerifyExecutor, error)
	noVerify string
	// jobs is the default -j of a repro with it; nil: all cores.
	jobs func(f *executorFlags, proj *protocol.Project) int
}

// newVerifyExecutor makes a verification's executor on its scratch store
// (pipeline.VerifyOptions.NewExecutor).
type newVerifyExecutor = func(scratchDir string) (pipeline.Executor, error)

// executorFlag is a group of flags that belong to the executors whose
// rows list it; it is registered once per command.
type executorFlag struct {
	names    []string // the flags register adds, without "--"
	register func(cmd *cobra.Command, f *executorFlags)
	why      string // said after the refusal of one given to another executor ("": nothing)
}

// executorFlags are a command's choice of executor (--executor) and the
// values of the executors' own flags: where tasks run (repro, readings,
// verify, verify-bundle), and the ceilings of each task's worker.
type executorFlags struct {
	name      string
	verifying bool // verify, verify-bundle: process workers by default, with a memory ceiling
	cmd       *cobra.Command
	owned     []string            // the executors' flags on cmd, in registration order
	owners    map[string][]string // flag → the executors that own it
	why       map[string]string   // flag → executorFlag.why

	// The values of the rows' flags.
	runtime    string
	taskMemory byteSize // --task-memory; 0: the executor's default
	outLimit   byteSize // --out-limit; 0: the container's default
	slurm      slurmFlags
}

// register adds --executor and the flags of every executor the command can
// use (a verification: those that can verify) to cmd.
func (f *executorFlags) register(cmd *cobra.Command) {
	def := "local"
	if strings.HasPrefix(cmd.Name(), "verify") {
		// Re-executed tasks run in worker processes of this thv, each
		// under the memory ceiling (--task-memory) and killed at the
		// time ceiling: a bundle's protocol decides what they compute.
		def, f.verifying = "process", true
	}
	f.cmd, f.owners, f.why = cmd, map[string][]string{}, map[string]string{}
	done := map[*executorFlag]bool{}
	var usable []string
	for _, row := range f.rows() {
		usable = append(usable, row.name+" ("+row.help+")")
		for _, fl := range row.flags {
			if !done[fl] {
				done[fl] = true
				fl.register(cmd, f)
				f.owned = append(f.owned, fl.names...)
			}
			for _, n := range fl.names {
				f.owners[n] = append(f.owners[n], row.name)
				f.why[n] = fl.why
			}
		}
	}
	cmd.Flags().StringVar(&f.name, "executor", def, "where tasks run: "+orList(usable))
}

// rows are the executors the command can use: every one, or for a
// verification those that can verify.
func (f *executorFlags) rows() []*executorRow {
	var out []*executorRow
	for i := range executors {
		if r := &executors[i]; !f.verifying || r.verify != nil {
			out = append(out, r)
		}
	}
	return out
}

// row returns the chosen executor's row.
func (f *executorFlags) row() (*executorRow, error) {
	for i := range executors {
		if executors[i].name == f.name {
			return &executors[i], nil
		}
	}
	var names []string
	for _, r := range f.rows() {
		names = append(names, r.name)
	}
	return nil, fmt.Errorf("--executor %q: want %s", f.name, orList(names))
}

// check returns the chosen executor's row once its flags are checked: a
// flag of another executor is refused, then the row checks its own.
func (f *executorFlags) check() (*executorRow, error) {
	row, err := f.row()
	if err != nil {
		return nil, err
	}
	for _, n := range f.owned {
		fl := f.cmd.Flags().Lookup(n)
		if !fl.Changed || slices.Contains(f.owners[n], row.name) {
			continue
		}
		err := fmt.Sprintf("--%s %s: only with --executor %s", n, fl.Value, orList(f.owners[n]))
		if why := f.why[n]; why != "" {
			err += " (" + why + ")"
		}
		return nil, fmt.Errorf("%s", err)
	}
	if row.check != nil {
		if err := row.check(f); err != nil {
			return nil, err
		}
	}
	return row, nil
}

// executor returns the executor a repro runs tasks with (nil is the
// runner's default, in process) and the image digest to record in the
// lock ("" outside containers).
func (f *executorFlags) executor(proj *protocol.Project) (pipeline.Executor, string, error) {
	row, err := f.check()
	if err != nil {
		return nil, "", err
	}
	return row.repro(f, proj)
}

// verifier returns how a verification makes its executor, which reads the
// project store and writes to a scratch store; nil means in process
// (where no memory ceiling can be applied to one task).
func (f *executorFlags) verifier(proj *protocol.Project) (newVerifyExecutor, error) {
	row, err := f.check()
	if err != nil {
		return nil, err
	}
	if row.verify == nil {
		var can []string
		for _, r := range f.rows() {
			can = append(can, r.name)
		}
		return nil, fmt.Errorf("%s --executor %s: not supported (%s); use --executor %s", f.cmd.CommandPath(), row.name, row.noVerify, orList(can))
	}
	return row.verify(f, proj)
}

// defaultJobs is the -j a repro uses when none is given: the executor's
// (with slurm, enough tasks to fill every element), else 0, the runner's
// default (all cores).
func (f *executorFlags) defaultJobs(proj *protocol.Project) int {
	row, err := f.row()
	if err != nil || row.jobs == nil {
		return 0 // an unknown executor is reported by executor
	}
	return row.jobs(f, proj)
}

// orList joins words as "a, b or c".
func orList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}
