package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"thv/artifacts"
	"thv/pipeline"
	"thv/stages/protocol"
)

// executorFlags choose where tasks run (repro, verify).
type executorFlags struct {
	name string
}

func (f *executorFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.name, "executor", "local", "where tasks run: local (in process) or process (thv exec-task workers)")
}

// executor returns the executor a repro runs tasks with; nil is the
// runner's default, in process.
func (f *executorFlags) executor(proj *protocol.Project) (pipeline.Executor, error) {
	switch f.name {
	case "", "local":
		return nil, nil
	case "process":
		cmd, err := pipeline.WorkerCommand(proj.Store.Root(), "")
		if err != nil {
			return nil, err
		}
		return &pipeline.Process{Command: cmd}, nil
	}
	return nil, f.unknown()
}

// verifier returns how thv verify makes its executor, which reads the
// project store and writes to a scratch store; nil means in process.
func (f *executorFlags) verifier(proj *protocol.Project) (func(*artifacts.Store) (pipeline.Executor, error), error) {
	switch f.name {
	case "", "local":
		return nil, nil
	case "process":
		return func(scratch *artifacts.Store) (pipeline.Executor, error) {
			cmd, err := pipeline.WorkerCommand(proj.Store.Root(), scratch.Root())
			if err != nil {
				return nil, err
			}
			return &pipeline.Process{Command: cmd}, nil
		}, nil
	}
	return nil, f.unknown()
}

func (f *executorFlags) unknown() error {
	return fmt.Errorf("--executor %q: want local or process", f.name)
}
