package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
)

// notifyContext is signal.NotifyContext for SIGINT and SIGTERM, with a way
// out: the first signal cancels the context, and the command stops cleanly
// (a pass abandons its running tasks and writes its lock); a second one
// ends the process at once, with the status a shell gives a process killed
// by that signal (130 for SIGINT, 143 for SIGTERM), after one line on
// stderr. A command blocked where it does not watch its context (a read, a
// container, a slow task) can so always be stopped; the temp directories
// it leaves are removed by the next thv that starts (pipeline/tempdir).
// stop releases the signals; signalled is the first signal received, or
// nil.
func notifyContext(parent context.Context, stderr io.Writer, exit func(int)) (ctx context.Context, stop func(), signalled func() os.Signal) {
	ctx, cancel := context.WithCancel(parent)
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	var first atomic.Value
	go func() {
		select {
		case sig := <-ch:
			first.Store(sig)
			cancel()
		case <-ctx.Done():
			return // stopped
		}
		sig := <-ch
		fmt.Fprintf(stderr, "thv: second %s: exiting now, without cleaning up (the next thv removes what is left)\n", signalName(sig))
		exit(128 + signalNumber(sig))
	}()
	return ctx, func() {
			signal.Stop(ch)
			cancel()
		}, func() os.Signal {
			sig, _ := first.Load().(os.Signal)
			return sig
		}
}

func signalName(sig os.Signal) string {
	if sig == os.Interrupt {
		return "interrupt (SIGINT)"
	}
	return "SIGTERM"
}

func signalNumber(sig os.Signal) int {
	if s, ok := sig.(syscall.Signal); ok {
		return int(s)
	}
	return 2
}
