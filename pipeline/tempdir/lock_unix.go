//go:build unix

package tempdir

import (
	"io/fs"
	"os"
	"syscall"
)

const oNoFollow = syscall.O_NOFOLLOW

// ownedByMe reports whether fi belongs to this process's effective user:
// another user's directories are theirs to sweep.
func ownedByMe(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Geteuid()
}
