// Command thv is the command-line interface of THV: exact hypervolume, single
// bandit runs, and the paper-reproduction pipeline.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

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
		newReproCommand(), newStatusCommand(), newDAGCommand(), newShowCommand(), newGCCommand(),
		newVerifyCommand(), newImageCommand(), newCompareCommand(), newReadingsCommand(), newExecTaskCommand())
	root.AddCommand(newBundleCommand(), newVerifyBundleCommand()) // bundlecmd.go
	// Ctrl-C (or SIGTERM) cancels the context: a pass stops cleanly.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := root.ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "thv:", err)
		stop()
		os.Exit(1)
	}
}
