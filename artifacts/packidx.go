package artifacts

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"slices"
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
// place (a store of a hundred thousand records is read in a millisecond
// or two and never decoded whole).
type packIdx struct {
	covered int64
	n       int    // records
	recs    []byte // n records of idxRecSize bytes, sorted
	fanout  []byte // 256 uint32
	kills   []packKill
}

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
	if !bytes.Equal(b[8:16], name[:]) {
		return nil, errors.New("the index of another pack")
	}
	ix := &packIdx{covered: int64(binary.LittleEndian.Uint64(b[16:]))}
	n := int(binary.LittleEndian.Uint32(b[24:]))
	nk := int(binary.LittleEndian.Uint32(b[28:]))
	if ix.covered < int64(packHeaderSize) || ix.covered > size {
		return nil, fmt.Errorf("covers %d bytes of a pack of %d", ix.covered, size)
	}
	if int64(len(body)) != int64(idxRecordsAt)+int64(n+nk)*idxRecSize {
		return nil, errors.New("size does not match its counts")
	}
	ix.n = n
	ix.fanout = body[idxFanoutAt:idxRecordsAt]
	ix.recs = body[idxRecordsAt : idxRecordsAt+n*idxRecSize]
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
	ks := body[idxRecordsAt+n*idxRecSize:]
	for i := range nk {
		e := ks[i*idxRecSize:]
		var k packKill
		copy(k.id[:], e[:32])
		k.off = int64(binary.LittleEndian.Uint64(e[32:]))
		copy(k.target.pack[:], e[40:48])
		k.target.off = int64(binary.LittleEndian.Uint64(e[48:]))
		if k.off < int64(packHeaderSize) || k.off+recHeaderSize+killPayloadSize > ix.covered || k.target.off >= maxPackSize {
			return nil, errors.New("a kill out of range")
		}
		ix.kills = append(ix.kills, k)
	}
	return ix, nil
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

// rec returns record i.
func (ix *packIdx) rec(i int) packRec {
	e := ix.recs[i*idxRecSize:]
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

// all calls fn with every record.
func (ix *packIdx) all(fn func(packRec)) {
	for i := range ix.n {
		if r := ix.rec(i); ix.inRange(r) {
			fn(r)
		}
	}
}
