//go:build unix

package artifacts

import (
	"errors"
	"os"
	"syscall"
	"time"
)

// lockTemp takes an exclusive flock on a temp file for as long as it is open.
// The kernel drops the lock when the writer dies, however it dies, which is
// how GC tells an abandoned temp file from one being written. flock locks
// belong to the open file description, so they also exclude another open of
// the same file within this process (unlike fcntl locks).
func lockTemp(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// removeIfAbandoned removes the temp file at path if no writer holds its
// lock. A writer that created the file but has not locked it yet loses it;
// its rename then fails with ENOENT and it starts over with a new temp file
// (see writeAtomic), so this race costs a retry, never a wrong object.
func removeIfAbandoned(path string, _ time.Time) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return false, nil // a live writer
	}
	if err != nil {
		return false, err
	}
	if err := os.Remove(path); err != nil {
		return false, err
	}
	return true, nil
}
