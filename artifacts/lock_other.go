//go:build !unix

package artifacts

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
	"time"
)

// staleTempAge is how old a temp file must be before GC treats it as
// abandoned on systems without flock. No single write takes this long.
const staleTempAge = time.Hour

func lockTemp(*os.File) error { return nil }

// flockSupported is false: without flock(2) the store lock is a documented
// no-op (LockShared and LockExclusive always succeed across processes; they
// still exclude each other within one Store handle's process only as far as
// the in-process bookkeeping goes). Do not run gc while a repro runs there.
const flockSupported = false

func lockStore(*os.File, bool) error { return nil }

func unlockStore(*os.File) error { return nil }

func openNoFollow(path string) (*os.File, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return nil, &fs.PathError{Op: "open", Path: path, Err: errors.New("is a symbolic link")}
	}
	return os.Open(path)
}

func removeIfAbandoned(path string, fi fs.FileInfo, remove bool) (bool, error) {
	if time.Since(fi.ModTime()) < staleTempAge {
		return false, nil
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
	return errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS)
}

func isNoSpaceErr(err error) bool { return errors.Is(err, syscall.ENOSPC) }
