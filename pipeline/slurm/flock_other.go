//go:build !unix

package slurm

import (
	"errors"
	"os"
)

func flockNB(*os.File) (bool, error) {
	return false, errors.New("slurm executor: needs flock (a unix system)")
}
