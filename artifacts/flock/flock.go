// Package flock is THV's one file-locking mechanism: flock(2) on an open
// file, shared or exclusive, waiting or not, retried when a signal
// interrupts it. A flock belongs to the open file description: the kernel
// drops it when the file is closed or its process dies, however it dies,
// and it excludes another open of the same file in the same process too
// (unlike fcntl's locks). The store's pass guard, its writers' temp files,
// the owner marks of THV's temp directories and the Slurm executor's
// claims on job-array elements are all taken with it.
//
// Where flock(2) does not exist (Supported is false), Acquire and
// TryAcquire take nothing and succeed: each user says what that means for
// it.
package flock

import "os"

// Acquire takes a flock on f, shared or exclusive, waiting for it.
func Acquire(f *os.File, exclusive bool) error { return acquire(f, exclusive, true) }

// TryAcquire takes a flock on f, shared or exclusive, without waiting:
// false if another open file description holds a conflicting one.
func TryAcquire(f *os.File, exclusive bool) (bool, error) {
	err := acquire(f, exclusive, false)
	if err == errWouldBlock {
		return false, nil
	}
	return err == nil, err
}

// Release drops the flock f holds (closing f drops it too).
func Release(f *os.File) error { return release(f) }
