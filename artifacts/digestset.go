package artifacts

import "encoding/binary"

// DigestSet is a set of digests, built once and then only read: a store's
// object listing against which the no-op checks of several protocols look
// up a hundred thousand outputs (thv readings). Its digests are kept as
// the store keeps them, by fan-out directory (their first byte), each
// directory's with a small open-addressing table of positions indexed by
// eight of their bytes (a digest's bytes are uniformly distributed): a
// lookup touches one slot and one digest, where a map[Digest]bool hashes
// all 32 bytes, and a sorted slice takes a dozen scattered reads.
type DigestSet struct {
	dirs [256]digestDir
	n    int
}

type digestDir struct {
	ds    []Digest
	slots []uint32 // position in ds + 1; 0 is empty
}

// NewDigestSet returns the set of ds.
func NewDigestSet(ds []Digest) *DigestSet {
	s := &DigestSet{}
	var byDir [256][]Digest
	for _, d := range ds {
		byDir[d[0]] = append(byDir[d[0]], d)
	}
	for i := range byDir {
		s.setDir(byte(i), byDir[i])
	}
	s.count()
	return s
}

// count sets n once every directory is set.
func (s *DigestSet) count() {
	s.n = 0
	for i := range s.dirs {
		s.n += len(s.dirs[i].ds)
	}
}

// setDir makes ds, all of fan-out directory i, that directory's digests
// (ds is kept, a repeat dropped in place); directories can be set at once
// on several goroutines, then count.
func (s *DigestSet) setDir(i byte, ds []Digest) { s.dirs[i] = newDigestDir(ds) }

// newDigestDir indexes ds, all of one fan-out directory (ds is kept, a
// repeat dropped in place).
func newDigestDir(ds []Digest) digestDir {
	size := 4
	for size < 2*len(ds) {
		size *= 2
	}
	dir := digestDir{ds: ds[:0], slots: make([]uint32, size)}
	mask := uint64(size - 1)
	for _, d := range ds {
		j := slotOf(d) & mask
		for ; dir.slots[j] != 0; j = (j + 1) & mask {
			if dir.ds[dir.slots[j]-1] == d {
				break
			}
		}
		if dir.slots[j] == 0 {
			dir.ds = append(dir.ds, d) // at or before d's own place in ds
			dir.slots[j] = uint32(len(dir.ds))
		}
	}
	return dir
}

// findName returns the position in dir.ds of the digest whose file name
// (64 lowercase hex digits) is name, or false. Only the 16 digits of the
// bytes the table is indexed by are decoded before it is probed, so an
// object that was not asked for costs a probe, not a whole decoding.
func (dir *digestDir) findName(name []byte) (int, bool) {
	if len(name) != 2*len(Digest{}) || len(dir.slots) == 0 {
		return 0, false
	}
	var b [8]byte
	if !decodeLowerHex(b[:], name[16:32]) {
		return 0, false
	}
	key := binary.LittleEndian.Uint64(b[:])
	mask := uint64(len(dir.slots) - 1)
	for j := key & mask; dir.slots[j] != 0; j = (j + 1) & mask {
		i := int(dir.slots[j] - 1)
		if slotOf(dir.ds[i]) != key {
			continue
		}
		var d Digest
		if decodeLowerHex(d[:], name) && d == dir.ds[i] {
			return i, true
		}
	}
	return 0, false
}

func slotOf(d Digest) uint64 { return binary.LittleEndian.Uint64(d[8:16]) }

// Has reports whether d is in the set.
func (s *DigestSet) Has(d Digest) bool {
	if s == nil {
		return false
	}
	dir := &s.dirs[d[0]]
	if len(dir.slots) == 0 {
		return false
	}
	mask := uint64(len(dir.slots) - 1)
	for j := slotOf(d) & mask; dir.slots[j] != 0; j = (j + 1) & mask {
		if dir.ds[dir.slots[j]-1] == d {
			return true
		}
	}
	return false
}

// Len is the number of digests in the set.
func (s *DigestSet) Len() int {
	if s == nil {
		return 0
	}
	return s.n
}
