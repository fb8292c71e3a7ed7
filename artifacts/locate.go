package artifacts

import (
	"errors"
	"fmt"
	"io/fs"
)

// Location is where an object's bytes lie on disk: a loose file, or a
// record of a pack.
type Location struct {
	// Path is the file: objects/<2 hex>/<64 hex>, or packs/<16 hex>.pack.
	Path string
	// Offset and Length delimit the stored bytes in Path: the whole file
	// for a loose object; a record's payload, perhaps compressed
	// (Compressed), for a packed one.
	Offset, Length int64
	Packed         bool
	Compressed     bool
}

// Locate returns where object d lies (the first live packed copy, else the
// loose file), without reading or checking it: for tools and tests that
// look at the bytes on disk. Readers go through Get, which verifies.
func (s *Store) Locate(d Digest) (Location, bool) {
	if locs := s.findPacked(d, recObject); len(locs) > 0 {
		l := locs[0]
		return Location{Path: s.dir.abs(packRel(l.pf.name)), Offset: l.rec.off + recHeaderSize, Length: int64(l.rec.stored), Packed: true, Compressed: l.rec.enc != encRaw}, true
	}
	fi, err := s.dir.lstat(objectRel(d))
	if err != nil || !fi.Mode().IsRegular() {
		return Location{}, false
	}
	return Location{Path: s.ObjectPath(d), Length: fi.Size()}, true
}

// LocateEntry is Locate of the index entry for k: its loose file, else its
// packed record (the last live one, which GetEntry reads first).
func (s *Store) LocateEntry(k Key) (Location, bool) {
	if fi, err := s.dir.lstat(entryRel(k)); err == nil && fi.Mode().IsRegular() {
		return Location{Path: s.entryPath(k), Length: fi.Size()}, true
	}
	if locs := s.findPacked(k, recEntry); len(locs) > 0 {
		l := locs[len(locs)-1]
		return Location{Path: s.dir.abs(packRel(l.pf.name)), Offset: l.rec.off + recHeaderSize, Length: int64(l.rec.stored), Packed: true, Compressed: l.rec.enc != encRaw}, true
	}
	return Location{}, false
}

// Remove makes object d absent, as deleting its file did in a store of
// loose files: every live packed copy is killed (a kill record, no
// evidence: nothing is wrong with it) and the loose file removed. GC
// removes what no task needs; Remove is for tests and repairs by hand
// that need one object gone. Removing an absent object is no error.
func (s *Store) Remove(d Digest) error {
	if s.untrusted {
		return fmt.Errorf("artifacts: remove %v: %w", d, s.errUntrusted())
	}
	for _, l := range s.findPacked(d, recObject) {
		if _, err := s.appendRecord(recKill, l.rec.id, l.target().payload()); err != nil {
			return fmt.Errorf("artifacts: remove %v: %w", d, err)
		}
	}
	if err := s.dir.remove(objectRel(d)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("artifacts: remove %v: %w", d, s.writeErr(err))
	}
	return nil
}
