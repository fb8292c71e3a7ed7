package artifacts

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// packView is what a Store handle knows of the packs: for each pack its
// index and the records written since (scanned from the pack), and which
// records were killed. It is loaded when first needed and refreshed when a
// lookup misses (another process may have written since), when the
// presence of many objects is checked, and by Check and GC. A handle's own
// writes enter it as they are made.
type packView struct {
	mu     sync.RWMutex
	loaded bool
	packs  map[packName]*packFile
	dirf   *os.File         // packs/, open for listPacks
	dead   map[deadKey]bool // every record some kill names
	// whole: the indexes are read whole (after many lookups, or a
	// listing), not lazily (packIdx); promote asks for it.
	whole   bool
	promote atomic.Bool
}

// packFile is one pack as a packView knows it.
type packFile struct {
	name packName
	f    *os.File // read-only, for the life of the view (or until the pack is removed)
	ino  uint64
	idx  *packIdx // nil: none usable; the pack is scanned from its header
	// idxID identifies the index file idx was read from (device, inode,
	// size, change time), to notice a newer one.
	idxID fileID
	// scanned: the records below it are known (from idx or scanned);
	// tail lists those at or above idx's covered, in pack order.
	scanned  int64
	tail     []packRec
	tailByID map[[32]byte][]int32
	kills    []packKill // from idx and tail
	// stopErr says why scanning stopped at scanned although the pack is
	// longer: the bytes there are no whole record (a torn tail, garbage).
	// A record being written is not an error: the writer has not finished.
	stopErr error
	size    int64 // the pack's size when last looked at
}

// fileID identifies a version of a file: a file replaced by a rename, or
// written to, has another.
type fileID struct {
	ino, size uint64
	ctime     int64
}

// packLoc is a record of a pack.
type packLoc struct {
	pf  *packFile
	rec packRec
}

func (l packLoc) target() killTarget { return killTarget{pack: l.pf.name, off: l.rec.off} }

func (l packLoc) deadKey() deadKey { return deadKey{l.pf.name, l.rec.off, l.rec.id} }

// deadKey is a record a kill kills: the place it names and the id of the
// record killed. A record is dead only if both match, so a kill made after
// a lying index pointed an id at another record's place leaves that other
// record alone.
type deadKey struct {
	pack packName
	off  int64
	id   [32]byte
}

// where describes the record's place, for messages.
func (l packLoc) where(s *Store) string {
	return fmt.Sprintf("%s at offset %d", s.dir.abs(packRel(l.pf.name)), l.rec.off)
}

// view returns the handle's pack view, loaded. An untrusted view of a
// scratch store (which is written loose) reads no packs.
func (s *Store) view() *packView {
	v := s.pv
	v.mu.RLock()
	loaded := v.loaded
	v.mu.RUnlock()
	if !loaded && s.readsPacks() {
		s.refreshPacks()
	}
	return v
}

// refreshPacks brings the view up to date with the packs on disk: new
// packs, packs removed (by GC), newer index files, records appended since.
// A pack that cannot be read is left out (Check reports it).
func (s *Store) refreshPacks() {
	v := s.pv
	v.mu.Lock()
	defer v.mu.Unlock()
	v.loaded = true
	if !s.readsPacks() {
		return
	}
	if v.packs == nil {
		v.packs = map[packName]*packFile{}
	}
	ents, err := v.listPacks(s)
	if err != nil {
		ents = nil // no packs/ (a store of the loose layout): none
	}
	listed := map[packName]bool{}
	idxs := map[packName]bool{}
	for _, de := range ents {
		if !de.Type().IsRegular() {
			continue
		}
		if n, ok := parsePackFile(de.Name(), packExt); ok {
			listed[n] = true
		} else if n, ok := parsePackFile(de.Name(), idxExt); ok {
			idxs[n] = true
		}
	}
	changed := false
	for n, pf := range v.packs {
		if !listed[n] {
			pf.f.Close()
			delete(v.packs, n)
			changed = true
		}
	}
	for n := range listed {
		pf := v.packs[n]
		if pf == nil {
			if pf = s.openPackFile(n); pf == nil {
				continue
			}
			v.packs[n] = pf
			changed = true
		}
		if s.updatePackFile(pf, idxs[n]) {
			changed = true
		}
	}
	if changed {
		v.rebuildDead()
	}
}

