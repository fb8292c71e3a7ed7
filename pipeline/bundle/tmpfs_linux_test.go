//go:build linux

package bundle

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"thv/internal/testenv"
)

// mountTmpfs mounts a tmpfs with the options (size=1m, nr_inodes=8, …)
// on a new directory and unmounts it when the test ends: a small file
// system that fills for real. It needs root; without it the test is
// skipped, or fails with CI=true (CI runs as root).
func mountTmpfs(t *testing.T, opts string, flags ...uintptr) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "fs")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var flag uintptr
	for _, f := range flags {
		flag |= f
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", flag, opts); err != nil {
		testenv.Missing(t, "mounting a tmpfs (%s) needs root: %v (the test needs a small file system; CI runs as root)", opts, err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, 0); err != nil {
			t.Errorf("unmounting %s: %v", dir, err)
		}
	})
	return dir
}
