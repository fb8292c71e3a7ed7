package artifacts

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
)

// A DirStamp is what the stat of one fan-out directory (objects/xx) says
// of its entries: which directory it is (device, inode) and when its
// status last changed (ctime, in nanoseconds). Creating, removing or
// renaming an entry in a directory changes its ctime, and no system call
// sets a ctime to anything but the present time. So a stamp taken before a
// HasAll that found a set of objects present, and equal to the
// directory's stamp later, shows that the directory's entries are those it
// had then (each object still a regular file under its name), without
// reading it again. The zero stamp is unknown: it matches nothing.
type DirStamp struct {
	Dev, Ino uint64
	Ctime    int64
}

// DirStamps are what a presence check of many objects (HasAll) can later
// take for granted: the stamps of the 256 fan-out directories of the loose
// objects, by an object digest's first byte, and the stamp of the packs
// (PackStamp). A fan-out directory that does not exist has absentStamp,
// which holds as long as it still does not.
type DirStamps struct {
	Fanout [256]DirStamp
	Packs  PackStamp
}

// absentStamp is the stamp of a fan-out directory that does not exist (a
// store whose objects are packed has few).
var absentStamp = DirStamp{Ctime: -1}

// Gained reports whether st has a stamp that since lacks: a directory
// stamped that was not, or with another stamp, or the packs' stamp.
func (st *DirStamps) Gained(since *DirStamps) bool {
	for i, t := range st.Fanout {
		if t != (DirStamp{}) && t != since.Fanout[i] {
			return true
		}
	}
	return st.Packs != (PackStamp{}) && st.Packs != since.Packs
}

// stampMargin is how recent a directory's ctime may be, in the file
// system's own clock, for its stamp to be trusted. A change that falls in
// the same tick of that clock as the ctime a stamp recorded leaves the
// ctime as it was (ext4 advances it by the kernel's coarse clock, some
// file systems by the second), so a stamp is only kept when the
// directory's last change is older than this when the stamp is taken (as
// git treats an index entry modified in the index's own second as racy).
var stampMargin int64 = 3e9

// StampDirs returns the stamps of the fan-out directories and of the
// packs as they are now, for HasAllSince. A directory whose last change is
// within stampMargin of the present time of the store's file system (the
// ctime of a file made in tmp/ to read it) has the zero stamp; one that is
// missing, absentStamp. The caller must take the stamps before the check
// they are to stand for.
func (s *Store) StampDirs() (*DirStamps, error) {
	var st DirStamps
	now, ok, err := s.fsNow()
	if err != nil || !ok {
		return &st, err // no change times here: every directory is read
	}
	st.Packs = s.stampPacks()
	for i := range st.Fanout {
		fi, err := s.dir.lstat(fanoutRel(byte(i)))
		if errors.Is(err, fs.ErrNotExist) {
			st.Fanout[i] = absentStamp
			continue
		}
		if err != nil {
			return nil, err
		}
		st.Fanout[i] = settledStamp(fi, now)
	}
	return &st, nil
}

// settledStamp returns the stamp of the directory fi, stat'ed after the
// file system's present time now was read, or zero if its last change is
// within stampMargin of now (or it is no directory).
func settledStamp(fi fs.FileInfo, now int64) DirStamp {
	if t, ok := dirStamp(fi); ok && fi.IsDir() && t.Ctime < now-stampMargin {
		return t
	}
	return DirStamp{}
}

// fsNow returns the present time of the store's file system, in
// nanoseconds: the ctime of a file it makes in tmp/ and removes.
// ok is false where stamps are not taken (dirStamp).
func (s *Store) fsNow() (now int64, ok bool, err error) {
	f, rel, err := s.atomic().createTemp("clock")
	if err != nil {
		return 0, false, err
	}
	fi, err := f.Stat()
	f.Close()
	if rerr := s.dir.remove(rel); err == nil {
		err = rerr
	}
	if err != nil {
		return 0, false, err
	}
	t, ok := dirStamp(fi)
	return t.Ctime, ok, nil
}

// dirStampSize is the size of one stamp in MarshalBinary's form.
const dirStampSize = 24

// MarshalBinary lays the stamps out as 256 × (dev, ino, ctime), each
// eight bytes, little-endian, then the packs' stamp.
func (st *DirStamps) MarshalBinary() ([]byte, error) {
	b := make([]byte, 0, len(st.Fanout)*dirStampSize+len(st.Packs))
	for _, t := range st.Fanout {
		b = binary.LittleEndian.AppendUint64(b, t.Dev)
		b = binary.LittleEndian.AppendUint64(b, t.Ino)
		b = binary.LittleEndian.AppendUint64(b, uint64(t.Ctime))
	}
	return append(b, st.Packs[:]...), nil
}

// UnmarshalBinary reads MarshalBinary's form.
func (st *DirStamps) UnmarshalBinary(b []byte) error {
	want := len(st.Fanout)*dirStampSize + len(st.Packs)
	if len(b) != want {
		return fmt.Errorf("artifacts: directory stamps: %d bytes, want %d", len(b), want)
	}
	for i := range st.Fanout {
		r := b[i*dirStampSize:]
		st.Fanout[i] = DirStamp{
			Dev:   binary.LittleEndian.Uint64(r),
			Ino:   binary.LittleEndian.Uint64(r[8:]),
			Ctime: int64(binary.LittleEndian.Uint64(r[16:])),
		}
	}
	copy(st.Packs[:], b[len(st.Fanout)*dirStampSize:])
	return nil
}