// listPacks lists packs/ through a descriptor kept open between looks
// (read again from its start: fewer system calls than opening it each
// time), opened again if listing it fails (the directory was removed).
// v.mu is held.
func (v *packView) listPacks(s *Store) ([]fs.DirEntry, error) {
	if v.dirf != nil {
		if _, err := v.dirf.Seek(0, io.SeekStart); err == nil {
			if ents, err := v.dirf.ReadDir(-1); err == nil {
				return ents, nil
			}
		}
		v.dirf.Close()
		v.dirf = nil
	}
	f, err := s.dir.openDir(packsDir)
	if err != nil {
		return nil, err
	}
	ents, err := f.ReadDir(-1)
	if err != nil || !keepDirOpen {
		f.Close()
		return ents, err
	}
	v.dirf = f
	return ents, nil
}

// openPackFile opens pack n for reading, or returns nil if it is not a
// pack (not a regular file, another header).
func (s *Store) openPackFile(n packName) *packFile {
	f, err := s.dir.open(packRel(n), os.O_RDONLY|oNonblock, 0)
	if err != nil {
		return nil
	}
	fi, err := f.Stat()
	if err != nil || s.notStoreFile(fi) != "" {
		f.Close()
		return nil
	}
	var h [packHeaderSize]byte
	if _, err := f.ReadAt(h[:], 0); err != nil || string(h[:len(packMagic)]) != packMagic || !bytes.Equal(h[len(packMagic):], n[:]) {
		f.Close()
		return nil
	}
	return &packFile{name: n, f: f, ino: fileIDOf(fi).ino, scanned: int64(packHeaderSize)}
}

// updatePackFile reads pf's index again if it changed and scans what was
// appended since; it reports whether the pack's kills may have changed.
func (s *Store) updatePackFile(pf *packFile, hasIdx bool) bool {
	fi, err := pf.f.Stat()
	if err != nil {
		return false
	}
	pf.size = fi.Size()
	changed := false
	if hasIdx {
		if ifi, err := s.dir.lstat(idxRel(pf.name)); err == nil && fileIDOf(ifi) != pf.idxID {
			// (A newer index may cover less: a repair cut the pack's
			// torn tail.)
			if ix, id, err := s.readIdx(pf.name, pf.size, s.pv.whole); err == nil {
				pf.idx, pf.idxID = ix, id
				pf.resetTail(ix.covered)
				changed = true
			}
		}
	}
	if pf.size > pf.scanned && (pf.stopErr == nil || changed) {
		if pf.scan(pf.size) {
			changed = true
		}
	}
	return changed
}

// readIdx reads and parses the index file of pack n (whose pack has size
// bytes): whole, or lazily (packIdx; the file then stays open for its
// lookups).
func (s *Store) readIdx(n packName, size int64, whole bool) (*packIdx, fileID, error) {
	f, err := s.dir.open(idxRel(n), os.O_RDONLY|oNonblock, 0)
	if err != nil {
		return nil, fileID{}, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fileID{}, err
	}
	if why := s.notStoreFile(fi); why != "" {
		f.Close()
		return nil, fileID{}, errors.New(why)
	}
	if fi.Size() > maxPackSize {
		f.Close()
		return nil, fileID{}, errors.New("too large")
	}
	if !whole {
		ix, err := readIdxLazy(f, n, size, fi.Size())
		if err != nil || !ix.lazy() {
			f.Close() // (an index of no records is whole already)
		}
		return ix, fileIDOf(fi), err
	}
	defer f.Close()
	b := make([]byte, fi.Size())
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, fileID{}, err
	}
	ix, err := parseIdx(b, n, size)
	return ix, fileIDOf(fi), err
}

