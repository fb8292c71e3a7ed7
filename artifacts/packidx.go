package artifacts

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"slices"
	"sync/atomic"
)

// A pack's index file, packs/<16 hex>.idx, lists the pack's records by id
// so that a reader finds a record without reading the pack (git's .idx, a
// restic index). Layout, integers little-endian:
//
//	0    "THVIDX\x00\x01"  (the last byte is the format's version)
//	8    the pack's name (8 bytes)
//	16   covered: the pack's size when the index was written (uint64)
//	24   number of objects and entries (uint32), then of kills (uint32)
//	32   fan-out: 256 uint32, the number of records whose id's first byte
//	     is at most i
//	1056 the records, sorted by id, type and offset, idxRecSize bytes
//	     each: id (32), offset of the record (uint64), stored and decoded
//	     payload sizes (uint32 each), type, encoding, 6 zero bytes
//	     the kills, in pack order, idxRecSize bytes each: id (32), offset
//	     of the kill (uint64), the pack it names (8), the offset it
//	     names (uint64)
//	     CRC-32C of everything before (uint32)
//
// The index covers the records below covered; a reader scans the pack
// from there (records written since). It is a cache: a reader that finds
// it missing, short, garbled or for another pack ignores it and scans the
// whole pack, and every record it names is checked against the record's
// own header when read.

const (
	idxMagic      = "THVIDX\x00\x01"
	idxFanoutAt   = 32
	idxRecordsAt  = idxFanoutAt + 256*4
	idxRecSize    = 56
	idxTrailerLen = 4
)

// packRec is one record of a pack as an index lists it.
type packRec struct {
	id     [32]byte
	off    int64 // where the record's header starts
	stored uint32
	size   uint32
	typ    byte
	enc    byte
}

// packKill is a kill record: its own offset and the record it kills.
type packKill struct {
	id     [32]byte
	off    int64
	target killTarget
}

func (r *packRec) header() recHeader {
	return recHeader{typ: r.typ, enc: r.enc, stored: r.stored, size: r.size, id: r.id}
}

// end is the offset just past the record.
func (r *packRec) end() int64 { return r.off + recHeaderSize + int64(r.stored) }

func compareRecs(a, b packRec) int {
	if c := bytes.Compare(a.id[:], b.id[:]); c != 0 {
		return c
	}
	if c := cmp.Compare(a.typ, b.typ); c != 0 {
		return c
	}
	return cmp.Compare(a.off, b.off)
}

