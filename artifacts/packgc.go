package artifacts

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"
)

// GC for the packs: the live records of packs that hold anything else (a
// record nobody keeps, a second copy, a killed record, a replaced entry)
// are copied into new packs and those packs removed, as restic's prune
// and git's repack do; small packs are merged on the way, and the loose
// files a kept object or entry has (an old store of the loose layout;
// small objects only) are packed too. Every record copied is read and
// checked first (a bad one is set aside, not copied). The new packs are
// made durable (the store's barrier) before anything is removed, so a GC
// killed at any point leaves every kept record somewhere: at worst twice,
// which the next GC mends. Packs that a writer holds are left alone.

// gcPlan is what GC does to the packs and the loose files.
type gcPlan struct {
	rewrite   []packName         // packs whose kept records are copied, then removed
	held      []*packWriter      // the packs GC holds (every pack no writer held), released at the end
	copies    []packLoc          // the records copied, in order
	looseObjs []Digest           // loose objects packed
	looseEnts []Key              // loose entries packed
	migrated  map[[32]byte]bool  // their ids: the loose files to remove
	objects   map[[32]byte]bool  // every object present (packed or loose)
	entries   map[[32]byte]bool  // every entry present
	freed     int64              // bytes of records not copied (a dry run's estimate)
	sizes     map[packName]int64 // of the packs rewritten, and their indexes
}

