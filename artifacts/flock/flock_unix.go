//go:build unix

package flock

import (
	"errors"
	"os"
	"syscall"
)

// Supported: flock(2) is real here.
const Supported = true

var errWouldBlock = syscall.EWOULDBLOCK

func acquire(f *os.File, exclusive, wait bool) error {
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	if !wait {
		how |= syscall.LOCK_NB
	}
	err := call(f, how)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return errWouldBlock
	}
	return err
}

func release(f *os.File) error { return call(f, syscall.LOCK_UN) }

// call is flock(2), retried on EINTR.
func call(f *os.File, how int) error {
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}
