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

// oNonblock: no FIFOs to guard against here.
const oNonblock = 0

// tempAbandoned reports whether the temp file described by fi is old
// enough to be abandoned (no flock to ask its writer).
func tempAbandoned(_ *os.File, fi fs.FileInfo) (bool, error) {
	return time.Since(fi.ModTime()) >= staleTempAge, nil
}

// linkCount is not known here: every file counts as having one link.
func linkCount(fs.FileInfo) uint64 { return 1 }

func isReadOnlyErr(err error) bool {
	return errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS)
}

func isNoSpaceErr(err error) bool { return errors.Is(err, syscall.ENOSPC) }