// planGC decides, from the packs and the loose files of s, what GC keeps,
// copies and removes. With take set it holds (locks) every pack no writer
// holds, so that none is adopted meanwhile.
func (s *Store) planGC(keep map[Digest]bool, keepKeys map[Key]bool, take bool) *gcPlan {
	pl := &gcPlan{migrated: map[[32]byte]bool{}, objects: map[[32]byte]bool{}, entries: map[[32]byte]bool{}, sizes: map[packName]int64{}}
	if s.untrusted {
		return pl
	}
	s.refreshPacks()
	s.wholeIndexes()
	v := s.pv
	v.mu.RLock()
	packs := make([]*packFile, 0, len(v.packs))
	for _, pf := range v.packs {
		packs = append(packs, pf)
	}
	dead := v.dead
	v.mu.RUnlock()
	slices.SortFunc(packs, func(a, b *packFile) int { return bytes.Compare(a.name[:], b.name[:]) })

	free := map[packName]bool{} // no writer holds it: GC may rewrite it
	if !take {
		// A dry run: the handle's own pack is one GC would let go first.
		s.pwMu.Lock()
		if s.pw != nil {
			free[s.pw.name] = true
		}
		s.pwMu.Unlock()
	}
	for _, pf := range packs {
		if take {
			if pw := s.takePackRaw(pf.name); pw != nil {
				pl.held = append(pl.held, pw)
				free[pf.name] = true
			}
		} else if pw := s.takePackRaw(pf.name); pw != nil {
			pw.f.Close()
			free[pf.name] = true
		}
	}
	recsOf := func(pf *packFile) []packRec {
		var rs []packRec
		if pf.idx != nil {
			pf.idx.all(func(r packRec) { rs = append(rs, r) })
		}
		rs = append(rs, pf.tail...)
		slices.SortFunc(rs, func(a, b packRec) int { return cmp.Compare(a.off, b.off) })
		return rs
	}
	looseEnts, _ := s.listFanout(indexDir, ".json")
	looseEntry := map[[32]byte]bool{}
	for _, h := range looseEnts {
		looseEntry[h] = true
		pl.entries[h] = true
	}
	looseObjs, _ := s.listFanout(objectsDir, "")
	for _, h := range looseObjs {
		pl.objects[h] = true
	}

	// The entry GetEntry reads for each key: a loose file, else the last
	// live record in pack order.
	chosen := map[[32]byte]killTarget{}
	for _, pf := range packs {
		for _, r := range recsOf(pf) {
			at := killTarget{pack: pf.name, off: r.off}
			if dead[deadKey{pf.name, r.off, r.id}] {
				continue
			}
			switch r.typ {
			case recEntry:
				pl.entries[r.id] = true
				if !looseEntry[r.id] {
					chosen[r.id] = at
				}
			case recObject:
				pl.objects[r.id] = true
			}
		}
	}
	// A pack is rewritten if it holds anything GC does not keep.
	dirty := map[packName]bool{}
	seen := map[[32]byte]bool{}
	small := 0
	for _, pf := range packs {
		if !free[pf.name] {
			continue
		}
		if len(pf.kills) > 0 || pf.stopErr != nil {
			dirty[pf.name] = true
		}
		for _, r := range recsOf(pf) {
			at := killTarget{pack: pf.name, off: r.off}
			switch {
			case dead[deadKey{pf.name, r.off, r.id}]:
				dirty[pf.name] = true
			case r.typ == recObject && (!keep[Digest(r.id)] || seen[r.id]):
				dirty[pf.name] = true
			case r.typ == recEntry && (!keepKeys[Key(r.id)] || chosen[r.id] != at):
				dirty[pf.name] = true
			}
			if r.typ == recObject {
				seen[r.id] = true
			}
		}
		if pf.size < packLimit/4 {
			small++
		}
	}
	for _, h := range looseEnts {
		if keepKeys[Key(h)] && packEntries && !s.scratch {
			pl.looseEnts = append(pl.looseEnts, Key(h))
		}
	}
	for _, h := range looseObjs {
		if keep[Digest(h)] {
			if fi, err := s.dir.lstat(objectRel(Digest(h))); err == nil && fi.Mode().IsRegular() && fi.Size() < int64(looseLimit) && !s.scratch {
				pl.looseObjs = append(pl.looseObjs, Digest(h))
			}
		}
	}
	for _, pf := range packs {
		if !free[pf.name] {
			continue
		}
		// Small packs are merged when anything is written anyway, or
		// when there are several.
		if dirty[pf.name] || pf.size < packLimit/4 && (len(dirty) > 0 || small > 1 || len(pl.looseObjs)+len(pl.looseEnts) > 0) {
			pl.rewrite = append(pl.rewrite, pf.name)
		}
	}
	rewritten := map[packName]bool{}
	for _, n := range pl.rewrite {
		rewritten[n] = true
	}
	// What is copied: each kept object once (unless a pack that stays has
	// it), each kept key's chosen entry, and the kills of packs that stay.
	placed := map[[32]byte]bool{}
	for _, pf := range packs {
		if rewritten[pf.name] {
			continue
		}
		for _, r := range recsOf(pf) {
			if r.typ == recObject && !dead[deadKey{pf.name, r.off, r.id}] {
				placed[r.id] = true
			}
		}
	}
	for _, pf := range packs {
		if !rewritten[pf.name] {
			continue
		}
		pl.sizes[pf.name] = pf.size
		for _, r := range recsOf(pf) {
			at := killTarget{pack: pf.name, off: r.off}
			keepIt := false
			if !dead[deadKey{pf.name, r.off, r.id}] {
				switch r.typ {
				case recObject:
					keepIt = keep[Digest(r.id)] && !placed[r.id]
					placed[r.id] = placed[r.id] || keepIt
				case recEntry:
					keepIt = keepKeys[Key(r.id)] && chosen[r.id] == at
				}
			}
			if keepIt {
				pl.copies = append(pl.copies, packLoc{pf: pf, rec: r})
			} else {
				pl.freed += r.end() - r.off
			}
		}
		for _, k := range pf.kills {
			if !rewritten[k.target.pack] {
				// A kill of a record in a pack that stays.
				pl.copies = append(pl.copies, packLoc{pf: pf, rec: packRec{id: k.id, off: k.off, stored: killPayloadSize, size: killPayloadSize, typ: recKill}})
			} else {
				pl.freed += recHeaderSize + killPayloadSize
			}
		}
	}
	for _, d := range pl.looseObjs {
		if placed[d] {
			pl.migrated[d] = true // a packed copy stays: the loose file goes
		}
	}
	return pl
}

// retireOwnPack writes the index of the handle's pack and lets it go, so
// that GC may rewrite it like any other.
func (s *Store) retireOwnPack() {
	s.pwMu.Lock()
	defer s.pwMu.Unlock()
	if s.pw != nil {
		s.sealPack(s.pw)
		s.dropPackWriter()
	}
}