// encodeIdx lays out the index of pack name covering its first covered
// bytes, with its records (sorted here) and kills.
func encodeIdx(name packName, covered int64, recs []packRec, kills []packKill) []byte {
	recs = slices.Clone(recs)
	slices.SortFunc(recs, compareRecs)
	b := make([]byte, idxRecordsAt, idxRecordsAt+(len(recs)+len(kills))*idxRecSize+idxTrailerLen)
	copy(b, idxMagic)
	copy(b[8:], name[:])
	binary.LittleEndian.PutUint64(b[16:], uint64(covered))
	binary.LittleEndian.PutUint32(b[24:], uint32(len(recs)))
	binary.LittleEndian.PutUint32(b[28:], uint32(len(kills)))
	var fan [256]uint32
	for _, r := range recs {
		fan[r.id[0]]++
	}
	var sum uint32
	for i, n := range fan {
		sum += n
		binary.LittleEndian.PutUint32(b[idxFanoutAt+4*i:], sum)
	}
	var e [idxRecSize]byte
	for _, r := range recs {
		clear(e[:])
		copy(e[:32], r.id[:])
		binary.LittleEndian.PutUint64(e[32:], uint64(r.off))
		binary.LittleEndian.PutUint32(e[40:], r.stored)
		binary.LittleEndian.PutUint32(e[44:], r.size)
		e[48], e[49] = r.typ, r.enc
		b = append(b, e[:]...)
	}
	for _, k := range kills {
		clear(e[:])
		copy(e[:32], k.id[:])
		binary.LittleEndian.PutUint64(e[32:], uint64(k.off))
		copy(e[40:48], k.target.pack[:])
		binary.LittleEndian.PutUint64(e[48:], uint64(k.target.off))
		b = append(b, e[:]...)
	}
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

// packIdx is a pack's index as read: its bytes, checked, and looked up in
// place, never decoded whole. A view reads an index lazily first (its
// header, fan-out table and kills only; each lookup reads a few records
// from the file: a no-op pass looks up a few hundred objects), and whole
// once a view looks up many (fullIdxAfter), or lists them all.
type packIdx struct {
	covered int64
	n       int    // records
	recs    []byte // n records of idxRecSize bytes, sorted; nil if lazy
	fanout  []byte // 256 uint32
	kills   []packKill
	// lazy: the records are read from file when looked up; lookups
	// counts them.
	file    io.ReaderAt
	lookups atomic.Int64
}

// fullIdxAfter is how many lookups in a lazily read index make its view
// read it whole.
const fullIdxAfter = 256

// lazy reports whether ix's records are read from its file.
func (ix *packIdx) lazy() bool { return ix.recs == nil && ix.n > 0 }

// parseIdx reads the index bytes b of pack name, whose pack file has size
// bytes: its checksum (an index torn or garbled is not used), its header,
// its counts and its fan-out table are checked; the records are looked up
// in place and checked as they are used (a record's own header must agree
// when it is read), and verify checks their order. An error means the
// caller scans the pack instead. The checksum is a CRC, which finds
// accidents, not forgeries: nothing an index says is believed without
// the record itself.
func parseIdx(b []byte, name packName, size int64) (*packIdx, error) {
	if len(b) < idxRecordsAt+idxTrailerLen || string(b[:8]) != idxMagic {
		return nil, errors.New("not a pack index of this format")
	}
	body := b[:len(b)-idxTrailerLen]
	if crc32.Checksum(body, castagnoli) != binary.LittleEndian.Uint32(b[len(body):]) {
		return nil, errors.New("checksum does not match")
	}
	ix, err := parseIdxHead(b, name, size, int64(len(b)))
	if err != nil {
		return nil, err
	}
	ix.recs = body[idxRecordsAt : idxRecordsAt+ix.n*idxRecSize]
	if err := ix.parseKills(body[idxRecordsAt+ix.n*idxRecSize:]); err != nil {
		return nil, err
	}
	return ix, nil
}

// lazyIdxHeadSize is what a lazy read of an index reads first.
const lazyIdxHeadSize = idxRecordsAt

// readIdxLazy reads the index of pack name (whose pack has size bytes)
// from f, of fileSize bytes, lazily: its header, fan-out table and kills,
// checked as parseIdx checks them, but not its checksum, which needs the
// whole file (a garbled record can then only send a lookup astray: to a
// miss, or to a place whose record does not match, which is set aside).
func readIdxLazy(f io.ReaderAt, name packName, size, fileSize int64) (*packIdx, error) {
	if fileSize < idxRecordsAt+idxTrailerLen {
		return nil, errors.New("not a pack index of this format")
	}
	head := make([]byte, lazyIdxHeadSize)
	if _, err := f.ReadAt(head, 0); err != nil {
		return nil, err
	}
	if string(head[:8]) != idxMagic {
		return nil, errors.New("not a pack index of this format")
	}
	ix, err := parseIdxHead(head, name, size, fileSize)
	if err != nil {
		return nil, err
	}
	nk := int(binary.LittleEndian.Uint32(head[28:]))
	kills := make([]byte, nk*idxRecSize)
	if _, err := f.ReadAt(kills, int64(idxRecordsAt+ix.n*idxRecSize)); err != nil {
		return nil, err
	}
	if err := ix.parseKills(kills); err != nil {
		return nil, err
	}
	ix.file = f
	return ix, nil
}

// parseIdxHead checks an index's header and fan-out table, b[:idxRecordsAt],
// against the pack's name and size and the index file's size.
func parseIdxHead(b []byte, name packName, size, fileSize int64) (*packIdx, error) {
	if !bytes.Equal(b[8:16], name[:]) {
		return nil, errors.New("the index of another pack")
	}
	ix := &packIdx{covered: int64(binary.LittleEndian.Uint64(b[16:]))}
	n := int(binary.LittleEndian.Uint32(b[24:]))
	nk := int(binary.LittleEndian.Uint32(b[28:]))
	if ix.covered < int64(packHeaderSize) || ix.covered > size {
		return nil, fmt.Errorf("covers %d bytes of a pack of %d", ix.covered, size)
	}
	if fileSize != int64(idxRecordsAt)+int64(n+nk)*idxRecSize+idxTrailerLen {
		return nil, errors.New("size does not match its counts")
	}
	ix.n = n
	ix.fanout = bytes.Clone(b[idxFanoutAt:idxRecordsAt])
	prev := uint32(0)
	for i := range 256 {
		f := binary.LittleEndian.Uint32(ix.fanout[4*i:])
		if f < prev || int(f) > n {
			return nil, errors.New("fan-out table out of order")
		}
		prev = f
	}
	if int(prev) != n {
		return nil, errors.New("fan-out table does not add up")
	}
	return ix, nil
}

// parseKills reads the kills section ks of an index.
func (ix *packIdx) parseKills(ks []byte) error {
	for i := range len(ks) / idxRecSize {
		e := ks[i*idxRecSize:]
		var k packKill
		copy(k.id[:], e[:32])
		k.off = int64(binary.LittleEndian.Uint64(e[32:]))
		copy(k.target.pack[:], e[40:48])
		k.target.off = int64(binary.LittleEndian.Uint64(e[48:]))
		if k.off < int64(packHeaderSize) || k.off+recHeaderSize+killPayloadSize > ix.covered || k.target.off >= maxPackSize {
			return errors.New("a kill out of range")
		}
		ix.kills = append(ix.kills, k)
	}
	return nil
}

// verify checks what parseIdx leaves to use: the order of the records,
// each within the bytes covered and of a known type.
func (ix *packIdx) verify() error {
	var last packRec
	for i := range ix.n {
		r := ix.rec(i)
		switch {
		case i > 0 && compareRecs(last, r) >= 0:
			return errors.New("records out of order")
		case !ix.inRange(r):
			return fmt.Errorf("a record at %d beyond the %d bytes covered", r.off, ix.covered)
		case r.typ != recObject && r.typ != recEntry || r.enc != encRaw && r.enc != encZstd:
			return errors.New("a record of unknown type or encoding")
		}
		if f := binary.LittleEndian.Uint32(ix.fanout[4*int(r.id[0]):]); i >= int(f) {
			return errors.New("fan-out table does not match the records")
		}
		last = r
	}
	return nil
}

// inRange reports whether r lies within the bytes the index covers.
func (ix *packIdx) inRange(r packRec) bool {
	return r.off >= int64(packHeaderSize) && r.end() <= ix.covered
}

// rec returns record i (of a whole index).
func (ix *packIdx) rec(i int) packRec { return decodeIdxRec(ix.recs[i*idxRecSize:]) }

// decodeIdxRec decodes the index record e.
func decodeIdxRec(e []byte) packRec {
	var r packRec
	copy(r.id[:], e[:32])
	r.off = int64(binary.LittleEndian.Uint64(e[32:]))
	r.stored = binary.LittleEndian.Uint32(e[40:])
	r.size = binary.LittleEndian.Uint32(e[44:])
	r.typ, r.enc = e[48], e[49]
	return r
}

// find appends to out the records with id and type typ.
func (ix *packIdx) find(id *[32]byte, typ byte, out []packRec) []packRec {
	lo := 0
	if id[0] > 0 {
		lo = int(binary.LittleEndian.Uint32(ix.fanout[4*(int(id[0])-1):]))
	}
	hi := int(binary.LittleEndian.Uint32(ix.fanout[4*int(id[0]):]))
	if ix.lazy() {
		ix.lookups.Add(1)
		return ix.findLazy(id, typ, lo, hi, out)
	}
	// The first record whose id is not below id.
	i, j := lo, hi
	for i < j {
		m := int(uint(i+j) >> 1)
		if bytes.Compare(ix.recs[m*idxRecSize:m*idxRecSize+32], id[:]) < 0 {
			i = m + 1
		} else {
			j = m
		}
	}
	for ; i < hi && bytes.Equal(ix.recs[i*idxRecSize:i*idxRecSize+32], id[:]); i++ {
		if r := ix.rec(i); r.typ == typ && ix.inRange(r) {
			out = append(out, r)
		}
	}
	return out
}

// findLazy is find in the records [lo, hi) of a lazy index, read from
// its file: a window of records around where id's first record is likely
// to be (ids are SHA-256 digests, evenly spread: the place is interpolated
// from the id's next bytes; the window is wide enough that the first one
// read holds it nearly always), others until one holds it, then the
// records from it on while they are id's. An index that cannot be read
// gives a miss.
func (ix *packIdx) findLazy(id *[32]byte, typ byte, lo, hi int, out []packRec) []packRec {
	const window = 64
	end := hi
	read := func(at, n int) []byte {
		b := make([]byte, n*idxRecSize)
		if _, err := ix.file.ReadAt(b, int64(idxRecordsAt+at*idxRecSize)); err != nil {
			return nil
		}
		return b
	}
	idOf := func(b []byte, i int) []byte { return b[i*idxRecSize : i*idxRecSize+32] }
	key := float64(binary.BigEndian.Uint64(id[1:9])) / (1 << 64)
	// Narrow [lo, hi) to a window that holds id's first record (the
	// first whose id is not below id), if any; b holds the records from
	// at on, when they are read already.
	var b []byte
	at := lo
	for b == nil && hi-lo > window {
		mid := lo + int(float64(hi-lo)*key) - window/2
		mid = max(lo, min(mid, hi-window))
		w := read(mid, window)
		if w == nil {
			return out
		}
		switch {
		case bytes.Compare(id[:], idOf(w, 0)) <= 0:
			hi = mid + 1 // in [lo, mid]
		case bytes.Compare(id[:], idOf(w, window-1)) > 0:
			lo = mid + window // beyond the window
		default:
			b, at = w, mid // within it
		}
	}
	if b == nil {
		if b, at = read(lo, hi-lo), lo; b == nil {
			return out
		}
	}
	i := 0
	for i < len(b)/idxRecSize && bytes.Compare(idOf(b, i), id[:]) < 0 {
		i++
	}
	// id's records from there on (read further while they go on).
	for {
		for ; i < len(b)/idxRecSize; i++ {
			e := b[i*idxRecSize:]
			if !bytes.Equal(e[:32], id[:]) {
				return out
			}
			if r := decodeIdxRec(e); r.typ == typ && ix.inRange(r) {
				out = append(out, r)
			}
		}
		at += len(b) / idxRecSize
		if at >= end {
			return out
		}
		if b = read(at, min(window, end-at)); b == nil {
			return out
		}
		i = 0
	}
}

// loadWhole reads the records of a lazy index whole, checking its
// checksum, and returns the index so read (or an error: then the pack is
// scanned instead).
func (ix *packIdx) loadWhole(name packName, size int64) (*packIdx, error) {
	n := int64(idxRecordsAt) + int64(len(ix.kills)+ix.n)*idxRecSize + idxTrailerLen
	b := make([]byte, n)
	if _, err := ix.file.ReadAt(b, 0); err != nil {
		return nil, err
	}
	return parseIdx(b, name, size)
}

// all calls fn with every record (of a lazy index, read from its file
// for the purpose).
func (ix *packIdx) all(fn func(packRec)) {
	recs := ix.recs
	if ix.lazy() {
		recs = make([]byte, ix.n*idxRecSize)
		if _, err := ix.file.ReadAt(recs, idxRecordsAt); err != nil {
			return
		}
	}
	for i := range ix.n {
		if r := decodeIdxRec(recs[i*idxRecSize:]); ix.inRange(r) {
			fn(r)
		}
	}
}
