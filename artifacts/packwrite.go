package artifacts

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// packWriter is a Store handle's pack: the one it appends to, held
// flock'ed (exclusively) while it is the handle's, so that no other writer
// appends to it and no repair touches it. A handle takes a pack no writer
// holds that has room (adopt), or starts one (create); when the pack
// reaches packLimit it writes its index and starts another.
type packWriter struct {
	f      *os.File // read-write, locked
	name   packName
	size   int64 // its end: where the next record goes
	recs   []packRec
	kills  []packKill
	sealed int64 // what its index file covers (0: no index written)
}

// packAppended is implemented by a test layer under the store (FaultFS) that
// records the records appended to packs since the last barrier.
type packAppended interface {
	packAppended(rel string, rec packRec)
}

// appendRecord appends a record of type typ with id and payload data to the
// handle's pack, and returns it. Objects and entries are compressed when
// that saves space. A failed write leaves the pack as it was (its tail cut
// back), or, if even that fails, the pack is given up and the next append
// starts another.
func (s *Store) appendRecord(typ byte, id [32]byte, data []byte) (packRec, error) {
	stored, enc := data, encRaw
	if typ != recKill {
		stored, enc = encodePayload(data)
	}
	return s.appendStored(recHeader{typ: typ, enc: enc, stored: uint32(len(stored)), size: uint32(len(data)), id: id}, stored)
}

// appendStored appends a record of header h whose payload is stored as
// stored (GC copies records so, without decoding them again).
func (s *Store) appendStored(h recHeader, stored []byte) (packRec, error) {
	if s.untrusted {
		return packRec{}, s.errUntrusted()
	}
	if s.scratch {
		return packRec{}, errors.New("a scratch store is written loose")
	}
	typ, id := h.typ, h.id
	buf := make([]byte, recHeaderSize+len(stored))
	h.put(buf)
	copy(buf[recHeaderSize:], stored)

	s.pwMu.Lock()
	defer s.pwMu.Unlock()
	pw, err := s.packForWrite(int64(len(buf)))
	if err != nil {
		return packRec{}, s.writeErr(err)
	}
	// The marker before the write (durable.go); not held across
	// packForWrite, whose writes take it themselves.
	end, err := s.beginWrite()
	if err != nil {
		return packRec{}, s.writeErr(err)
	}
	defer end()
	rec := packRec{id: id, off: pw.size, stored: h.stored, size: h.size, typ: typ, enc: h.enc}
	if _, err := pw.f.WriteAt(buf, pw.size); err != nil {
		if terr := pw.f.Truncate(pw.size); terr != nil {
			s.dropPackWriter() // its tail is torn: a repair sets it aside
		}
		return packRec{}, s.writeErr(fmt.Errorf("appending to %s: %w", s.dir.abs(packRel(pw.name)), err))
	}
	if !s.noSync() {
		if err := pw.f.Sync(); err != nil {
			return packRec{}, fmt.Errorf("syncing %s: %w", s.dir.abs(packRel(pw.name)), err)
		}
	}
	pw.size = rec.end()
	var kill killTarget
	if typ == recKill {
		kill, _ = parseKill(stored)
		pw.kills = append(pw.kills, packKill{id: id, off: rec.off, target: kill})
	} else {
		pw.recs = append(pw.recs, rec)
	}
	s.pv.noteAppend(pw, rec, kill)
	if r, ok := s.dir.(packAppended); ok {
		r.packAppended(packRel(pw.name), rec)
	}
	return rec, nil
}

