package artifacts

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"slices"
)

// SetAsideEntry moves the index entry for k to corrupt/, as evidence, and
// says why in reason; a missing entry is no error. The pipeline sets aside
// an entry that disagrees with the lock before it recomputes the task:
// the recomputation decides, and the loser is kept, not overwritten.
func (s *Store) SetAsideEntry(k Key, reason string) error {
	rel := entryRel(k)
	fi, err := s.dir.lstat(rel)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	}
	if ce := s.quarantine("index entry", k.String(), rel, fi, reason); ce.MoveErr != nil {
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
	d, err := s.dir.openDir(corruptDir)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil || len(names) == 0 {
		return "", err
	}
	slices.Sort(names)
	h := sha256.New()
	for _, n := range names {
		h.Write([]byte(n + "\n"))
	}
	return fmt.Sprintf("%d:%x", len(names), h.Sum(nil)[:8]), nil
}
