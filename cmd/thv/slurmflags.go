package main

import (
	"fmt"
	"log/slog"

	"github.com/spf13/cobra"

	"thv/pipeline"
	"thv/pipeline/slurm"
	"thv/stages/protocol"
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

// slurmSettings are the Slurm settings of the project's protocol: the one
// place the slurm executor's settings are read from it.
func slurmSettings(proj *protocol.Project) slurm.Params {
	return proj.Config.Slurm
}

// params are the protocol's Slurm settings overridden by the flags.
func (f *slurmFlags) params(proj *protocol.Project) (slurm.Params, error) {
	if err := f.p.Validate(); err != nil {
		return slurm.Params{}, fmt.Errorf("--slurm-* flags: %w", err)
	}
	return slurmSettings(proj).Override(f.p), nil
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
