package artifacts

import (
	"io/fs"
	"syscall"
)

// fileIDOf identifies the version of the file fi describes.
func fileIDOf(fi fs.FileInfo) fileID {
	id := fileID{size: uint64(fi.Size())}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		id.ino = uint64(st.Ino)
		id.ctime = st.Ctim.Nano()
	}
	return id
}

// keepDirOpen: a directory descriptor may be listed again from its start
// (packView.listPacks); once the directory is removed, listing it fails
// (the VFS's iterate_dir gives ENOENT for a dead directory), and it is
// opened again.
const keepDirOpen = true