// resetTail forgets the scanned records from covered on (an index now
// covers them) and rebuilds the kills.
func (pf *packFile) resetTail(covered int64) {
	pf.tail, pf.tailByID, pf.stopErr = nil, nil, nil
	pf.scanned = covered
	pf.kills = slices.Clone(pf.idx.kills)
}

// scan reads the records of pf from scanned up to size, adding them to its
// tail, and stops at the first bytes that are no whole record (stopErr, if
// they are not a record being written). It reports whether a kill was
// found.
func (pf *packFile) scan(size int64) (killsChanged bool) {
	sc := packScanner{f: pf.f, off: pf.scanned, size: size}
	for {
		r, kill, err := sc.next()
		if err != nil {
			if err != io.EOF && !errors.Is(err, errIncomplete) {
				pf.stopErr = err
			}
			return killsChanged
		}
		if r.typ == recKill {
			pf.kills = append(pf.kills, packKill{id: r.id, off: r.off, target: kill})
			killsChanged = true
		} else {
			pf.addTail(r)
		}
		pf.scanned = r.end()
	}
}

func (pf *packFile) addTail(r packRec) {
	if pf.tailByID == nil {
		pf.tailByID = map[[32]byte][]int32{}
	}
	pf.tailByID[r.id] = append(pf.tailByID[r.id], int32(len(pf.tail)))
	pf.tail = append(pf.tail, r)
}

// errIncomplete: the bytes at the end of a pack are the start of a record
// whose rest is not there (being written, or cut by a kill of its writer).
var errIncomplete = errors.New("an incomplete record at the end of the pack")

// packScanner reads a pack's records in order, a chunk at a time.
type packScanner struct {
	f         io.ReaderAt
	off, size int64
	buf       []byte
	bufAt     int64
	verbatim  bool // also return each record's stored payload (payload)
	payload   []byte
}

const scanChunk = 256 << 10

