//go:build !unix

package flock

import (
	"errors"
	"os"
)

// Supported: no flock(2) here; Acquire and TryAcquire take nothing.
const Supported = false

var errWouldBlock = errors.New("flock: would block")

func acquire(*os.File, bool, bool) error { return nil }

func release(*os.File) error { return nil }
