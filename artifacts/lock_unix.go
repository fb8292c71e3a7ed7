//go:build unix

package artifacts

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// lockTemp takes an exclusive flock on a temp file for as long as it is open.
// The kernel drops the lock when the writer dies, however it dies, which is
// how GC tells an abandoned temp file from one being written. flock locks
// belong to the open file description, so they also exclude another open of
// the same file within this process (unlike fcntl locks).
func lockTemp(f *os.File) error {
	return flock(f, syscall.LOCK_EX)
}

// flock is flock(2), retried on EINTR.
func flock(f *os.File, how int) error {
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// flockSupported reports whether the store lock and temp-file locks are real
// (flock(2)); elsewhere they are no-ops.
const flockSupported = true

// lockStore takes the store lock on f, shared or exclusive, without
// waiting: errWouldBlock if another open file description holds a
// conflicting lock.
func lockStore(f *os.File, exclusive bool) error {
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	err := flock(f, how|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return errWouldBlock
	}
	return err
}

func unlockStore(f *os.File) error { return flock(f, syscall.LOCK_UN) }

// openNoFollow opens path for reading, failing if its last component is a
// symbolic link (ELOOP on Linux, EMLINK on some BSDs): the store never
// creates links and never follows one that someone else put there.
// O_NONBLOCK keeps a FIFO put in a file's place from blocking the open (it
// has no effect on regular files); callers then find it is not a regular
// file.
func openNoFollow(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
}

// removeIfAbandoned removes the temp file at path (whose Lstat is fi) if no
// writer holds its lock; with remove false it only reports whether it would.
// It never follows a symbolic link. A writer that created the file but has
// not locked it yet loses it; its rename then fails with ENOENT and it
// starts over with a new temp file (see writeAtomic), so this race costs a
// retry, never a wrong object.
func removeIfAbandoned(path string, fi fs.FileInfo, remove bool) (bool, error) {
	f, err := openNoFollow(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	cur, err := f.Stat()
	if err != nil {
		return false, err
	}
	if !cur.Mode().IsRegular() || !os.SameFile(cur, fi) {
		return false, nil // replaced since listed: not what we looked at
	}
	err = flock(f, syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return false, nil // a live writer
	}
	if err != nil {
		return false, err
	}
	if !remove {
		return true, nil
	}
	if err := os.Remove(path); err != nil {
		return false, err
	}
	return true, nil
}

func isReadOnlyErr(err error) bool {
	return errors.Is(err, syscall.EROFS) || errors.Is(err, fs.ErrPermission)
}

func isNoSpaceErr(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}
