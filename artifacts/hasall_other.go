//go:build !linux

package artifacts

// hasRun reports whether every object of run is a regular file (Has).
func (s *Store) hasRun(run []Digest) bool {
	for _, d := range run {
		if !s.Has(d) {
			return false
		}
	}
	return true
}
