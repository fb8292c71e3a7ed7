//go:build !linux

package bundle

import (
	"testing"

	"thv/internal/testenv"
)

// mountTmpfs: a small file system to fill is mounted on Linux only.
func mountTmpfs(t *testing.T, opts string, _ ...uintptr) string {
	t.Helper()
	testenv.Missing(t, "a tmpfs needs Linux")
	return ""
}
