//go:build !unix

package tempdir

import (
	"io/fs"
)

const oNoFollow = 0

func ownedByMe(fs.FileInfo) bool { return false }
