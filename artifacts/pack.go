package artifacts

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// Packs: small objects and index entries are appended to pack files, as in
// git's packfiles and restic's and kopia's packs, instead of one file each
// (a file costs a 4 kB block, an inode and some twenty system calls, and
// most of the store's files are a few hundred bytes). Objects of looseLimit
// bytes or more stay loose files, as before.
//
// A pack, packs/<16 hex>.pack, is a header (packMagic, then the pack's
// name) followed by records. A record is a header of recHeaderSize bytes
// and a payload:
//
//	0  "THVr"
//	4  type: 'o' an object, 'e' an index entry, 'k' a kill
//	5  encoding of the payload: 0 as is, 1 zstd
//	6  two zero bytes
//	8  stored size of the payload (uint32, little-endian)
//	12 size of the decoded payload (uint32)
//	16 id: an object's digest, an entry's key, the id of the record a kill kills
//	48 CRC-32C of bytes 0..47
//
// An object record's id is the SHA-256 of its decoded payload, an entry's
// payload is the exact bytes a loose index file would hold (EncodeEntry),
// and a kill's payload names the record it kills: its pack's name (8
// bytes) and its offset in that pack (uint64). Nothing in a pack vouches for
// itself: every object read is decoded and re-hashed, every entry decoded
// strictly for its key, as a loose file is. The header's CRC only tells a
// record header from garbage (a torn tail, a page of zeros after a power
// cut), so that a reader scanning a pack stops there.
//
// Each writer (a Store handle) appends to a pack of its own, which it holds
// flock'ed while it writes: records are only ever appended, and a record
// once written is never changed in place. A record is removed by a kill
// (a quarantine, the replacement of an index entry) and its bytes dropped by
// GC, which copies the live records of packs into new ones and removes the
// old. Each pack has an index file, packs/<16 hex>.idx (packidx.go), written
// at the store's barrier (Sync), that lists its records by id: it is a
// cache of the pack's records, rebuilt from the pack whenever it is missing,
// short or does not check.

const (
	packsDir = "packs"

	// packMagic starts every pack file; its last byte is the format's
	// version.
	packMagic      = "THVPACK\x01"
	packHeaderSize = len(packMagic) + 8 // then the pack's name

	recMagic      = "THVr"
	recHeaderSize = 52

	recObject byte = 'o'
	recEntry  byte = 'e'
	recKill   byte = 'k'

	encRaw  byte = 0
	encZstd byte = 1

	killPayloadSize = 16

	// maxPackSize bounds a pack file (offsets fit in 32 bits, so do kill
	// targets); writers roll over far below it (packLimit).
	maxPackSize = 1 << 32
)

// packLimit is the size at which a writer closes its pack and starts
// another; looseLimit the size from which an object is a loose file
// instead. Tests change them.
var (
	packLimit  int64 = 256 << 20
	looseLimit       = 1 << 20
)

// packName names a pack: 8 random bytes, 16 hex digits in its file names.
type packName [8]byte

func (n packName) String() string { return hex.EncodeToString(n[:]) }

func newPackName() packName {
	var n packName
	if _, err := rand.Read(n[:]); err != nil {
		panic(err) // crypto/rand never fails on a supported system
	}
	return n
}

// parsePackFile reads "<16 hex><ext>", the names of a pack's files.
func parsePackFile(name, ext string) (packName, bool) {
	var n packName
	if len(name) != 16+len(ext) || name[16:] != ext {
		return n, false
	}
	return n, decodeLowerHex(n[:], []byte(name[:16]))
}

const (
	packExt = ".pack"
	idxExt  = ".idx"
)

func packRel(n packName) string { return packsDir + sep + n.String() + packExt }
func idxRel(n packName) string  { return packsDir + sep + n.String() + idxExt }