// noteAppend enters a record the handle itself appended into its view.
func (v *packView) noteAppend(pw *packWriter, rec packRec, kill killTarget) {
	v.mu.Lock()
	defer v.mu.Unlock()
	pf := v.packs[pw.name]
	if pf == nil {
		return // not open for reading (cannot happen: packForWrite adds it)
	}
	if rec.off != pf.scanned {
		// Not where the view has scanned to (an index read meanwhile,
		// say): the next refresh scans it.
		return
	}
	if rec.typ == recKill {
		pf.kills = append(pf.kills, packKill{id: rec.id, off: rec.off, target: kill})
		if v.dead == nil {
			v.dead = map[deadKey]bool{}
		}
		v.dead[deadKey{kill.pack, kill.off, rec.id}] = true
	} else {
		pf.addTail(rec)
	}
	pf.scanned = rec.end()
	pf.size = pf.scanned
}

// packForWrite returns the handle's pack, with room for n more bytes
// (starting another if not). s.pwMu is held.
func (s *Store) packForWrite(n int64) (*packWriter, error) {
	if pw := s.pw; pw != nil {
		if pw.size+n <= packLimit || pw.size == int64(packHeaderSize) {
			return pw, nil
		}
		if err := s.sealPack(pw); err != nil {
			return nil, err
		}
		s.dropPackWriter()
	}
	if !s.noAdopt {
		if pw := s.adoptPack(); pw != nil {
			s.pw = pw
			return pw, nil
		}
	}
	pw, err := s.createPack()
	if err != nil {
		return nil, err
	}
	s.pw = pw
	return pw, nil
}

// dropPackWriter releases the handle's pack (its lock; the file stays).
func (s *Store) dropPackWriter() {
	if s.pw != nil {
		s.pw.f.Close()
		s.pw = nil
	}
}

// createPack starts a new pack: written and locked in tmp/, then renamed
// into packs/, so that it is locked whenever it is there to be seen.
func (s *Store) createPack() (*packWriter, error) {
	// A store of version 1 read by an older build would not see packs:
	// that build must refuse it from now on.
	if err := s.upgradeVersion(); err != nil {
		return nil, err
	}
	end, err := s.beginWrite()
	if err != nil {
		return nil, err
	}
	defer end()
	if err := s.ensureDir(packsDir); err != nil {
		return nil, err
	}
	a := s.atomic()
	for attempt := 0; ; attempt++ {
		name := newPackName()
		f, tmp, err := a.createTemp(name.String() + packExt)
		if err != nil {
			return nil, err
		}
		fail := func(err error) (*packWriter, error) {
			f.Close()
			s.dir.remove(tmp)
			return nil, err
		}
		if err := lockTemp(f); err != nil {
			return fail(err)
		}
		var h [packHeaderSize]byte
		copy(h[:], packMagic)
		copy(h[len(packMagic):], name[:])
		if _, err := f.Write(h[:]); err != nil {
			return fail(err)
		}
		// Writable by its owner: a pack is appended to by whichever
		// writer holds it next (adoptPack).
		if err := f.Chmod(0o644); err != nil {
			return fail(err)
		}
		if !s.noSync() {
			if err := f.Sync(); err != nil {
				return fail(err)
			}
		}
		if err := s.dir.rename(tmp, packRel(name)); err != nil {
			f.Close()
			if errors.Is(err, fs.ErrNotExist) && attempt < 3 {
				continue // a sweeper took the temp file before it was locked
			}
			s.dir.remove(tmp)
			return nil, err
		}
		if !s.noSync() {
			if err := syncDir(s.dir, packsDir); err != nil {
				f.Close()
				return nil, err
			}
		}
		pw := &packWriter{f: f, name: name, size: int64(packHeaderSize)}
		s.pv.addOwn(s, pw)
		return pw, nil
	}
}

// addOwn makes the view know the handle's new pack.
func (v *packView) addOwn(s *Store, pw *packWriter) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.packs == nil {
		v.packs = map[packName]*packFile{}
	}
	if v.packs[pw.name] == nil {
		if pf := s.openPackFile(pw.name); pf != nil {
			v.packs[pw.name] = pf
		}
	}
}

