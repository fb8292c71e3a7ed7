//go:build darwin || freebsd

package bundle

import (
	"errors"
	"syscall"
)

// statFS describes the file system holding dir; ok is false if unknown.
func statFS(dir string) (s fsSpace, ok bool) {
	var st syscall.Statfs_t
	// The counts are in f_bsize blocks.
	if err := syscall.Statfs(dir, &st); err != nil || st.Bsize <= 0 {
		return s, false
	}
	b := int64(st.Bsize)
	return fsSpace{avail: int64(st.Bavail) * b, size: int64(st.Blocks) * b, block: b}, true
}

func isQuotaErr(err error) bool { return errors.Is(err, syscall.EDQUOT) }
