//go:build !linux

package artifacts

import "os"

var (
	hasAllBuf     = 0     // no directory is read whole
	hasAllNoTypes = false // (tests of the Linux way)
)

// hasRun reports whether every object of run is a regular file (Has).
func (s *Store) hasRun(run []Digest, _ []byte, _ *restamp) bool {
	for _, d := range run {
		if !s.dir.isRegular(objectRel(d)) {
			return false
		}
	}
	return true
}

// dropStamped keeps every run: no stamps are taken here (dirStamp).
func (s *Store) dropStamped(runs [][]Digest, _ *DirStamps) [][]Digest { return runs }

// listObjectDir appends to out the objects of the fan-out directory f:
// the regular files named by 64 hex digits.
func listObjectDir(f *os.File, _ []byte, out []Digest) ([]Digest, error) {
	names, err := f.ReadDir(-1)
	if err != nil {
		return out, err
	}
	for _, e := range names {
		if h, ok := parseHexName(e.Name()); ok && e.Type().IsRegular() {
			out = append(out, h)
		}
	}
	return out, nil
}
