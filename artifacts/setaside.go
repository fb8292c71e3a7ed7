package artifacts

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// SetAsideEntry moves the index entry for k to corrupt/, as evidence, and
// says why in reason; a missing entry is no error. The pipeline sets aside
// an entry that disagrees with the lock before it recomputes the task:
// the recomputation decides, and the loser is kept, not overwritten.
func (s *Store) SetAsideEntry(k Key, reason string) error {
	p := s.entryPath(k)
	fi, err := os.Lstat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	}
	if ce := s.quarantine("index entry", k.String(), p, fi, reason); ce.MoveErr != nil {
		return ce
	}
	return nil
}

// QuarantineState fingerprints what corrupt/ holds: "" when nothing was
// ever set aside, otherwise a digest of the names there. It changes
// whenever something is quarantined (or removed from corrupt/), which is
// how a record made against the store's earlier state (a lock's seal)
// knows that it may no longer hold.
func (s *Store) QuarantineState() (string, error) {
	ents, err := os.ReadDir(filepath.Join(s.root, corruptDir))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", nil
	case err != nil:
		return "", err
	case len(ents) == 0:
		return "", nil
	}
	h := sha256.New()
	for _, e := range ents { // sorted by name
		h.Write([]byte(e.Name() + "\n"))
	}
	return fmt.Sprintf("%d:%x", len(ents), h.Sum(nil)[:8]), nil
}
