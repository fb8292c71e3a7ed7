package artifacts

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
)

// ErrCorrupt is wrapped by every *CorruptError.
var ErrCorrupt = errors.New("corrupt")

// CorruptError reports a store file that failed verification. The file has
// been moved to MovedTo under corrupt/ (unless MoveErr says why it could not
// be), so it is never returned and the next lookup is a plain miss. Through
// Store.Untrusted nothing is ever moved: MoveErr then says the file was left
// in place, and every read of it reports it again.
type CorruptError struct {
	What    string // "object" or "index entry"
	Name    string // the digest or key, "sha256:…"
	Path    string // where the file was
	Reason  string // what was wrong with it
	MovedTo string // where it is now; "" if it was already gone or could not be moved
	MoveErr error  // why it could not be moved, if it could not
}

// Error names the file, the digest or key, what was wrong and where the
// file is now.
func (e *CorruptError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "artifacts: corrupt %s %s at %s: %s", e.What, e.Name, e.Path, e.Reason)
	switch {
	case e.MovedTo != "":
		fmt.Fprintf(&b, " (moved to %s)", e.MovedTo)
	case errors.Is(e.MoveErr, errLeftInPlace):
		fmt.Fprintf(&b, " (%v)", e.MoveErr)
	case e.MoveErr != nil:
		fmt.Fprintf(&b, " (could not move it aside: %v)", e.MoveErr)
	}
	return b.String()
}

// Unwrap makes errors.Is(err, ErrCorrupt) true.
func (e *CorruptError) Unwrap() error { return ErrCorrupt }

// errLeftInPlace is the MoveErr of every CorruptError of an untrusted view.
var errLeftInPlace = errors.New("left in place: a scratch store is never quarantined into")

// quarantine moves the bad file at rel to corrupt/ and returns the error
// describing it. read is the FileInfo of the file that was found bad: if a
// writer has renamed a fresh file over rel since then, the fresh file is
// left alone. The name in corrupt/ is made unique, so earlier evidence is
// never overwritten. Like every other operation of the store it follows no
// link: if corrupt/ (or any directory on the way) is a link, nothing is
// moved and MoveErr says why. Through an untrusted view nothing is moved
// at all.
func (s *Store) quarantine(what, name, rel string, read fs.FileInfo, reason string) *CorruptError {
	e := &CorruptError{What: what, Name: name, Path: s.dir.abs(rel), Reason: reason}
	if s.untrusted {
		e.MoveErr = errLeftInPlace
		return e
	}
	cur, err := s.dir.lstat(rel)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return e // already moved by another reader
	case err != nil:
		e.MoveErr = err
		return e
	case read != nil && !os.SameFile(cur, read):
		return e // replaced since we read it
	}
	if err := s.dir.mkdir(corruptDir, dirPerm); err != nil && !errors.Is(err, fs.ErrExist) {
		e.MoveErr = err
		return e
	}
	_, base := splitRel(rel)
	prefix := strings.ReplaceAll(what, " ", "-") + "-" + base + "-"
	var dst, holder string
	if cur.IsDir() {
		// A directory cannot be renamed over a file: it goes into a
		// fresh directory of its own under corrupt/.
		holder, err = uniqueName(corruptDir, prefix, "", func(rel string) error { return s.dir.mkdir(rel, dirPerm) })
		if err != nil {
			e.MoveErr = err
			return e
		}
		dst = holder + sep + base
	} else {
		// A placeholder the rename replaces: no earlier name is reused.
		dst, err = uniqueName(corruptDir, prefix, "", func(rel string) error {
			f, err := s.dir.open(rel, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
			if err == nil {
				f.Close()
			}
			return err
		})
		if err != nil {
			e.MoveErr = err
			return e
		}
	}
	if err := s.dir.rename(rel, dst); err != nil {
		if holder != "" {
			s.dir.remove(holder)
		} else {
			s.dir.remove(dst)
		}
		if !errors.Is(err, fs.ErrNotExist) {
			e.MoveErr = err
		}
		return e
	}
	e.MovedTo = s.dir.abs(dst)
	parent, _ := splitRel(rel)
	_ = syncDir(s.dir, parent)
	_ = syncDir(s.dir, corruptDir)
	return e
}

// quarantineLink handles an error opening rel: if rel is a symbolic link
// (which the store never creates, and never follows), it is moved to
// corrupt/ and reported; otherwise (a link further up the path included)
// quarantineLink returns nil and the caller reports the error.
func (s *Store) quarantineLink(what, name, rel string, openErr error) *CorruptError {
	if errors.Is(openErr, fs.ErrNotExist) {
		return nil
	}
	fi, err := s.dir.lstat(rel)
	if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		return nil
	}
	return s.quarantine(what, name, rel, fi, notRegular(fi))
}

// notRegular describes a file that should have been a regular file.
func notRegular(fi fs.FileInfo) string {
	switch t := fi.Mode().Type(); {
	case t&fs.ModeSymlink != 0:
		return "a symbolic link, not a regular file"
	case t.IsDir():
		return "a directory, not a regular file"
	default:
		return fmt.Sprintf("not a regular file (mode %v)", fi.Mode())
	}
}

// SetAsideEntry moves the index entry for k to corrupt/, as evidence, and
// says why in reason; a missing entry is no error. The pipeline sets aside
// an entry that disagrees with the lock before it recomputes the task:
// the recomputation decides, and the loser is kept, not overwritten. Every
// entry of the key is set aside: the loose file and the packed records.
func (s *Store) SetAsideEntry(k Key, reason string) error {
	rel := entryRel(k)
	fi, err := s.dir.lstat(rel)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return err
	default:
		if ce := s.quarantine("index entry", k.String(), rel, fi, reason); ce.MoveErr != nil {
			return ce
		}
	}
	for _, l := range s.findPacked(k, recEntry) {
		raw, _, _ := s.readRecord(l)
		if ce := s.quarantineRecord(l, "index entry", k.String(), raw, reason); ce != nil && ce.MoveErr != nil {
			return ce
		}
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
