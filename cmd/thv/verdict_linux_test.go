//go:build linux

package main

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"thv/internal/testenv"
)

// readOnlyDir mounts a read-only tmpfs for the test (root only: CI runs
// as root) and returns it; "" where it cannot, outside CI.
func readOnlyDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "ro")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", syscall.MS_RDONLY, "size=1m"); err != nil {
		testenv.Missing(t, "mounting a read-only tmpfs needs root: %v", err)
		return ""
	}
	t.Cleanup(func() { syscall.Unmount(dir, 0) })
	return dir
}
