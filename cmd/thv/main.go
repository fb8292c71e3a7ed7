// Command thv is the command-line interface of THV: exact hypervolume, single
// bandit runs, and the paper-reproduction pipeline.
package main

import (
	"fmt"
	"os"
	"runtime/debug"

	"github.com/spf13/cobra"

	_ "thv/algos/all" // register the fourteen algorithms
)

func main() {
	// thv allocates many short-lived objects and runs briefly: trading
	// memory for fewer collections speeds up the no-op path noticeably.
	debug.SetGCPercent(400)
	root := &cobra.Command{
		Use:           "thv",
		Short:         "Top-k Pareto bandits: exact hypervolume, THV-UCB and baselines, and the paper-reproduction pipeline",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newHVCommand(), newRunCommand(), newAlgosCommand(),
		newReproCommand(), newStatusCommand(), newDAGCommand(), newShowCommand(), newGCCommand())
	if err := root.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "thv:", err)
		os.Exit(1)
	}
}
