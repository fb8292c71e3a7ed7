package bundle

import (
	"errors"
	"syscall"
)

// statFS describes the file system holding dir; ok is false if unknown.
func statFS(dir string) (s fsSpace, ok bool) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return s, false
	}
	// The counts are in fragments (f_frsize), as df reads them; old
	// kernels leave it 0, meaning f_bsize.
	b := int64(st.Frsize)
	if b <= 0 {
		b = int64(st.Bsize)
	}
	if b <= 0 {
		return s, false
	}
	return fsSpace{avail: int64(st.Bavail) * b, size: int64(st.Blocks) * b, block: b}, true
}

func isQuotaErr(err error) bool { return errors.Is(err, syscall.EDQUOT) }