// adoptPack takes a pack that no writer holds and that has room, to
// append to it: fewer, fuller packs. Its records past its index are
// scanned; bytes there that are no whole record (a writer killed in the
// middle of one) are set aside first (repairTail). It returns nil if there
// is none to take.
func (s *Store) adoptPack() *packWriter {
	s.refreshPacks()
	v := s.pv
	v.mu.RLock()
	var cands []*packFile
	for _, pf := range v.packs {
		if pf.size < packLimit*3/4 {
			cands = append(cands, pf)
		}
	}
	v.mu.RUnlock()
	// The fullest first.
	for len(cands) > 0 {
		best := 0
		for i, pf := range cands {
			if pf.size > cands[best].size {
				best = i
			}
		}
		pf := cands[best]
		cands = append(cands[:best], cands[best+1:]...)
		if pw := s.takePack(pf.name); pw != nil {
			return pw
		}
	}
	return nil
}

// takePack opens pack n for writing if no writer holds it, repairs its
// tail, and returns it as the handle's writer (nil if it cannot).
func (s *Store) takePack(n packName) *packWriter {
	f, err := s.dir.open(packRel(n), os.O_RDWR|oNonblock, 0)
	if err != nil {
		return nil
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || linkCount(fi) != 1 {
		f.Close()
		return nil
	}
	if ok, err := tempAbandoned(f, fi); !ok || err != nil {
		f.Close()
		return nil // its writer lives
	}
	pw, err := s.loadPackWriter(f, n)
	if err != nil {
		f.Close()
		return nil
	}
	return pw
}

// loadPackWriter reads the records of pack n, open read-write and locked
// as f, sets aside a torn tail (repairTail), and returns it as a writer.
func (s *Store) loadPackWriter(f *os.File, n packName) (*packWriter, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	var h [packHeaderSize]byte
	if _, err := f.ReadAt(h[:], 0); err != nil || string(h[:len(packMagic)]) != packMagic || string(h[len(packMagic):]) != string(n[:]) {
		return nil, errors.New("not a pack")
	}
	pw := &packWriter{f: f, name: n, size: fi.Size()}
	from := int64(packHeaderSize)
	if ix, _, err := s.readIdx(n, fi.Size(), true); err == nil && ix.verify() == nil {
		ix.all(func(r packRec) { pw.recs = append(pw.recs, r) })
		pw.kills = append(pw.kills, ix.kills...)
		from, pw.sealed = ix.covered, ix.covered
	}
	sc := packScanner{f: f, off: from, size: fi.Size()}
	for {
		r, kill, err := sc.next()
		if err == nil {
			if r.typ == recKill {
				pw.kills = append(pw.kills, packKill{id: r.id, off: r.off, target: kill})
			} else {
				pw.recs = append(pw.recs, r)
			}
			continue
		}
		if err != io.EOF {
			if err := s.repairTail(pw, sc.off, err); err != nil {
				return nil, err
			}
		}
		break
	}
	if err := s.sealPack(pw); err != nil {
		return nil, err
	}
	s.refreshPacks()
	return pw, nil
}

// sealPack writes pw's index, covering every record written so far (at
// the barrier, when the pack is full, and when a repair changes it). In a
// store with a barrier the index is made durable by it, like the records.
func (s *Store) sealPack(pw *packWriter) error {
	if pw.sealed == pw.size {
		return nil
	}
	data := encodeIdx(pw.name, pw.size, pw.recs, pw.kills)
	if err := s.writeAtomic(idxRel(pw.name), data); err != nil {
		return fmt.Errorf("writing the index of %s: %w", s.dir.abs(packRel(pw.name)), err)
	}
	pw.sealed = pw.size
	return nil
}

// sealOwnPack writes the index of the handle's pack if records were
// appended since the last (Sync).
func (s *Store) sealOwnPack() error {
	s.pwMu.Lock()
	defer s.pwMu.Unlock()
	if s.pw == nil {
		return nil
	}
	return s.sealPack(s.pw)
}
