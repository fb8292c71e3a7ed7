package artifacts

import (
	"io/fs"
	"syscall"
)

// dirStamp reads a stamp from fi's system data.
func dirStamp(fi fs.FileInfo) (DirStamp, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return DirStamp{}, false
	}
	return DirStamp{Dev: uint64(st.Dev), Ino: uint64(st.Ino), Ctime: st.Ctim.Nano()}, true
}
