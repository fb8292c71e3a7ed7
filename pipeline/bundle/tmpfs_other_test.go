//go:build !linux

package bundle

import (
	"os"
	"testing"
)

// mountTmpfs: a small file system to fill is mounted on Linux only.
func mountTmpfs(t *testing.T, opts string, _ ...uintptr) string {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatal("a tmpfs needs Linux (CI=true)")
	}
	t.Skip("a tmpfs needs Linux")
	return ""
}