// release releases the packs GC held.
func (pl *gcPlan) release() {
	for _, pw := range pl.held {
		pw.f.Close()
	}
	pl.held = nil
}

// repack carries out pl: the records copied into new packs, the loose
// files packed, all of it made durable, then the rewritten packs removed.
// The loose files it packed are left in pl.migrated, for GC's sweep to
// remove.
func (s *Store) repack(pl *gcPlan, st *GCStats, errs *[]error) {
	defer pl.release()
	// GC's copies go into new packs, never into one it is about to
	// remove.
	s.pwMu.Lock()
	s.noAdopt = true
	s.pwMu.Unlock()
	defer func() {
		s.pwMu.Lock()
		s.dropPackWriter()
		s.noAdopt = false
		s.pwMu.Unlock()
	}()
	if len(pl.rewrite) == 0 && len(pl.looseObjs) == 0 && len(pl.looseEnts) == 0 {
		return
	}
	fail := func(err error) {
		appendErr(errs, err)
	}
	for _, l := range pl.copies {
		raw, data, err := s.readRecordAt(l)
		switch {
		case err != nil:
		case l.rec.typ == recObject && Sum(data) != Digest(l.rec.id):
			err = fmt.Errorf("content hashes to %v", Sum(data))
		case l.rec.typ == recEntry:
			_, err = decodeEntry(data, Key(l.rec.id))
		case l.rec.typ == recKill:
			if _, ok := parseKill(data); !ok {
				err = errNotRecord
			}
		}
		if err != nil {
			// Not copied: set aside as evidence, like any bad record.
			if l.rec.typ != recKill {
				s.setAside(fmt.Sprintf("%s-%x-%s-%d-", recWhat(l.rec.typ), l.rec.id, l.pf.name, l.rec.off), raw)
			}
			continue
		}
		h := l.rec.header()
		if _, err := s.appendStored(h, raw[recHeaderSize:]); err != nil {
			fail(err)
			return // nothing is removed
		}
	}
	for _, k := range pl.looseEnts {
		e, ok, err := s.getLooseEntry(k)
		if err != nil || !ok {
			continue // set aside, or gone: nothing to pack
		}
		data, err := encodeEntry(e)
		if err == nil {
			_, err = s.appendRecord(recEntry, k, data)
		}
		if err != nil {
			fail(err)
			return
		}
		pl.migrated[k] = true
	}
	for _, d := range pl.looseObjs {
		if pl.migrated[d] {
			continue
		}
		data, err := s.getLoose(d)
		if err != nil {
			continue
		}
		if _, err := s.appendRecord(recObject, d, data); err != nil {
			fail(err)
			return
		}
		pl.migrated[d] = true
	}
	// Durable before anything goes.
	s.pwMu.Lock()
	var serr error
	if s.pw != nil {
		serr = s.sealPack(s.pw)
	}
	s.pwMu.Unlock()
	if serr == nil {
		serr = s.barrier()
	}
	if serr != nil {
		fail(serr)
		pl.migrated = map[[32]byte]bool{}
		return
	}
	for _, n := range pl.rewrite {
		for _, rel := range []string{idxRel(n), packRel(n)} {
			fi, err := s.dir.lstat(rel)
			if err != nil {
				continue
			}
			if err := s.dir.remove(rel); err != nil {
				fail(err)
				continue
			}
			st.BytesFreed += fi.Size()
		}
		st.PacksRemoved++
	}
	s.pwMu.Lock()
	if s.pw != nil {
		st.BytesFreed -= s.pw.size
		st.PacksWritten++
	}
	s.pwMu.Unlock()
	s.refreshPacks()
}

// readRecordAt is readRecord of a record GC copies (a kill too).
func (s *Store) readRecordAt(l packLoc) (raw, data []byte, err error) {
	return s.readRecord(l)
}

func recWhat(typ byte) string {
	switch typ {
	case recObject:
		return "object"
	case recEntry:
		return "index-entry"
	}
	return "kill"
}

// barrier makes what the handle wrote durable: Sync where writes wait for
// it; elsewhere each write was made durable as it was written.
func (s *Store) barrier() error {
	if s.dur != nil && s.dur.deferred {
		return s.Sync()
	}
	return nil
}
