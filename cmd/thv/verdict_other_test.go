//go:build !linux

package main

import (
	"testing"

	"thv/internal/testenv"
)

// readOnlyDir needs Linux's tmpfs.
func readOnlyDir(t *testing.T) string {
	testenv.Missing(t, "a read-only tmpfs needs Linux")
	return ""
}