// read returns the bytes [off, off+n) of the pack, from its chunk.
func (sc *packScanner) read(off int64, n int) ([]byte, error) {
	if off >= sc.bufAt && off+int64(n) <= sc.bufAt+int64(len(sc.buf)) {
		return sc.buf[off-sc.bufAt : off-sc.bufAt+int64(n)], nil
	}
	m := max(n, scanChunk)
	if rest := sc.size - off; int64(m) > rest {
		m = int(rest)
	}
	if m < n {
		return nil, io.ErrUnexpectedEOF
	}
	if cap(sc.buf) < m {
		sc.buf = make([]byte, m)
	}
	sc.buf = sc.buf[:m]
	k, err := sc.f.ReadAt(sc.buf, off)
	if k < n {
		if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	sc.buf, sc.bufAt = sc.buf[:k], off
	return sc.buf[:n], nil
}

// next returns the next record (and, for a kill, what it names).
func (sc *packScanner) next() (packRec, killTarget, error) {
	if sc.off >= sc.size {
		return packRec{}, killTarget{}, io.EOF
	}
	if sc.size-sc.off < recHeaderSize {
		return packRec{}, killTarget{}, errIncomplete
	}
	b, err := sc.read(sc.off, recHeaderSize)
	if err != nil {
		return packRec{}, killTarget{}, err
	}
	h, err := parseRecHeader(b)
	if err != nil {
		return packRec{}, killTarget{}, fmt.Errorf("at offset %d: %w", sc.off, err)
	}
	r := packRec{id: h.id, off: sc.off, stored: h.stored, size: h.size, typ: h.typ, enc: h.enc}
	if r.end() > sc.size {
		return packRec{}, killTarget{}, errIncomplete
	}
	var k killTarget
	if h.typ == recKill || sc.verbatim {
		p, err := sc.read(sc.off+recHeaderSize, int(h.stored))
		if err != nil {
			return packRec{}, killTarget{}, err
		}
		if h.typ == recKill {
			var ok bool
			if k, ok = parseKill(p); !ok {
				return packRec{}, killTarget{}, fmt.Errorf("at offset %d: %w: a kill naming an offset out of range", sc.off, errNotRecord)
			}
		}
		sc.payload = p
	}
	sc.off = r.end()
	return r, k, nil
}

// rebuildDead collects the kills of every pack.
func (v *packView) rebuildDead() {
	v.dead = map[deadKey]bool{}
	for _, pf := range v.packs {
		for _, k := range pf.kills {
			v.dead[deadKey{k.target.pack, k.target.off, k.id}] = true
		}
	}
}

// wholeIndexes reads every lazily read index of the view whole: once a
// view looks up many records, or lists them. An index that then fails
// its checksum is dropped, and its pack scanned instead.
func (s *Store) wholeIndexes() {
	v := s.pv
	v.mu.Lock()
	defer v.mu.Unlock()
	v.whole = true
	v.promote.Store(false)
	for _, pf := range v.packs {
		if pf.idx == nil || !pf.idx.lazy() {
			continue
		}
		ix, err := pf.idx.loadWhole(pf.name, pf.size)
		if err != nil {
			pf.idx, pf.idxID = nil, fileID{}
			pf.tail, pf.tailByID, pf.stopErr, pf.kills = nil, nil, nil, nil
			pf.scanned = int64(packHeaderSize)
			pf.scan(pf.size)
			v.rebuildDead()
			continue
		}
		pf.idx = ix
	}
}

// find returns the live records of type typ with id, in the order of
// their packs' names and offsets.
func (v *packView) find(id [32]byte, typ byte) []packLoc {
	v.mu.RLock()
	defer v.mu.RUnlock()
	defer v.checkPromote()
	var out []packLoc
	for _, pf := range v.packs {
		out = v.liveIn(pf, id, typ, out)
	}
	if len(out) > 1 {
		slices.SortFunc(out, func(a, b packLoc) int {
			if c := bytes.Compare(a.pf.name[:], b.pf.name[:]); c != 0 {
				return c
			}
			return cmp.Compare(a.rec.off, b.rec.off)
		})
	}
	return out
}

// liveIn appends to out the live records of type typ with id in pack pf
// (v.mu held).
func (v *packView) liveIn(pf *packFile, id [32]byte, typ byte, out []packLoc) []packLoc {
	var recs [4]packRec
	rs := recs[:0]
	if pf.idx != nil {
		rs = pf.idx.find(&id, typ, rs)
	}
	for _, i := range pf.tailByID[id] {
		if r := pf.tail[i]; r.typ == typ {
			rs = append(rs, r)
		}
	}
	for _, r := range rs {
		if !v.dead[deadKey{pf.name, r.off, r.id}] {
			out = append(out, packLoc{pf: pf, rec: r})
		}
	}
	return out
}

// checkPromote asks for the indexes whole if a lazy one has been looked
// up often (v.mu held).
func (v *packView) checkPromote() {
	for _, pf := range v.packs {
		if pf.idx != nil && pf.idx.lazy() && pf.idx.lookups.Load() > fullIdxAfter {
			v.promote.Store(true)
			return
		}
	}
}

// has reports whether a live record of type typ with id is known.
func (v *packView) has(id [32]byte, typ byte) bool {
	v.mu.RLock()
	defer v.mu.RUnlock()
	defer v.checkPromote()
	var recs [4]packRec
	for _, pf := range v.packs {
		rs := recs[:0]
		if pf.idx != nil {
			rs = pf.idx.find(&id, typ, rs)
		}
		for _, r := range rs {
			if !v.dead[deadKey{pf.name, r.off, r.id}] {
				return true
			}
		}
		for _, i := range pf.tailByID[id] {
			if r := pf.tail[i]; r.typ == typ && !v.dead[deadKey{pf.name, r.off, r.id}] {
				return true
			}
		}
	}
	return false
}

// each calls fn with every live record of type typ (an id more than once
// if it has several); the indexes must be whole (wholeIndexes).
func (v *packView) each(typ byte, fn func(packLoc)) {
	v.mu.RLock()
	defer v.mu.RUnlock()
	for _, pf := range v.packs {
		visit := func(r packRec) {
			if r.typ == typ && !v.dead[deadKey{pf.name, r.off, r.id}] {
				fn(packLoc{pf: pf, rec: r})
			}
		}
		if pf.idx != nil {
			pf.idx.all(visit)
		}
		for _, r := range pf.tail {
			visit(r)
		}
	}
}

// findPacked returns the live packed records of type typ with id,
// refreshing the view once if there are none (another process may have
// written it).
func (s *Store) findPacked(id [32]byte, typ byte) []packLoc {
	return s.findPackedFresh(id, typ, false)
}

// findPackedFresh is findPacked; fresh says the caller has just refreshed
// the view (no second look on a miss).
func (s *Store) findPackedFresh(id [32]byte, typ byte, fresh bool) []packLoc {
	if !s.readsPacks() {
		return nil
	}
	v := s.view()
	if v.promote.Load() {
		s.wholeIndexes()
	}
	if locs := v.find(id, typ); len(locs) > 0 || fresh {
		return locs
	}
	s.refreshPacks()
	return v.find(id, typ)
}

// visitPacked calls try with the live records of type typ with id, in
// the order of their packs' names and offsets (reversed if last, the last
// first), until try returns true. A record try finds bad is set aside by
// it, which looks at the packs afresh (another process may have set it
// aside already, and written a good copy since): the records new to the
// view then are tried too.
func (s *Store) visitPacked(id [32]byte, typ byte, last bool, try func(packLoc) bool) {
	s.visitPackedFresh(id, typ, last, false, try)
}

// visitPackedFresh is visitPacked; fresh as for findPackedFresh. It
// looks the packs up one at a time, in the order try sees them, so that a
// copy try takes spares the lookups in the packs after it (each a read of
// a lazy index).
func (s *Store) visitPackedFresh(id [32]byte, typ byte, last, fresh bool, try func(packLoc) bool) {
	if !s.readsPacks() {
		return
	}
	v := s.view()
	if v.promote.Load() {
		s.wholeIndexes()
	}
	tried := map[deadKey]bool{}
	// pass tries the live records not tried yet; found says there were
	// some.
	pass := func() (done, found bool) {
		for _, pf := range v.packsInOrder(last) {
			for _, l := range v.findIn(pf, id, typ, last) {
				if tried[l.deadKey()] {
					continue
				}
				found = true
				tried[l.deadKey()] = true
				if try(l) {
					return true, true
				}
			}
		}
		return false, found
	}
	done, found := pass()
	if !found && !fresh {
		s.refreshPacks() // another process may have written it
		done, found = pass()
	}
	for found && !done {
		done, found = pass()
	}
}

// packsInOrder returns the view's packs in the order of their names (the
// last first if reversed).
func (v *packView) packsInOrder(reversed bool) []*packFile {
	v.mu.RLock()
	defer v.mu.RUnlock()
	packs := make([]*packFile, 0, len(v.packs))
	for _, pf := range v.packs {
		packs = append(packs, pf)
	}
	slices.SortFunc(packs, func(a, b *packFile) int { return bytes.Compare(a.name[:], b.name[:]) })
	if reversed {
		slices.Reverse(packs)
	}
	return packs
}

// findIn returns the live records of type typ with id in pack pf, in the
// order of their offsets (the last first if reversed).
func (v *packView) findIn(pf *packFile, id [32]byte, typ byte, reversed bool) []packLoc {
	v.mu.RLock()
	defer v.mu.RUnlock()
	defer v.checkPromote()
	out := v.liveIn(pf, id, typ, nil)
	slices.SortFunc(out, func(a, b packLoc) int { return cmp.Compare(a.rec.off, b.rec.off) })
	if reversed {
		slices.Reverse(out)
	}
	return out
}

// hasPacked is findPacked's presence test, without reading anything.
func (s *Store) hasPacked(id [32]byte, typ byte) bool {
	if !s.readsPacks() {
		return false
	}
	v := s.view()
	if v.promote.Load() {
		s.wholeIndexes()
	}
	if v.has(id, typ) {
		return true
	}
	s.refreshPacks()
	return v.has(id, typ)
}

// readRecord reads the record at l: its bytes as stored (header and
// payload, kept as evidence if it is bad) and its decoded payload. The
// record's own header must agree with what the index said of it.
func (s *Store) readRecord(l packLoc) (raw, data []byte, err error) {
	raw = make([]byte, recHeaderSize+int(l.rec.stored))
	n, err := l.pf.f.ReadAt(raw, l.rec.off)
	if n < len(raw) {
		if err == nil || err == io.EOF {
			return raw[:n], nil, fmt.Errorf("the pack ends %d bytes into the record", n)
		}
		return raw[:n], nil, &readError{err}
	}
	h, err := parseRecHeader(raw)
	if err != nil {
		return raw, nil, err
	}
	if h != l.rec.header() {
		return raw, nil, errors.New("the record's header does not match the pack's index")
	}
	data, err = decodePayload(h, raw[recHeaderSize:])
	return raw, data, err
}

// readError is an I/O error reading a pack (not a verdict on its bytes).
type readError struct{ err error }

func (e *readError) Error() string { return e.err.Error() }
func (e *readError) Unwrap() error { return e.err }

// PackStamp identifies the packs of a store: the SHA-256 of the names,
// inodes and sizes of the pack files in packs/. Records are only ever
// appended to a pack (a kill is a record too), and a pack only ever
// created or removed whole, or cut back by a repair that sets its torn
// tail aside in corrupt/ (which lapses every seal), so a store whose stamp
// is unchanged holds every record it held. The packs' indexes do not
// enter it: the store rewrites one only to list more of its pack (at a
// barrier) or after a repair; an index edited in place by someone else,
// like an object file edited in place, is found out when a record is
// read, not by a stamp. The zero stamp is unknown: it matches nothing.
type PackStamp [sha256.Size]byte

// stampPacks returns the packs' stamp as it is now.
func (s *Store) stampPacks() PackStamp {
	ents, err := readDirRel(s.dir, packsDir)
	if errors.Is(err, fs.ErrNotExist) {
		return PackStamp(sha256.Sum256([]byte("no packs")))
	}
	if err != nil {
		return PackStamp{}
	}
	names := make([]string, 0, len(ents))
	for _, de := range ents {
		if !strings.HasSuffix(de.Name(), idxExt) {
			names = append(names, de.Name())
		}
	}
	slices.Sort(names)
	h := sha256.New()
	var b [24]byte
	for _, name := range names {
		fi, err := s.dir.lstat(packsDir + sep + name)
		if err != nil {
			return PackStamp{}
		}
		id := fileIDOf(fi)
		binary.LittleEndian.PutUint64(b[:], id.ino)
		binary.LittleEndian.PutUint64(b[8:], id.size)
		binary.LittleEndian.PutUint64(b[16:], uint64(fi.Mode()))
		h.Write([]byte(name))
		h.Write(b[:])
	}
	var st PackStamp
	h.Sum(st[:0])
	return st
}

// isPackFileName reports whether name is one of the files the store keeps
// in packs/.
func isPackFileName(name string) bool {
	if _, ok := parsePackFile(name, packExt); ok {
		return true
	}
	_, ok := parsePackFile(name, idxExt)
	return ok
}

// packStem returns the pack name of a file in packs/.
func packStem(name string) (packName, bool) {
	stem, _, _ := strings.Cut(name, ".")
	var n packName
	return n, len(stem) == 16 && decodeLowerHex(n[:], []byte(stem))
}
