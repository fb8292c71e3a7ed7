package artifacts

import (
	"bytes"
	"encoding/binary"
	"slices"
)

// DigestSet is a set of digests, built once and then only read: a store's
// object listing against which the no-op checks of several protocols look
// up a hundred thousand outputs (thv readings). Its digests are kept as
// the store keeps them, by fan-out directory (their first byte), each
// directory's sorted: no memory beyond the digests themselves, and a
// lookup is a binary search among a few hundred.
type DigestSet struct {
	dirs [256][]Digest
	n    int
}

// NewDigestSet returns the set of ds.
func NewDigestSet(ds []Digest) *DigestSet {
	s := &DigestSet{}
	for _, d := range ds {
		s.dirs[d[0]] = append(s.dirs[d[0]], d)
	}
	for i := range s.dirs {
		s.dirs[i] = sortDigests(s.dirs[i])
		s.n += len(s.dirs[i])
	}
	return s
}

// sortDigests sorts ds and removes repeats. Digests are uniformly
// distributed: eight bytes past the first (shared by a fan-out directory)
// almost always decide.
func sortDigests(ds []Digest) []Digest {
	slices.SortFunc(ds, compareDigests)
	return slices.Compact(ds)
}

func compareDigests(a, b Digest) int {
	x, y := binary.BigEndian.Uint64(a[1:9]), binary.BigEndian.Uint64(b[1:9])
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return bytes.Compare(a[:], b[:])
}

// Has reports whether d is in the set.
func (s *DigestSet) Has(d Digest) bool {
	if s == nil {
		return false
	}
	_, ok := slices.BinarySearchFunc(s.dirs[d[0]], d, compareDigests)
	return ok
}

// Len is the number of digests in the set.
func (s *DigestSet) Len() int {
	if s == nil {
		return 0
	}
	return s.n
}
