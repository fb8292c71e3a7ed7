package main

import (
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"runtime/trace"

	"github.com/spf13/cobra"
)

// addProfileFlag registers the hidden --cpuprofile FILE and --trace FILE
// flags, for docs/performance.md: a CPU profile of the whole command (go
// tool pprof thv FILE), and an execution trace (go tool trace FILE) in
// which the steps of a pass are regions (thv/pipeline's "lock read",
// "no-op checks", …), to see which of them is on the critical path. The
// returned stop writes both; it is a no-op when neither flag is given.
func addProfileFlag(root *cobra.Command) (start func() error, stop func()) {
	var cpuPath, tracePath string
	root.PersistentFlags().StringVar(&cpuPath, "cpuprofile", "", "write a CPU profile of the command to this file")
	root.PersistentFlags().StringVar(&tracePath, "trace", "", "write an execution trace of the command to this file")
	_ = root.PersistentFlags().MarkHidden("cpuprofile")
	_ = root.PersistentFlags().MarkHidden("trace")
	var cpuFile, traceFile *os.File
	start = func() error {
		var err error
		if cpuPath != "" {
			if cpuFile, err = startWriter("--cpuprofile", cpuPath, pprof.StartCPUProfile); err != nil {
				return err
			}
		}
		if tracePath != "" {
			if traceFile, err = startWriter("--trace", tracePath, trace.Start); err != nil {
				return err
			}
		}
		return nil
	}
	stop = func() {
		if cpuFile != nil {
			pprof.StopCPUProfile()
			closeWriter("--cpuprofile", cpuFile)
			cpuFile = nil
		}
		if traceFile != nil {
			trace.Stop()
			closeWriter("--trace", traceFile)
			traceFile = nil
		}
	}
	return start, stop
}

// startWriter creates the file at path and starts the profile or trace
// that writes to it.
func startWriter(flag, path string, begin func(w io.Writer) error) (*os.File, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flag, err)
	}
	if err := begin(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s %s: %w", flag, path, err)
	}
	return f, nil
}

func closeWriter(flag string, f *os.File) {
	if err := f.Close(); err != nil {
		fmt.Fprintf(os.Stderr, "thv: %s: %v\n", flag, err)
	}
}
