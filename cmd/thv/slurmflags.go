package main

import (
	"fmt"
	"log/slog"

	"github.com/spf13/cobra"

	"thv/pipeline"
	"thv/pipeline/slurm"
	"thv/stages/protocol"
)

// slurmFlags override the slurm section of params.yaml for --executor
// slurm.
type slurmFlags struct {
	p   slurm.Params
	cmd *cobra.Command
}

func (f *slurmFlags) register(cmd *cobra.Command) {
	f.cmd = cmd
	fl := cmd.Flags()
	fl.StringVar(&f.p.Partition, "slurm-partition", "", "--executor slurm: partition (params.yaml slurm.partition)")
	fl.StringVar(&f.p.Account, "slurm-account", "", "--executor slurm: account (slurm.account)")
	fl.StringVar(&f.p.Time, "slurm-time", "", "--executor slurm: time limit of one array element, e.g. 30 or 2:00:00 (slurm.time, default "+slurm.DefaultTime+")")
	fl.StringVar(&f.p.Mem, "slurm-mem", "", "--executor slurm: memory of one element, e.g. 4G (slurm.mem)")
	fl.IntVar(&f.p.CPUsPerTask, "slurm-cpus-per-task", 0, "--executor slurm: CPUs of one element (slurm.cpus_per_task)")
	fl.StringArrayVar(&f.p.SbatchArgs, "slurm-arg", nil, "--executor slurm: one more sbatch option, e.g. --slurm-arg=--qos=short (repeatable; slurm.sbatch_args)")
	fl.IntVar(&f.p.TasksPerElement, "slurm-tasks-per-element", 0, fmt.Sprintf("--executor slurm: tasks one array element runs (slurm.tasks_per_element, default %d)", slurm.DefaultTasksPerElement))
	fl.IntVar(&f.p.MaxElements, "slurm-max-elements", 0, fmt.Sprintf("--executor slurm: array elements in flight at once (slurm.max_elements, default %d)", slurm.DefaultMaxElements))
	fl.StringVar(&f.p.Deadline, "slurm-deadline", "", "--executor slurm: the whole run's time limit, e.g. 12:00:00; then what is left fails and this run's jobs are cancelled (slurm.deadline)")
	fl.StringVar(&f.p.Thv, "slurm-thv", "", "--executor slurm: the thv binary the nodes run, an absolute path on the shared filesystem (slurm.thv; default: this binary)")
}

// changed names a --slurm-* flag given on the command line, if any.
func (f *slurmFlags) changed() string {
	if f.cmd == nil {
		return ""
	}
	for _, n := range []string{"partition", "account", "time", "mem", "cpus-per-task", "arg", "tasks-per-element", "max-elements", "thv", "deadline"} {
		if f.cmd.Flags().Changed("slurm-" + n) {
			return "--slurm-" + n
		}
	}
	return ""
}

// params are the project's executors.slurm section overridden by the
// flags.
func (f *slurmFlags) params(proj *protocol.Project) (slurm.Params, error) {
	if err := f.p.Validate(); err != nil {
		return slurm.Params{}, fmt.Errorf("--slurm-* flags: %w", err)
	}
	file, err := slurm.DecodeParams(proj.Config.Executors["slurm"])
	if err != nil {
		return slurm.Params{}, fmt.Errorf("executors.slurm.%w", err)
	}
	return file.Override(f.p), nil
}

// The executors.slurm section of params.yaml is checked whenever a
// protocol is loaded, whatever the executor of the run.
func init() {
	protocol.RegisterExecutor("slurm", func(section map[string]any) error {
		_, err := slurm.DecodeParams(section)
		return err
	})
}

// jobs is the default -j of a slurm repro: enough tasks in flight to fill
// every element.
func (f *slurmFlags) jobs(proj *protocol.Project) int {
	p, err := f.params(proj)
	if err != nil {
		return 0 // reported by executor
	}
	return p.Jobs()
}

func (f *slurmFlags) executor(proj *protocol.Project, log *slog.Logger) (pipeline.Executor, error) {
	p, err := f.params(proj)
	if err != nil {
		return nil, err
	}
	return slurm.New(slurm.Options{Params: p, Store: proj.Store, Logger: log})
}
