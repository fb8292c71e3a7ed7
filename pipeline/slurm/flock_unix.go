//go:build unix

package slurm

import (
	"errors"
	"os"
	"syscall"
)

// flockNB takes an exclusive flock on f without waiting; false if another
// open file holds it.
func flockNB(f *os.File) (bool, error) {
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
