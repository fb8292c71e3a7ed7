package main

import (
	"errors"

	"github.com/spf13/cobra"

	"thv/pipeline"
	"thv/protocol"
	"thv/protocol/readings"
)

func newReadingsCommand() *cobra.Command {
	var pf projectFlags
	var jobs int
	var only []string
	var ef executorFlags
	cmd := &cobra.Command{
		Use:   "readings [--only NAME]...",
		Short: "Run the readings sweep: the paper's open readings, each compared with its published values",
		Long: `Run every reading of params.yaml's readings section (docs/compare.md): the
protocol with the reading's keys set, as --set sets them, on the settings the
paper publishes values for. Each reading is an ordinary pipeline run against
the same store, so the tasks it shares with another reading (or with thv
repro) are cache hits: a reading of THV-UCB's δ reruns only THV-UCB's runs.
Each writes its lock to <results>/readings/<name>.lock.

The report, <results>/readings.md and <results>/readings.parquet, shows
per reading how many of the published values agree (as thv compare judges
them), per algorithm, the width of our CIs against the published ones, and
the claims.`,
		Example: `  thv readings                 # every reading (the paper's d = 2, 3 settings)
  thv readings --profile quick # a fast check of the sweep itself
  thv readings --only default --only fixed`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			errw := cmd.ErrOrStderr()
			sweep, err := readings.Run(cmd.Context(), readings.Options{
				Project: protocol.Options{LoadOptions: pf.loadOptions(), StoreDir: pf.store},
				Only:    only, Jobs: jobs, Log: errw, Terminal: isTerminal(errw), Logger: logger(errw),
				Executor: func(proj *protocol.Project) (pipeline.Executor, string, int, error) {
					exec, image, err := ef.executor(proj)
					return exec, image, ef.defaultJobs(proj), err
				},
			})
			if errors.Is(err, readings.ErrUnknownReading) {
				return usageError(err)
			}
			if err != nil {
				return err
			}
			sweep.Print(cmd.OutOrStdout())
			return nil
		},
	}
	pf.register(cmd)
	cmd.Flags().IntVarP(&jobs, "jobs", "j", 0, "parallel workers (default: all cores)")
	cmd.Flags().StringArrayVar(&only, "only", nil, "run only this reading (repeatable)")
	ef.register(cmd)
	return cmd
}
