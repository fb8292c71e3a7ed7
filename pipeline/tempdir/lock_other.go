//go:build !unix

package tempdir

import (
	"io/fs"
	"os"
)

const oNoFollow = 0

// canLock: without flock no directory can be told dead, and Sweep removes
// nothing.
const canLock = false

func tryLock(*os.File) (bool, error) { return true, nil }

func ownedByMe(fs.FileInfo) bool { return false }
