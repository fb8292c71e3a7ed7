package main

import (
	"fmt"
	"os"
	"runtime/pprof"

	"github.com/spf13/cobra"
)

// addProfileFlag registers the hidden --cpuprofile FILE flag: a CPU profile
// of the whole command (go tool pprof thv FILE), for docs/performance.md.
// The returned stop writes it; it is a no-op when the flag is not given.
func addProfileFlag(root *cobra.Command) (start func() error, stop func()) {
	var path string
	root.PersistentFlags().StringVar(&path, "cpuprofile", "", "write a CPU profile of the command to this file")
	_ = root.PersistentFlags().MarkHidden("cpuprofile")
	var f *os.File
	start = func() error {
		if path == "" {
			return nil
		}
		var err error
		if f, err = os.Create(path); err != nil {
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return fmt.Errorf("--cpuprofile %s: %w", path, err)
		}
		return nil
	}
	stop = func() {
		if f == nil {
			return
		}
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "thv: --cpuprofile:", err)
		}
		f = nil
	}
	return start, stop
}
