//go:build !unix

package main

import (
	"fmt"
	"runtime"
)

// limitAddressSpace: without setrlimit(2) no ceiling can be set, and a
// verifier's worker must not run believing it has one.
func limitAddressSpace(int64) error {
	return fmt.Errorf("no address-space limit on %s: run the worker without --max-memory", runtime.GOOS)
}
