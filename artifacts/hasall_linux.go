package artifacts

import (
	"bytes"
	"encoding/binary"
	"slices"

	"golang.org/x/sys/unix"
)

// hasAllListFactor: hasRun reads a fan-out directory whole when it holds
// at most this many entries per object asked for (tests set it to take
// either way).
var hasAllListFactor int64 = 4

// hasAllBuf is one worker's getdents(2) buffer, reused for every directory
// it reads (a few hundred names per call).
const hasAllBuf = 32 << 10

// hasRun reports whether every object of run, all in one fan-out
// directory, is a regular file there. The directory is opened once
// (confined); then, if the objects asked for are a fair part of what it
// holds (its size, about 64 bytes per entry on ext4, says how much), it is
// read whole with getdents(2) into buf, each entry's type from the listing
// (an entry whose type the file system does not report is looked up as
// below); otherwise each name is looked up with fstatat(2),
// AT_SYMLINK_NOFOLLOW (a 64-hex name: nothing to follow). Either way a
// link is never a present object. run is sorted in place.
func (s *Store) hasRun(run []Digest, buf []byte) bool {
	f, err := s.dir.openDir(objectsDir + sep + run[0].Hex()[:2])
	if err != nil {
		return false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return false
	}
	fd := int(f.Fd())
	if fi.Size()/64 > hasAllListFactor*int64(len(run)) {
		for _, d := range run {
			if !isRegularAt(fd, d.Hex()) {
				return false
			}
		}
		return true
	}
	// Read the directory whole, without an allocation per entry: each
	// regular file whose name is an object of run marks it found.
	slices.SortFunc(run, func(a, b Digest) int { return bytes.Compare(a[:], b[:]) })
	run = slices.Compact(run)
	found := make([]bool, len(run))
	left := len(run)
	for left > 0 {
		n, err := ignoringEINTRN(func() (int, error) { return unix.Getdents(fd, buf) })
		if err != nil {
			return false
		}
		if n == 0 {
			break
		}
		for b := buf[:n]; len(b) > 0; {
			// struct linux_dirent64: ino u64, off s64, reclen u16,
			// type u8, then the NUL-terminated name.
			if len(b) < 19 {
				return false
			}
			reclen := int(binary.NativeEndian.Uint16(b[16:]))
			if reclen < 19 || reclen > len(b) {
				return false
			}
			typ, name := b[18], b[19:reclen]
			b = b[reclen:]
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			var d Digest
			if !decodeLowerHex(d[:], name) {
				continue
			}
			i, ok := slices.BinarySearchFunc(run, d, func(a, b Digest) int { return bytes.Compare(a[:], b[:]) })
			if !ok || found[i] {
				continue
			}
			switch typ {
			case unix.DT_REG:
			case unix.DT_UNKNOWN: // the file system does not say: look
				if !isRegularAt(fd, string(name)) {
					return false
				}
			default:
				return false // a directory, link, … under an object's name
			}
			found[i] = true
			left--
		}
	}
	return left == 0
}

// isRegularAt reports whether name in the directory fd is a regular file,
// without following a link.
func isRegularAt(fd int, name string) bool {
	var st unix.Stat_t
	err := ignoringEINTR(func() error { return unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) })
	return err == nil && st.Mode&unix.S_IFMT == unix.S_IFREG
}
