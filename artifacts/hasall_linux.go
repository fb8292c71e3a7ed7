package artifacts

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// hasAllListFactor: hasRun reads a fan-out directory whole when it holds
// at most this many entries per object asked for (tests set it to take
// either way).
var hasAllListFactor int64 = 4

// hasAllBuf is the size of one worker's getdents(2) buffer, reused for
// every directory it reads (a few hundred names per call); tests make it
// small, and hasAllNoTypes makes every entry's type unknown, as some file
// systems report it.
var (
	hasAllBuf     = 32 << 10
	hasAllNoTypes = false
)

// hasRun reports whether every object of run, all in one fan-out
// directory, is a regular file there. The directory is opened once
// (confined); then, if the objects asked for are a fair part of what it
// holds (its size, about 64 bytes per entry on ext4, says how much), it is
// read whole with getdents(2) into buf, each entry's type from the listing
// (an entry whose type the file system does not report is looked up as
// below); otherwise each name is looked up with fstatat(2),
// AT_SYMLINK_NOFOLLOW (a 64-hex name: nothing to follow). Either way a
// link is never a present object. run's repeats are dropped in place. If
// re is not nil, the directory's stamp is recorded there before it is
// read (HasAllRestamp).
func (s *Store) hasRun(run []Digest, buf []byte, re *restamp) bool {
	f, err := s.dir.openDir(fanoutRel(run[0][0]))
	if err != nil {
		return false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return false
	}
	if re != nil {
		re.into.Fanout[run[0][0]] = re.fresh(f)
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
	// regular file whose name is an object of run marks it found. The
	// names are looked up in a table of run (newDigestDir), not decoded
	// and searched for: a directory's listing is mostly what was asked.
	set := newDigestDir(run)
	found := make([]bool, len(set.ds))
	left := len(set.ds)
	err = readDirents(fd, buf, func(typ byte, name []byte) bool {
		i, ok := set.findName(name)
		if !ok || found[i] {
			return true
		}
		if !isRegularEntry(fd, typ, name) {
			left = -1 // a directory, link, … under an object's name
			return false
		}
		found[i] = true
		left--
		return left > 0
	})
	return err == nil && left == 0
}

// dropStamped returns runs without those whose fan-out directory's stamp
// is still since's (or that still does not exist, if its stamp is
// absentStamp). One fstatat(2) each, from objects/ opened once (confined;
// the directory itself is not followed if it is a link: a link's stamp is
// not a directory's), instead of an open, fstat and close each.
func (s *Store) dropStamped(runs [][]Digest, since *DirStamps) [][]Digest {
	f, err := s.dir.openDir(objectsDir)
	if err != nil {
		return runs // each is looked up, and found what it is
	}
	defer f.Close()
	fd := int(f.Fd())
	kept := runs[:0]
	for _, run := range runs {
		b := run[0][0]
		if want := since.Fanout[b]; want != (DirStamp{}) {
			var st unix.Stat_t
			name := fanoutRel(b)[len(objectsDir)+len(sep):]
			err := ignoringEINTR(func() error { return unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) })
			if want == absentStamp && errors.Is(err, unix.ENOENT) {
				continue
			}
			if err == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR &&
				(DirStamp{Dev: uint64(st.Dev), Ino: uint64(st.Ino), Ctime: st.Ctim.Nano()}) == want {
				continue
			}
		}
		kept = append(kept, run)
	}
	return kept
}

// readDirents reads the directory fd with getdents(2) into buf, calling fn
// with each entry's type (DT_*) and name until fn returns false or the
// directory ends.
func readDirents(fd int, buf []byte, fn func(typ byte, name []byte) bool) error {
	for {
		n, err := ignoringEINTRN(func() (int, error) { return unix.Getdents(fd, buf) })
		if err != nil || n == 0 {
			return err
		}
		for b := buf[:n]; len(b) > 0; {
			// struct linux_dirent64: ino u64, off s64, reclen u16,
			// type u8, then the NUL-terminated name.
			if len(b) < 19 {
				return errors.New("getdents: short record")
			}
			reclen := int(binary.NativeEndian.Uint16(b[16:]))
			if reclen < 19 || reclen > len(b) {
				return errors.New("getdents: bad record length")
			}
			typ, name := b[18], b[19:reclen]
			b = b[reclen:]
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			if hasAllNoTypes {
				typ = unix.DT_UNKNOWN
			}
			if !fn(typ, name) {
				return nil
			}
		}
	}
}

// isRegularEntry reports whether the entry name of the directory fd, of
// type typ as getdents(2) reports it, is a regular file; an unknown type
// (some file systems report none) is looked up.
func isRegularEntry(fd int, typ byte, name []byte) bool {
	switch typ {
	case unix.DT_REG:
		return true
	case unix.DT_UNKNOWN:
		return isRegularAt(fd, string(name))
	}
	return false
}

// listObjectDir appends to out the objects of the fan-out directory f:
// the regular files named by 64 hex digits.
func listObjectDir(f *os.File, buf []byte, out []Digest) ([]Digest, error) {
	fd := int(f.Fd())
	err := readDirents(fd, buf, func(typ byte, name []byte) bool {
		var d Digest
		if decodeLowerHex(d[:], name) && isRegularEntry(fd, typ, name) {
			out = append(out, d)
		}
		return true
	})
	return out, err
}

// isRegularAt reports whether name in the directory fd is a regular file,
// without following a link.
func isRegularAt(fd int, name string) bool {
	var st unix.Stat_t
	err := ignoringEINTR(func() error { return unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) })
	return err == nil && st.Mode&unix.S_IFMT == unix.S_IFREG
}
