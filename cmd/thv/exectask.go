package main

import (
	"encoding/json"
	"fmt"
	"os"
	"runtime/debug"

	"github.com/spf13/cobra"

	"thv/artifacts"
	"thv/pipeline"
	"thv/protocol"
)

// execTaskFlags are thv exec-task's flags.
type execTaskFlags struct {
	storeDir, outDir string
	selfCheck        bool
	maxMemory        int64
	selfCheckExceed  string
}

func newExecTaskCommand() *cobra.Command {
	f := &execTaskFlags{}
	cmd := &cobra.Command{
		Use:   "exec-task --store DIR [--out DIR] [SPEC.json ...]",
		Short: "Execute task specs against a store (the worker side of the executors)",
		Long: `Execute task specs, as written by thv repro's executors, against a store:
read each spec's inputs from the store, check that this binary's code
identity gives the spec's key (a worker built from other code refuses),
run the stage, and store its outputs and index entry. Prints one JSON
result line per spec: {"task", "outputs"} or {"task", "error", "input"}.

With SPEC files, executes each (a file may hold several specs, one per
line). Without, serves specs from standard input one line at a time until
it closes: this is how --executor process drives its workers.

With --out, the store is only read (it may be read-only: a container's
mount) and outputs and index entries go to the store at --out, created if
needed; the caller imports them (--executor container) or compares them
(thv verify).`,
		Example: `  thv exec-task --store .thv spec.json`,
		RunE:    f.run,
	}
	cmd.Flags().StringVar(&f.storeDir, "store", "", "the artifact store the specs' inputs are in and their outputs go to")
	cmd.Flags().StringVar(&f.outDir, "out", "", "a scratch store for the outputs instead, written without fsync (--store is then only read)")
	cmd.Flags().Int64Var(&f.maxMemory, "max-memory", 0, "memory ceiling in bytes (address space of this worker process); 0: none")
	cmd.Flags().BoolVar(&f.selfCheck, "self-check", false, "print the confinement this worker sees (user, capabilities, seccomp, mounts, limits, writable paths, network; selfcheck.go) as JSON, and exit")
	cmd.Flags().MarkHidden("self-check")
	cmd.Flags().StringVar(&f.selfCheckExceed, "self-check-exceed", "", "serve specs by breaking a limit: memory=BYTES allocates that much for each, threads=N starts that many threads, sleep=SECONDS sleeps (for the container tests)")
	cmd.Flags().MarkHidden("self-check-exceed")
	return cmd
}

// run serves the specs of args, or of standard input, against the store.
func (f *execTaskFlags) run(cmd *cobra.Command, args []string) (err error) {
	switch {
	case f.selfCheck:
		return json.NewEncoder(cmd.OutOrStdout()).Encode(probeSandbox(f.storeDir, f.outDir))
	case f.selfCheckExceed != "":
		return serveExceeding(cmd.Context(), cmd.InOrStdin(), cmd.OutOrStdout(), f.selfCheckExceed)
	case f.storeDir == "":
		return fmt.Errorf("exec-task: --store is required")
	}
	if err := limitMemory(f.maxMemory); err != nil {
		return err
	}
	w, err := f.worker()
	if err != nil {
		return err
	}
	// A worker writing the project store does not fsync each file
	// (artifacts/durable.go): it ends with the store's barrier, so that
	// what it answered is durable once it has exited — a Slurm element's
	// host reads its results after that, from another machine whose
	// barrier does not cover this one's writes.
	if w.Out == nil {
		defer func() {
			if serr := w.Store.Sync(); serr != nil && err == nil {
				err = serr
			}
		}()
	}
	if len(args) == 0 {
		return pipeline.ServeWorker(cmd.Context(), w, cmd.InOrStdin(), cmd.OutOrStdout())
	}
	failed := 0
	for _, name := range args {
		file, err := os.Open(name)
		if err != nil {
			return err
		}
		err = pipeline.ServeWorker(cmd.Context(), w, file, countingWriter{cmd.OutOrStdout(), &failed})
		file.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d of the specs failed (see their error lines)", failed)
	}
	return nil
}

// limitMemory sets the ceiling of a verifier's worker: an allocation
// beyond it ends this process with the runtime's out-of-memory error,
// which the host reports as the task's. debug.SetMemoryLimit makes the
// collector work harder before that.
func limitMemory(max int64) error {
	switch {
	case max < 0:
		return fmt.Errorf("exec-task: --max-memory %d: want a positive number of bytes, or 0 for none", max)
	case max == 0:
		return nil
	}
	if err := limitAddressSpace(max); err != nil {
		return fmt.Errorf("exec-task: --max-memory: %w", err)
	}
	debug.SetMemoryLimit(max / 2)
	return nil
}

// worker is the worker of the flags' stores: the project store, or,
// with --out, the store only read and a scratch store for the outputs.
func (f *execTaskFlags) worker() (*pipeline.Worker, error) {
	var st, out *artifacts.Store
	var err error
	if f.outDir == "" {
		st, err = artifacts.Open(f.storeDir, artifacts.Create)
	} else if st, err = artifacts.Open(f.storeDir, artifacts.Existing); err == nil {
		out, err = artifacts.Open(f.outDir, artifacts.Scratch)
	}
	if err != nil {
		return nil, err
	}
	kinds, err := protocol.Kinds()
	if err != nil {
		return nil, err
	}
	return &pipeline.Worker{Store: st, Kinds: kinds, Out: out}, nil
}

// countingWriter passes result lines through and counts the failed ones.
type countingWriter struct {
	w      interface{ Write([]byte) (int, error) }
	failed *int
}

func (c countingWriter) Write(p []byte) (int, error) {
	var r struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(p, &r) == nil && r.Error != "" {
		*c.failed++
	}
	return c.w.Write(p)
}
