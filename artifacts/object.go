package artifacts

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// ErrNotFound is wrapped by errors for objects absent from the store.
// errors.Is(err, fs.ErrNotExist) is also true for such errors.
var ErrNotFound error = &notFoundError{"not found"}

// notFoundError is not zero-sized, so that pointers to it compare reliably.
type notFoundError struct{ msg string }

func (e *notFoundError) Error() string      { return e.msg }
func (*notFoundError) Is(target error) bool { return target == fs.ErrNotExist }

// Put stores data and returns its digest. If a verified copy is already
// present nothing is written; a copy that fails verification is moved to
// corrupt/ and replaced. Concurrent Puts of the same data, from goroutines or
// processes, are safe.
func (s *Store) Put(data []byte) (Digest, error) {
	d := Sum(data)
	if s.untrusted {
		return Digest{}, fmt.Errorf("artifacts: put %v: %w", d, s.errUntrusted())
	}
	err := s.check(d, int64(len(data)))
	switch {
	case err == nil:
		return d, nil
	case errors.Is(err, ErrNotFound):
		// Write it below.
	case errors.Is(err, ErrCorrupt):
		// Rewrite it below, unless the bad file could not be moved aside:
		// the rename would then fail or replace the evidence.
		if ce := (*CorruptError)(nil); errors.As(err, &ce) && ce.MoveErr != nil {
			return Digest{}, fmt.Errorf("artifacts: put %v: cannot replace it: %w", d, err)
		}
	default:
		return Digest{}, fmt.Errorf("artifacts: put %v: %w", d, err)
	}
	if err := s.writeAtomic(objectRel(d), data); err != nil {
		return Digest{}, fmt.Errorf("artifacts: put %v: %w", d, err)
	}
	return d, nil
}

// Get returns the bytes of object d after checking their SHA-256. A missing
// object gives an error wrapping ErrNotFound; one whose bytes do not match is
// moved to corrupt/ and gives a *CorruptError (wrapping ErrCorrupt).
func (s *Store) Get(d Digest) ([]byte, error) {
	rel := objectRel(d)
	f, err := s.dir.open(rel, os.O_RDONLY|oNonblock, 0)
	if err != nil {
		if ce := s.quarantineLink("object", d.String(), rel, err); ce != nil {
			return nil, ce
		}
		return nil, s.openErr("get", d, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("artifacts: get %v: %w", d, err)
	}
	if why := s.notStoreFile(fi); why != "" {
		return nil, s.quarantine("object", d.String(), rel, fi, why)
	}
	data := make([]byte, fi.Size())
	if _, err := io.ReadFull(f, data); err != nil {
		return nil, fmt.Errorf("artifacts: get %v: reading %s: %w", d, s.dir.abs(rel), err)
	}
	if got := Sum(data); got != d {
		return nil, s.quarantine("object", d.String(), rel, fi, fmt.Sprintf("content hashes to %v", got))
	}
	return data, nil
}

// Has reports whether object d is present. It only looks at the file's
// type, so it is cheap enough for the no-op path; use Verify or Get to check
// the content.
func (s *Store) Has(d Digest) bool { return s.dir.isRegular(objectRel(d)) }

// Verify re-hashes object d. It returns nil if the object is present and
// intact, an error wrapping ErrNotFound if it is absent, and a *CorruptError
// if it does not match (the file is then moved to corrupt/).
func (s *Store) Verify(d Digest) error {
	if err := s.check(d, -1); err != nil {
		if errors.Is(err, ErrNotFound) || errors.Is(err, ErrCorrupt) {
			return err
		}
		return fmt.Errorf("artifacts: verify %v: %w", d, err)
	}
	return nil
}

// VerifyAll reports whether every object of ds is present and intact, as
// Verify checks each (a corrupt one is moved to corrupt/); it stops at the
// first that is not.
func (s *Store) VerifyAll(ds []Digest) bool {
	for _, d := range ds {
		if s.Verify(d) != nil {
			return false
		}
	}
	return true
}

// check verifies object d, streaming it through SHA-256. wantSize < 0 means
// the size is not known; otherwise a size mismatch is corruption without
// reading the file.
func (s *Store) check(d Digest, wantSize int64) error {
	rel := objectRel(d)
	f, err := s.dir.open(rel, os.O_RDONLY|oNonblock, 0)
	if err != nil {
		if ce := s.quarantineLink("object", d.String(), rel, err); ce != nil {
			return ce
		}
		return s.openErr("verify", d, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if why := s.notStoreFile(fi); why != "" {
		return s.quarantine("object", d.String(), rel, fi, why)
	}
	if wantSize >= 0 && fi.Size() != wantSize {
		return s.quarantine("object", d.String(), rel, fi, fmt.Sprintf("size %d, want %d", fi.Size(), wantSize))
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return fmt.Errorf("reading %s: %w", s.dir.abs(rel), err)
	}
	var got Digest
	h.Sum(got[:0])
	if got != d {
		return s.quarantine("object", d.String(), rel, fi, fmt.Sprintf("content hashes to %v", got))
	}
	return nil
}

func (s *Store) openErr(op string, d Digest, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("artifacts: %s %v: object %w in %s", op, d, ErrNotFound, s.root)
	}
	return fmt.Errorf("artifacts: %s %v: %w", op, d, err)
}

// notStoreFile returns why fi, an open object or entry, is not a file the
// store wrote, or "": it must be a regular file and, read through an
// untrusted view, have no other hard link (the store never makes one).
func (s *Store) notStoreFile(fi fs.FileInfo) string {
	if !fi.Mode().IsRegular() {
		return notRegular(fi)
	}
	if n := linkCount(fi); s.untrusted && n > 1 {
		return fmt.Sprintf("a file with %d hard links (the store never makes hard links)", n)
	}
	return ""
}
