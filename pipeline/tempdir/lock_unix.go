//go:build unix

package tempdir

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

const oNoFollow = syscall.O_NOFOLLOW

// canLock: flock works here, and Sweep can tell dead directories.
const canLock = true

// tryLock takes an exclusive flock on f without waiting; false if another
// open file holds it (in this process or another).
func tryLock(f *os.File) (bool, error) {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, syscall.EWOULDBLOCK):
			return false, nil
		case !errors.Is(err, syscall.EINTR):
			return false, err
		}
	}
}

// ownedByMe reports whether fi belongs to this process's effective user:
// another user's directories are theirs to sweep.
func ownedByMe(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Geteuid()
}
