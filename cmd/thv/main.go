// Command thv is the command-line interface of THV: exact hypervolume, single
// bandit runs, and the paper-reproduction pipeline.
package main

import (
	"context"
	"fmt"
	"os"
	"runtime/debug"
	"time"

	"github.com/spf13/cobra"

	_ "thv/algos/all" // register every algorithm (the paper's fourteen and any other)
)

func main() {
	collectLater()
	root := &cobra.Command{
		Use:   "thv",
		Short: "Top-k Pareto bandits: exact hypervolume, THV-UCB and baselines, and the paper-reproduction pipeline",
		Long: `Top-k Pareto bandits: exact hypervolume, THV-UCB and baselines, and the
paper-reproduction pipeline (README.md).

Exit status: 0 done (for thv verify, verify-bundle and compare: verified, or
the gate passed); 1 an error, or for those three: rejected (a difference
found); 2 a wrong command line or a missing input (nothing checked); 3 not
checked (this machine failed, this thv runs other code than the bundle's,
or the values are not comparable); 4 a random sample agreed (--sample: a
partial check); 130 or 143 interrupted (SIGINT, SIGTERM).`,
		Version:       "thv", // versionText, when --version asks
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetVersionTemplate(versionTemplate)
	startProfile, stopProfile := addProfileFlag(root) // hidden --cpuprofile (profile.go)
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		// Temp data of killed runs is removed when the next command that
		// makes some starts (sweep.go).
		sweepTemp(cmd, os.Stderr)
		return startProfile()
	}
	root.AddCommand(newHVCommand(), newRunCommand(), newAlgosCommand(),
		newReproCommand(), newStatusCommand(), newDAGCommand(), newShowCommand(), newGCCommand(),
		newVerifyCommand(), newImageCommand(), newCompareCommand(), newReadingsCommand(), newExecTaskCommand())
	root.AddCommand(newBundleCommand(), newVerifyBundleCommand())                    // bundlecmd.go
	root.AddCommand(newKeyCommand(), newSyncCommand("push"), newSyncCommand("pull")) // remotecmd.go
	root.AddCommand(newReportCommand())                                              // reportcmd.go
	// Ctrl-C (or SIGTERM) cancels the context: a pass stops cleanly; a
	// second one exits at once (signals.go).
	ctx, stop, signalled := notifyContext(context.Background(), os.Stderr, os.Exit)
	defer stop()
	err := root.ExecuteContext(ctx)
	stopProfile()
	if err != nil {
		if msg := err.Error(); msg != "" {
			fmt.Fprintln(os.Stderr, "thv:", terminalLines(msg)) // terminal.go: it may quote untrusted input
		}
		code := exitStatus(ctx, err, signalled())
		stop()
		os.Exit(code)
	}
}

// collectLater starts the garbage collector only after the command's first
// 100 ms, or sooner once the runtime holds 512 MiB (GOMEMLIMIT if lower):
// a command that ends within them (a no-op repro, status) allocates tens
// of megabytes, and collecting them is work, and pages touched, for
// nothing. From then on thv, which allocates many short-lived objects,
// trades memory for fewer collections.
func collectLater() {
	limit := debug.SetMemoryLimit(-1) // GOMEMLIMIT, or no limit
	debug.SetMemoryLimit(min(limit, 512<<20))
	debug.SetGCPercent(-1)
	time.AfterFunc(100*time.Millisecond, func() {
		debug.SetGCPercent(400)
		debug.SetMemoryLimit(limit)
	})
}
