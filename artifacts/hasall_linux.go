package artifacts

import (
	"encoding/hex"

	"golang.org/x/sys/unix"
)

// hasAllListFactor: hasRun reads a fan-out directory whole when it holds
// at most this many entries per object asked for (tests set it to take
// either way).
var hasAllListFactor int64 = 4

// hasRun reports whether every object of run, all in one fan-out
// directory, is a regular file there. The directory is opened once
// (confined); then, if the objects asked for are a fair part of what it
// holds (its size, about 64 bytes per entry on ext4, says how much), it is
// read whole, one getdents(2) per few hundred names, each entry's type
// from the listing; otherwise each name is looked up with fstatat(2),
// AT_SYMLINK_NOFOLLOW (a 64-hex name: nothing to follow). Either way a
// link is never a present object.
func (s *Store) hasRun(run []Digest) bool {
	h := run[0].Hex()
	f, err := s.dir.openDir(objectsDir + sep + h[:2])
	if err != nil {
		return false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return false
	}
	if fi.Size()/64 <= hasAllListFactor*int64(len(run)) {
		entries, err := f.ReadDir(-1)
		if err != nil {
			return false
		}
		regular := make(map[string]bool, len(entries))
		for _, e := range entries {
			if e.Type().IsRegular() {
				regular[e.Name()] = true
			}
		}
		var name [64]byte
		for _, d := range run {
			hex.Encode(name[:], d[:])
			if !regular[string(name[:])] { // no allocation for the lookup
				return false
			}
		}
		return true
	}
	fd := int(f.Fd())
	var st unix.Stat_t
	for _, d := range run {
		err := ignoringEINTR(func() error { return unix.Fstatat(fd, d.Hex(), &st, unix.AT_SYMLINK_NOFOLLOW) })
		if err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
			return false
		}
	}
	return true
}
