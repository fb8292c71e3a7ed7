//go:build unix

package artifacts

import (
	"errors"
	"io/fs"
	"os"
	"syscall"

	"thv/artifacts/flock"
)

// lockTemp takes an exclusive flock on a temp file for as long as it is
// open. The kernel drops it when the writer dies, however it dies, which
// is how GC tells an abandoned temp file from one being written.
func lockTemp(f *os.File) error { return flock.Acquire(f, true) }

// flockSupported reports whether the store lock and temp-file locks are real
// (flock(2)); elsewhere they are no-ops.
const flockSupported = flock.Supported

// lockStore takes the store lock on f, shared or exclusive, without
// waiting: errWouldBlock if another open file description holds a
// conflicting lock.
func lockStore(f *os.File, exclusive bool) error {
	ok, err := flock.TryAcquire(f, exclusive)
	if err == nil && !ok {
		return errWouldBlock
	}
	return err
}

func unlockStore(f *os.File) error { return flock.Release(f) }

// oNonblock is added to every open for reading: it keeps a FIFO put in a
// file's place from blocking the open (it has no effect on regular files
// and directories); callers then find it is not a regular file.
const oNonblock = syscall.O_NONBLOCK

// tempAbandoned reports whether the temp file f (whose Lstat is fi) is
// abandoned, that is, whether no writer holds its lock: then the lock is
// ours until f is closed. A writer that created the file but has not
// locked it yet loses it; its rename then fails with ENOENT and it starts
// over with a new temp file (see writeAtomic), so this race costs a retry,
// never a wrong object.
func tempAbandoned(f *os.File, _ fs.FileInfo) (bool, error) {
	return flock.TryAcquire(f, true) // false: a live writer
}

// linkCount is the number of hard links of the file fi describes.
func linkCount(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}

func isReadOnlyErr(err error) bool {
	return errors.Is(err, syscall.EROFS) || errors.Is(err, fs.ErrPermission)
}

func isNoSpaceErr(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}
