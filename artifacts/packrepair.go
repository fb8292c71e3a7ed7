package artifacts

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync/atomic"
)

// Bad records and torn tails. A record that fails when read (its bytes do
// not hash to its id, an entry that does not decode, a header that does not
// match the index) is quarantined as a loose file is: its bytes are copied
// to corrupt/ as evidence, and a kill record makes it absent (the next
// lookup is a miss; a Put of the right bytes adds a good copy). Bytes at
// the end of a pack that are no whole record (a writer killed in the
// middle of one, pages a power cut garbled) are its torn tail: copied to
// corrupt/ and cut off, by whoever next holds the pack (a writer adopting
// it, the repair at Open, Check). Both change corrupt/, so a lock's seal
// made before them lapses, as it does for a loose file quarantined.

// setAside writes data to a new file of corrupt/ named prefix<random>,
// durably, and returns its path.
func (s *Store) setAside(prefix string, data []byte) (string, error) {
	if s.untrusted {
		return "", errLeftInPlace
	}
	if err := s.dir.mkdir(corruptDir, dirPerm); err != nil && !errors.Is(err, os.ErrExist) {
		return "", err
	}
	var f *os.File
	rel, err := uniqueName(corruptDir, prefix, "", func(rel string) (err error) {
		f, err = s.dir.open(rel, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		return err
	})
	if err != nil {
		return "", err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		s.dir.remove(rel)
		return "", err
	}
	_ = syncDir(s.dir, corruptDir)
	return s.dir.abs(rel), nil
}

// quarantineRecord sets the bad record at l aside (its bytes raw, as read,
// as evidence in corrupt/, then a kill) and returns the error describing
// it. If the evidence cannot be written (corrupt/ a link, a read-only
// store), nothing is killed: the record stays, and every read reports it
// again, as a loose file that cannot be moved. It returns nil if the
// record was set aside meanwhile (by another goroutine or process): then
// it is simply absent.
func (s *Store) quarantineRecord(l packLoc, what, name string, raw []byte, reason string) *CorruptError {
	e := &CorruptError{What: what, Name: name, Path: l.where(s), Reason: reason}
	if s.untrusted {
		e.MoveErr = errLeftInPlace
		return e
	}
	s.refreshPacks()
	v := s.pv
	v.mu.RLock()
	dead := v.dead[l.deadKey()]
	v.mu.RUnlock()
	if dead {
		return nil
	}
	prefix := fmt.Sprintf("%s-%x-%s-%d-", dashed(what), l.rec.id, l.pf.name, l.rec.off)
	path, err := s.setAside(prefix, raw)
	if err != nil {
		e.MoveErr = err
		return e
	}
	if _, err := s.appendRecord(recKill, l.rec.id, l.target().payload()); err != nil {
		os.Remove(path)
		e.MoveErr = err
		return e
	}
	e.MovedTo = path
	return e
}

func dashed(what string) string {
	return string(bytes.ReplaceAll([]byte(what), []byte(" "), []byte("-")))
}

// repairTail sets aside the bytes of pw's pack from off to its end, which
// are no whole record (why), and cuts them off. The caller then writes the
// pack's index (sealPack) with the records below off.
func (s *Store) repairTail(pw *packWriter, off int64, why error) error {
	fi, err := pw.f.Stat()
	if err != nil {
		return err
	}
	if fi.Size() > off {
		tail := make([]byte, min(fi.Size()-off, maxRecordSize))
		n, _ := pw.f.ReadAt(tail, off)
		prefix := fmt.Sprintf("pack-tail-%s-%d-", pw.name, off)
		if _, err := s.setAside(prefix, tail[:n]); err != nil {
			return fmt.Errorf("setting aside the torn tail of %s (%v): %w", s.dir.abs(packRel(pw.name)), why, err)
		}
		if err := pw.f.Truncate(off); err != nil {
			return err
		}
		if !s.noSync() {
			if err := pw.f.Sync(); err != nil {
				return err
			}
		}
	}
	pw.size = off
	pw.sealed = 0
	return nil
}

// repairPacks finds the packs no writer holds whose end is not covered
// by their index (their writer ended without a barrier) and repairs them:
// a torn tail set aside, the index written. Open calls it; it is best
// effort (a read-only store is left as it is).
func (s *Store) repairPacks() {
	s.refreshPacks()
	v := s.pv
	v.mu.RLock()
	var todo []packName
	for n, pf := range v.packs {
		if pf.idx == nil || pf.idx.covered < pf.size {
			todo = append(todo, n)
		}
	}
	v.mu.RUnlock()
	for _, n := range todo {
		if pw := s.takePack(n); pw != nil {
			s.sealPack(pw)
			pw.f.Close()
		}
	}
	if len(todo) > 0 {
		s.refreshPacks()
	}
}

// checkPacks is Check's part for the packs: every record of every pack
// read and checked (every object re-hashed; entries are read by the
// entry pass), bad records set aside, and the packs no writer holds
// repaired: a torn tail or garbage between records set aside, the index
// rebuilt from the records if it does not match them.
func (s *Store) checkPacks(ctx context.Context, objects, bytesRead *atomic.Int64, problem func(Problem)) error {
	s.refreshPacks()
	v := s.pv
	v.mu.RLock()
	var names []packName
	for n := range v.packs {
		names = append(names, n)
	}
	v.mu.RUnlock()
	for _, n := range names {
		if err := ctx.Err(); err != nil {
			return err
		}
		s.checkPack(n, objects, bytesRead, problem)
	}
	s.refreshPacks()
	return nil
}

// checkPack checks pack n (see checkPacks). An index that checks is the
// authority on the bytes it covers: its records are read and checked,
// bytes between them (set aside by an earlier repair) are not read; the
// rest of the pack is read record by record. A pack without such an index
// is read whole, and its index rebuilt.
func (s *Store) checkPack(n packName, objects, bytesRead *atomic.Int64, problem func(Problem)) {
	// A pack no writer holds is taken, so that it can be repaired; one
	// being written is only read.
	var pw *packWriter
	var f io.ReaderAt
	if w := s.takePackRaw(n); w != nil {
		pw, f = w, w.f
		defer w.f.Close()
	} else {
		v := s.pv
		v.mu.RLock()
		pf := v.packs[n]
		v.mu.RUnlock()
		if pf == nil {
			return
		}
		f = pf.f
	}
	size := s.packSize(n, f)
	if pw != nil {
		pw.sealed = size // unless repairTail cuts it
	}
	pf := &packFile{name: n}
	checkObject := func(r packRec, stored []byte) {
		objects.Add(1)
		bytesRead.Add(int64(r.size))
		data, err := decodePayload(r.header(), stored)
		if err == nil {
			if got := Sum(data); got != Digest(r.id) {
				err = fmt.Errorf("content hashes to %v", got)
			}
		}
		if err != nil && s.isLive(n, r.off, r.id) {
			raw := make([]byte, recHeaderSize, recHeaderSize+len(stored))
			r.header().put(raw)
			raw = append(raw, stored...)
			if ce := s.quarantineRecord(packLoc{pf: pf, rec: r}, "object", Digest(r.id).String(), raw, err.Error()); ce != nil {
				problem(Problem{What: "object", Name: Digest(r.id).String(), Err: ce})
			}
		}
	}
	var recs []packRec
	var kills []packKill
	off := int64(packHeaderSize)
	ix, _, ierr := s.readIdx(n, size, true)
	if ierr == nil {
		ierr = ix.verify()
	}
	if ierr == nil {
		// The records the index lists: each must be there, as listed.
		pf.f = f.(*os.File)
		ix.all(func(r packRec) {
			recs = append(recs, r)
			if r.typ != recObject || !s.isLive(n, r.off, r.id) {
				return // entries are read by Check's entry pass
			}
			raw, _, err := s.readRecord(packLoc{pf: pf, rec: r})
			if err != nil {
				objects.Add(1)
				if ce := s.quarantineRecord(packLoc{pf: pf, rec: r}, "object", Digest(r.id).String(), raw, err.Error()); ce != nil {
					problem(Problem{What: "object", Name: Digest(r.id).String(), Err: ce})
				}
				return
			}
			checkObject(r, raw[recHeaderSize:])
		})
		kills = append(kills, ix.kills...)
		off = ix.covered
	}
	for off < size {
		sc := packScanner{f: f, off: off, size: size, verbatim: true}
		for {
			r, kill, err := sc.next()
			if err != nil {
				off = sc.off
				if err == io.EOF {
					off = size
				}
				break
			}
			if r.typ == recKill {
				kills = append(kills, packKill{id: r.id, off: r.off, target: kill})
				continue
			}
			recs = append(recs, r)
			if r.typ == recObject {
				checkObject(r, sc.payload)
			}
		}
		if off >= size {
			break
		}
		// Bytes that are no record: find the next record, if any.
		next := s.nextRecordAt(f, off+1, size)
		why := fmt.Errorf("no record at offset %d", off)
		if pw == nil {
			problem(Problem{What: "pack", Name: n.String(), Err: fmt.Errorf("%s: %w (its writer is running: left as it is)", s.dir.abs(packRel(n)), why)})
			return
		}
		if next < 0 {
			err := s.repairTail(pw, off, why)
			problem(Problem{What: "pack", Name: n.String(), Err: fmt.Errorf("%s: torn tail from offset %d set aside (%v)", s.dir.abs(packRel(n)), off, orNil(err))})
			size = off
			break
		}
		span := make([]byte, next-off)
		k, _ := f.ReadAt(span, off)
		path, err := s.setAside(fmt.Sprintf("pack-span-%s-%d-", n, off), span[:k])
		problem(Problem{What: "pack", Name: n.String(), Err: fmt.Errorf("%s: %d bytes at offset %d are no record: skipped, kept as %s (%v)", s.dir.abs(packRel(n)), next-off, off, path, orNil(err))})
		off = next
	}
	if pw == nil {
		return
	}
	// The index must list the records found.
	pw.recs, pw.kills, pw.size = recs, kills, size
	if ierr == nil && ix.covered == size && pw.sealed != 0 {
		return
	}
	pw.sealed = 0
	if serr := s.sealPack(pw); serr == nil && ierr != nil && !errors.Is(ierr, os.ErrNotExist) {
		problem(Problem{What: "pack index", Name: n.String(), Err: fmt.Errorf("%s: %v: rebuilt from the pack", s.dir.abs(idxRel(n)), ierr)})
	}
}

func orNil(err error) any {
	if err == nil {
		return "done"
	}
	return err
}

// takePackRaw takes pack n for repair if no writer holds it (without
// reading it, unlike takePack).
func (s *Store) takePackRaw(n packName) *packWriter {
	if s.untrusted {
		return nil
	}
	f, err := s.dir.open(packRel(n), os.O_RDWR|oNonblock, 0)
	if err != nil {
		return nil
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil
	}
	if ok, err := tempAbandoned(f, fi); !ok || err != nil {
		f.Close()
		return nil
	}
	return &packWriter{f: f, name: n, size: fi.Size()}
}

func (s *Store) packSize(n packName, f io.ReaderAt) int64 {
	if st, ok := f.(interface{ Stat() (os.FileInfo, error) }); ok {
		if fi, err := st.Stat(); err == nil {
			return fi.Size()
		}
	}
	return 0
}

// nextRecordAt returns the offset of the first record header at or after
// from (magic and CRC right), or -1.
func (s *Store) nextRecordAt(f io.ReaderAt, from, size int64) int64 {
	buf := make([]byte, scanChunk+recHeaderSize)
	for at := from; at+recHeaderSize <= size; at += scanChunk {
		n, _ := f.ReadAt(buf[:min(int64(len(buf)), size-at)], at)
		b := buf[:n]
		for i := 0; i+recHeaderSize <= len(b); i++ {
			j := bytes.Index(b[i:], []byte(recMagic))
			if j < 0 || i+j+recHeaderSize > len(b) {
				break
			}
			i += j
			if h, err := parseRecHeader(b[i:]); err == nil && at+int64(i)+recHeaderSize+int64(h.stored) <= size {
				return at + int64(i)
			}
		}
	}
	return -1
}

// isLive reports whether the record of id at off in pack n is not killed.
func (s *Store) isLive(n packName, off int64, id [32]byte) bool {
	v := s.pv
	v.mu.RLock()
	defer v.mu.RUnlock()
	return !v.dead[deadKey{n, off, id}]
}
