//go:build !linux

package artifacts

import "io/fs"

// fileIDOf identifies the version of the file fi describes: here by its
// size and modification time only (no inode is read).
func fileIDOf(fi fs.FileInfo) fileID {
	return fileID{size: uint64(fi.Size()), ctime: fi.ModTime().UnixNano()}
}

// keepDirOpen: here a directory is opened each time it is listed.
const keepDirOpen = false