// recHeader is a record's header, decoded.
type recHeader struct {
	typ    byte
	enc    byte
	stored uint32 // bytes of payload in the pack
	size   uint32 // bytes once decoded
	id     [32]byte
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func (h recHeader) put(b []byte) {
	copy(b, recMagic)
	b[4], b[5], b[6], b[7] = h.typ, h.enc, 0, 0
	binary.LittleEndian.PutUint32(b[8:], h.stored)
	binary.LittleEndian.PutUint32(b[12:], h.size)
	copy(b[16:48], h.id[:])
	binary.LittleEndian.PutUint32(b[48:], crc32.Checksum(b[:48], castagnoli))
}

// errNotRecord means the bytes at an offset are no record header.
var errNotRecord = errors.New("not a record header")

// parseRecHeader decodes b[:recHeaderSize], checking its magic, CRC and
// fields.
func parseRecHeader(b []byte) (recHeader, error) {
	if len(b) < recHeaderSize || string(b[:4]) != recMagic ||
		binary.LittleEndian.Uint32(b[48:]) != crc32.Checksum(b[:48], castagnoli) {
		return recHeader{}, errNotRecord
	}
	h := recHeader{typ: b[4], enc: b[5], stored: binary.LittleEndian.Uint32(b[8:]), size: binary.LittleEndian.Uint32(b[12:])}
	copy(h.id[:], b[16:48])
	switch {
	case b[6] != 0 || b[7] != 0:
		return recHeader{}, fmt.Errorf("%w: reserved bytes set", errNotRecord)
	case h.typ != recObject && h.typ != recEntry && h.typ != recKill:
		return recHeader{}, fmt.Errorf("%w: unknown type %q", errNotRecord, h.typ)
	case h.enc != encRaw && h.enc != encZstd:
		return recHeader{}, fmt.Errorf("%w: unknown encoding %d", errNotRecord, h.enc)
	case h.enc == encRaw && h.stored != h.size:
		return recHeader{}, fmt.Errorf("%w: raw payload of %d bytes stored in %d", errNotRecord, h.size, h.stored)
	case h.typ == recKill && (h.enc != encRaw || h.size != killPayloadSize):
		return recHeader{}, fmt.Errorf("%w: malformed kill", errNotRecord)
	case int64(h.size) > maxRecordSize:
		return recHeader{}, fmt.Errorf("%w: payload of %d bytes", errNotRecord, h.size)
	}
	return h, nil
}

// maxRecordSize bounds a record's decoded payload: objects of looseLimit
// bytes or more are loose, and an index entry is at most maxEntrySize.
const maxRecordSize = maxEntrySize

// killTarget is what a kill's payload names: a record by its pack and
// offset.
type killTarget struct {
	pack packName
	off  int64
}

func (k killTarget) payload() []byte {
	b := make([]byte, killPayloadSize)
	copy(b, k.pack[:])
	binary.LittleEndian.PutUint64(b[8:], uint64(k.off))
	return b
}

func parseKill(b []byte) (killTarget, bool) {
	if len(b) != killPayloadSize {
		return killTarget{}, false
	}
	var k killTarget
	copy(k.pack[:], b)
	off := binary.LittleEndian.Uint64(b[8:])
	if off >= maxPackSize {
		return killTarget{}, false
	}
	k.off = int64(off)
	return k, true
}

// The payload codec: zstd (klauspost/compress, already in the build through
// parquet-go), kept only when it saves at least an eighth. Index entries
// shrink to about 60 %, one-row summaries to about 40 %; Parquet tables of
// many rows are compressed already and stay as they are.
var (
	zstdEnc = sync.OnceValue(func() *zstd.Encoder {
		// The fastest level: on a sample of index entries and one-row
		// tables its output is 2–3 % larger than the default level's,
		// at a fraction of its cost per call (smaller tables to set up).
		e, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithEncoderLevel(zstd.SpeedFastest))
		if err != nil {
			panic(err)
		}
		return e
	})
	zstdDec = sync.OnceValue(func() *zstd.Decoder {
		d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecoderMaxMemory(maxRecordSize))
		if err != nil {
			panic(err)
		}
		return d
	})
)

// encodePayload returns the bytes to store for data and their encoding.
func encodePayload(data []byte) ([]byte, byte) {
	if len(data) < 64 {
		return data, encRaw
	}
	z := zstdEnc().EncodeAll(data, make([]byte, 0, len(data)))
	if len(z) > len(data)-len(data)/8 {
		return data, encRaw
	}
	return z, encZstd
}

// decodePayload decodes a stored payload of header h.
func decodePayload(h recHeader, stored []byte) ([]byte, error) {
	if h.enc == encRaw {
		return stored, nil
	}
	out, err := zstdDec().DecodeAll(stored, make([]byte, 0, h.size))
	if err != nil {
		return nil, fmt.Errorf("undecodable payload: %v", err)
	}
	if len(out) != int(h.size) {
		return nil, fmt.Errorf("payload decodes to %d bytes, the header says %d", len(out), h.size)
	}
	return out, nil
}
