package main

import (
	"fmt"
	"log/slog"

	"github.com/spf13/cobra"

	"thv/pipeline"
	"thv/pipeline/slurm"
	"thv/protocol"
	"thv/protocol/config"
)

// slurmFlags override the protocol's Slurm settings (slurmSettings) for
// --executor slurm.
type slurmFlags struct {
	p slurm.Params
}

// slurmFlagNames are the flags slurmFlags.register adds.
var slurmFlagNames = []string{"slurm-partition", "slurm-account", "slurm-time", "slurm-mem", "slurm-cpus-per-task", "slurm-arg",
	"slurm-tasks-per-element", "slurm-max-elements", "slurm-deadline", "slurm-thv"}

func (f *slurmFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.p.Partition, "slurm-partition", "", "--executor slurm: partition (params.yaml executors.slurm.partition)")
	fl.StringVar(&f.p.Account, "slurm-account", "", "--executor slurm: account (executors.slurm.account)")
	fl.StringVar(&f.p.Time, "slurm-time", "", "--executor slurm: time limit of one array element, e.g. 30 or 2:00:00 (executors.slurm.time, default "+slurm.DefaultTime+")")
	fl.StringVar(&f.p.Mem, "slurm-mem", "", "--executor slurm: memory of one element, e.g. 4G (executors.slurm.mem)")
	fl.IntVar(&f.p.CPUsPerTask, "slurm-cpus-per-task", 0, "--executor slurm: CPUs of one element (executors.slurm.cpus_per_task)")
	fl.StringArrayVar(&f.p.SbatchArgs, "slurm-arg", nil, "--executor slurm: one more sbatch option, e.g. --slurm-arg=--qos=short (repeatable; executors.slurm.sbatch_args)")
	fl.IntVar(&f.p.TasksPerElement, "slurm-tasks-per-element", 0, fmt.Sprintf("--executor slurm: tasks one array element runs (executors.slurm.tasks_per_element, default %d)", slurm.DefaultTasksPerElement))
	fl.IntVar(&f.p.MaxElements, "slurm-max-elements", 0, fmt.Sprintf("--executor slurm: array elements in flight at once (executors.slurm.max_elements, default %d)", slurm.DefaultMaxElements))
	fl.StringVar(&f.p.Deadline, "slurm-deadline", "", "--executor slurm: the whole run's time limit, e.g. 12:00:00; then what is left fails and this run's jobs are cancelled (executors.slurm.deadline)")
	fl.StringVar(&f.p.Thv, "slurm-thv", "", "--executor slurm: the thv binary the nodes run, an absolute path on the shared filesystem (executors.slurm.thv; default: this binary)")
}

// slurmSettings are the project's executors.slurm section, decoded: the
// one place the slurm executor's settings are read from the protocol.
func slurmSettings(proj *protocol.Project) (slurm.Params, error) {
	p, err := slurm.DecodeParams(proj.Config.Executors["slurm"])
	if err != nil {
		return slurm.Params{}, fmt.Errorf("executors.slurm.%w", err)
	}
	return p, nil
}

// params are the project's executors.slurm section overridden by the
// flags.
func (f *slurmFlags) params(proj *protocol.Project) (slurm.Params, error) {
	if err := f.p.Validate(); err != nil {
		return slurm.Params{}, fmt.Errorf("--slurm-* flags: %w", err)
	}
	file, err := slurmSettings(proj)
	if err != nil {
		return slurm.Params{}, err
	}
	return file.Override(f.p), nil
}

// The executors.slurm section of params.yaml is checked whenever a
// protocol is loaded, whatever the executor of the run.
func init() {
	config.RegisterExecutor("slurm", func(section map[string]any) error {
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
