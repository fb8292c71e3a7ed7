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
// present nothing is written; a copy that fails verification is set aside
// in corrupt/ and replaced. Objects smaller than looseLimit are appended
// to the handle's pack, larger ones (and every object of a scratch store)
// are loose files. Concurrent Puts of the same data, from goroutines or
// processes, are safe (at worst the object is stored twice, and GC keeps
// one copy).
func (s *Store) Put(data []byte) (Digest, error) {
	d := Sum(data)
	if s.untrusted {
		return Digest{}, fmt.Errorf("artifacts: put %v: %w", d, s.errUntrusted())
	}
	packed := s.packsObject(len(data))
	// A copy found present is not written again: the view must be fresh,
	// or a copy another process has since set aside would be taken for
	// one.
	s.refreshPacks()
	err := s.checkFresh(d, int64(len(data)), true)
	switch {
	case err == nil:
		return d, nil
	case errors.Is(err, ErrNotFound):
		// Write it below.
	case errors.Is(err, ErrCorrupt):
		// Rewrite it below, unless the bad file could not be moved aside:
		// the rename would then fail or replace the evidence. (A bad
		// packed copy that could not be set aside stays beside the new
		// one; reads skip it.)
		if ce := (*CorruptError)(nil); errors.As(err, &ce) && ce.MoveErr != nil && !packed {
			return Digest{}, fmt.Errorf("artifacts: put %v: cannot replace it: %w", d, err)
		}
	default:
		return Digest{}, fmt.Errorf("artifacts: put %v: %w", d, err)
	}
	if packed {
		if _, err := s.appendRecord(recObject, d, data); err != nil {
			return Digest{}, fmt.Errorf("artifacts: put %v: %w", d, err)
		}
		return d, nil
	}
	if err := s.writeAtomic(objectRel(d), data); err != nil {
		return Digest{}, fmt.Errorf("artifacts: put %v: %w", d, err)
	}
	return d, nil
}

// packsObject reports whether an object of size bytes goes into a pack.
func (s *Store) packsObject(size int) bool { return !s.scratch && size < looseLimit }

// Get returns the bytes of object d after checking their SHA-256. A missing
// object gives an error wrapping ErrNotFound; one whose bytes do not match is
// set aside in corrupt/ and gives a *CorruptError (wrapping ErrCorrupt).
func (s *Store) Get(d Digest) ([]byte, error) {
	data, cerr, err := s.getPacked(d)
	if data != nil || err != nil {
		return data, err
	}
	data, err = s.getLoose(d)
	if cerr != nil && errors.Is(err, ErrNotFound) {
		return nil, cerr
	}
	return data, err
}

// getPacked reads d from the packs: its bytes from the first live copy
// that verifies, else the error of the first bad copy (cerr, each set
// aside) or an error reading (err).
func (s *Store) getPacked(d Digest) (data []byte, cerr *CorruptError, err error) {
	s.visitPacked(d, recObject, false, func(l packLoc) bool {
		raw, b, rerr := s.readRecord(l)
		if re := (*readError)(nil); errors.As(rerr, &re) {
			err = fmt.Errorf("artifacts: get %v: reading %s: %w", d, l.where(s), rerr)
			return true
		}
		if rerr == nil {
			if got := Sum(b); got == d {
				data = b
				return true
			} else {
				rerr = fmt.Errorf("content hashes to %v", got)
			}
		}
		if ce := s.quarantineRecord(l, "object", d.String(), raw, rerr.Error()); ce != nil && cerr == nil {
			cerr = ce
		}
		return false
	})
	if data != nil || err != nil {
		return data, nil, err
	}
	return nil, cerr, nil
}

// getLoose is Get of the loose file objects/<2 hex>/<64 hex>.
func (s *Store) getLoose(d Digest) ([]byte, error) {
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

// Has reports whether object d is present: a live record of a pack, or a
// regular file under its name. It reads no object, so it is cheap enough
// for the no-op path; use Verify or Get to check the content.
func (s *Store) Has(d Digest) bool {
	return s.hasPacked(d, recObject) || s.dir.isRegular(objectRel(d))
}

// Verify re-hashes object d. It returns nil if the object is present and
// intact, an error wrapping ErrNotFound if it is absent, and a *CorruptError
// if it does not match (the bad copy is then set aside in corrupt/).
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
// Verify checks each (a corrupt one is set aside in corrupt/); it stops at
// the first that is not.
func (s *Store) VerifyAll(ds []Digest) bool {
	for _, d := range ds {
		if s.Verify(d) != nil {
			return false
		}
	}
	return true
}

// check verifies object d: a packed copy, else the loose file, streamed
// through SHA-256. wantSize < 0 means the size is not known; otherwise a
// size mismatch is corruption without reading the bytes.
func (s *Store) check(d Digest, wantSize int64) error {
	return s.checkFresh(d, wantSize, false)
}

// checkFresh is check; fresh says the caller has just refreshed the view.
func (s *Store) checkFresh(d Digest, wantSize int64, fresh bool) error {
	var cerr *CorruptError
	var ioErr error
	ok := false
	s.visitPackedFresh(d, recObject, false, fresh, func(l packLoc) bool {
		if wantSize >= 0 && int64(l.rec.size) != wantSize {
			raw, _, _ := s.readRecord(l)
			if ce := s.quarantineRecord(l, "object", d.String(), raw, fmt.Sprintf("size %d, want %d", l.rec.size, wantSize)); ce != nil && cerr == nil {
				cerr = ce
			}
			return false
		}
		raw, data, err := s.readRecord(l)
		if re := (*readError)(nil); errors.As(err, &re) {
			ioErr = fmt.Errorf("reading %s: %w", l.where(s), err)
			return true
		}
		if err == nil {
			if got := Sum(data); got == d {
				ok = true
				return true
			} else {
				err = fmt.Errorf("content hashes to %v", got)
			}
		}
		if ce := s.quarantineRecord(l, "object", d.String(), raw, err.Error()); ce != nil && cerr == nil {
			cerr = ce
		}
		return false
	})
	switch {
	case ok:
		return nil
	case ioErr != nil:
		return ioErr
	}
	err := s.checkLoose(d, wantSize)
	if cerr != nil && errors.Is(err, ErrNotFound) {
		return cerr
	}
	return err
}

// checkLoose is check of the loose file.
func (s *Store) checkLoose(d Digest, wantSize int64) error {
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

// objectHasSize reports whether object d is present with size bytes (a
// live packed record, or a loose regular file), without reading it, and
// if not, why.
func (s *Store) objectHasSize(d Digest, size int64) error {
	for _, l := range s.findPacked(d, recObject) {
		if int64(l.rec.size) == size {
			return nil
		}
	}
	fi, err := s.dir.lstat(objectRel(d))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("object %v %w", d, ErrNotFound)
	case err != nil:
		return err
	case !fi.Mode().IsRegular():
		return fmt.Errorf("object %v is %s", d, notRegular(fi))
	case fi.Size() != size:
		return fmt.Errorf("object %v has %d bytes, the entry says %d", d, fi.Size(), size)
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
