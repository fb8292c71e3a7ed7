package artifacts

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
)

// layoutVersion is the content of the VERSION file. Bump it on any change of
// the layout or of the index entry format, so that an old binary refuses a
// new store instead of misreading it.
const layoutVersion = "thv-store 1"

const (
	versionFile = "VERSION"
	objectsDir  = "objects"
	indexDir    = "index"
	tmpDir      = "tmp"
	corruptDir  = "corrupt"

	// Files are read-only once in place: nothing in the store is ever
	// modified, only created (by rename) or removed.
	filePerm = 0o444
	dirPerm  = 0o777
)

// ErrNotFound is wrapped by errors for objects absent from the store.
// errors.Is(err, fs.ErrNotExist) is also true for such errors.
var ErrNotFound error = &notFoundError{"not found"}

// notFoundError is not zero-sized, so that pointers to it compare reliably.
type notFoundError struct{ msg string }

func (e *notFoundError) Error() string      { return e.msg }
func (*notFoundError) Is(target error) bool { return target == fs.ErrNotExist }

// ErrCorrupt is wrapped by every *CorruptError.
var ErrCorrupt = errors.New("corrupt")

// CorruptError reports a store file that failed verification. The file has
// been moved to MovedTo under corrupt/ (unless MoveErr says why it could not
// be), so it is never returned and the next lookup is a plain miss.
type CorruptError struct {
	What    string // "object" or "index entry"
	Name    string // the digest or key, "sha256:…"
	Path    string // where the file was
	Reason  string // what was wrong with it
	MovedTo string // where it is now; "" if it was already gone or could not be moved
	MoveErr error  // why it could not be moved, if it could not
}

func (e *CorruptError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "artifacts: corrupt %s %s at %s: %s", e.What, e.Name, e.Path, e.Reason)
	switch {
	case e.MovedTo != "":
		fmt.Fprintf(&b, " (moved to %s)", e.MovedTo)
	case e.MoveErr != nil:
		fmt.Fprintf(&b, " (could not move it aside: %v)", e.MoveErr)
	}
	return b.String()
}

// Unwrap makes errors.Is(err, ErrCorrupt) true.
func (e *CorruptError) Unwrap() error { return ErrCorrupt }

// Store is a content-addressed store rooted at a directory. See the package
// documentation for the layout. The zero value is not usable; call Open.
type Store struct {
	root string // absolute, so that a later chdir cannot move the store
}

// Open opens the store rooted at dir, creating the layout if dir does not
// hold a store yet. A store written with another layout version is an error.
// Opening an existing store creates nothing, so it works on a read-only
// mount for Get, Has, Verify and GetEntry.
func Open(dir string) (*Store, error) {
	if dir == "" {
		return nil, errors.New("artifacts: open: empty store directory")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("artifacts: open %s: %w", dir, err)
	}
	s := &Store{root: abs}
	vpath := filepath.Join(abs, versionFile)
	v, err := os.ReadFile(vpath)
	switch {
	case err == nil:
		if got := strings.TrimSpace(string(v)); got != layoutVersion {
			return nil, fmt.Errorf("artifacts: open %s: store layout is %q, this build understands only %q (use a matching thv, or a new store directory)", abs, got, layoutVersion)
		}
		// Recreate a directory someone removed (say, rm -r .thv/tmp); on a
		// read-only mount of an intact store this only stats.
		for _, d := range []string{objectsDir, indexDir, tmpDir} {
			if err := os.MkdirAll(filepath.Join(abs, d), dirPerm); err != nil {
				return nil, fmt.Errorf("artifacts: open %s: %w", abs, err)
			}
		}
		return s, nil
	case !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("artifacts: open %s: %w", abs, err)
	}
	if fi, err := os.Stat(abs); err == nil && !fi.IsDir() {
		return nil, fmt.Errorf("artifacts: open %s: not a directory", abs)
	}
	for _, d := range []string{"", objectsDir, indexDir, tmpDir} {
		if err := os.MkdirAll(filepath.Join(abs, d), dirPerm); err != nil {
			return nil, fmt.Errorf("artifacts: open %s: %w", abs, err)
		}
	}
	// VERSION is written last and atomically: its presence means the
	// layout is complete. Two processes creating the store at once both
	// write the same bytes.
	if err := s.writeAtomic(vpath, []byte(layoutVersion+"\n")); err != nil {
		return nil, fmt.Errorf("artifacts: open %s: %w", abs, err)
	}
	return s, nil
}

// Root returns the absolute path of the store directory.
func (s *Store) Root() string { return s.root }

// ObjectPath returns where the object d lives (or would live). It is meant
// for read-only use, e.g. bind-mounting an input into a container; write
// only through Put.
func (s *Store) ObjectPath(d Digest) string {
	h := d.Hex()
	return filepath.Join(s.root, objectsDir, h[:2], h)
}

func (s *Store) entryPath(k Key) string {
	h := k.Hex()
	return filepath.Join(s.root, indexDir, h[:2], h+".json")
}

// Put stores data and returns its digest. If a verified copy is already
// present nothing is written; a copy that fails verification is moved to
// corrupt/ and replaced. Concurrent Puts of the same data, from goroutines or
// processes, are safe.
func (s *Store) Put(data []byte) (Digest, error) {
	d := Sum(data)
	err := s.check(d, int64(len(data)))
	switch {
	case err == nil:
		return d, nil
	case errors.Is(err, ErrNotFound), errors.Is(err, ErrCorrupt):
		// Write (or rewrite) it below.
	default:
		return Digest{}, fmt.Errorf("artifacts: put %v: %w", d, err)
	}
	if err := s.writeAtomic(s.ObjectPath(d), data); err != nil {
		return Digest{}, fmt.Errorf("artifacts: put %v: %w", d, err)
	}
	return d, nil
}

// Get returns the bytes of object d after checking their SHA-256. A missing
// object gives an error wrapping ErrNotFound; one whose bytes do not match is
// moved to corrupt/ and gives a *CorruptError (wrapping ErrCorrupt).
func (s *Store) Get(d Digest) ([]byte, error) {
	p := s.ObjectPath(d)
	f, err := os.Open(p)
	if err != nil {
		return nil, s.openErr("get", d, p, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("artifacts: get %v: %w", d, err)
	}
	data := make([]byte, fi.Size())
	if _, err := io.ReadFull(f, data); err != nil {
		return nil, fmt.Errorf("artifacts: get %v: reading %s: %w", d, p, err)
	}
	if got := Sum(data); got != d {
		return nil, s.quarantine("object", d.String(), p, fi, fmt.Sprintf("content hashes to %v", got))
	}
	return data, nil
}

// Has reports whether object d is present. It only stats the file, so it is
// cheap enough for the no-op path; use Verify or Get to check the content.
func (s *Store) Has(d Digest) bool {
	fi, err := os.Stat(s.ObjectPath(d))
	return err == nil && fi.Mode().IsRegular()
}

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

// check verifies object d, streaming it through SHA-256. wantSize < 0 means
// the size is not known; otherwise a size mismatch is corruption without
// reading the file.
func (s *Store) check(d Digest, wantSize int64) error {
	p := s.ObjectPath(d)
	f, err := os.Open(p)
	if err != nil {
		return s.openErr("verify", d, p, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return s.quarantine("object", d.String(), p, fi, "not a regular file")
	}
	if wantSize >= 0 && fi.Size() != wantSize {
		return s.quarantine("object", d.String(), p, fi, fmt.Sprintf("size %d, want %d", fi.Size(), wantSize))
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return fmt.Errorf("reading %s: %w", p, err)
	}
	var got Digest
	h.Sum(got[:0])
	if got != d {
		return s.quarantine("object", d.String(), p, fi, fmt.Sprintf("content hashes to %v", got))
	}
	return nil
}

func (s *Store) openErr(op string, d Digest, p string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("artifacts: %s %v: object %w in %s", op, d, ErrNotFound, s.root)
	}
	return fmt.Errorf("artifacts: %s %v: %w", op, d, err)
}

// quarantine moves the bad file at path to corrupt/ and returns the error
// describing it. read is the FileInfo of the file that was found bad: if a
// writer has renamed a fresh file over path since then, the fresh file is
// left alone. The name in corrupt/ is made unique, so earlier evidence is
// never overwritten.
func (s *Store) quarantine(what, name, path string, read fs.FileInfo, reason string) *CorruptError {
	e := &CorruptError{What: what, Name: name, Path: path, Reason: reason}
	cur, err := os.Lstat(path)
	if err != nil {
		return e // already moved by another reader
	}
	if read != nil && !os.SameFile(cur, read) {
		return e // replaced since we read it
	}
	cdir := filepath.Join(s.root, corruptDir)
	if err := os.MkdirAll(cdir, dirPerm); err != nil {
		e.MoveErr = err
		return e
	}
	prefix := strings.ReplaceAll(what, " ", "-") + "-" + filepath.Base(path) + "-"
	f, err := os.CreateTemp(cdir, prefix+"*")
	if err != nil {
		e.MoveErr = err
		return e
	}
	dst := f.Name()
	f.Close()
	if err := os.Rename(path, dst); err != nil {
		os.Remove(dst)
		if !errors.Is(err, fs.ErrNotExist) {
			e.MoveErr = err
		}
		return e
	}
	e.MovedTo = dst
	_ = syncDir(filepath.Dir(path))
	_ = syncDir(cdir)
	return e
}

// errTempLost means GC removed our temp file before we renamed it (possible
// only in the instant between creating and locking it); the write is retried.
var errTempLost = errors.New("temp file removed before rename")

// writeAtomic makes dst hold data, never showing a partial file: it writes a
// locked temp file in tmp/, fsyncs it, renames it over dst and fsyncs dst's
// directory, so the rename survives a power cut.
func (s *Store) writeAtomic(dst string, data []byte) error {
	dir := filepath.Dir(dst)
	if err := ensureDir(dir); err != nil {
		return err
	}
	for attempt := 0; ; attempt++ {
		err := s.writeOnce(dst, dir, data)
		if errors.Is(err, errTempLost) && attempt < 3 {
			continue
		}
		return err
	}
}

func (s *Store) writeOnce(dst, dir string, data []byte) (err error) {
	f, err := os.CreateTemp(filepath.Join(s.root, tmpDir), filepath.Base(dst)+".*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	renamed := false
	defer func() {
		if !renamed {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if err := lockTemp(f); err != nil {
		return fmt.Errorf("locking %s: %w", tmp, err)
	}
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("writing %s: %w", tmp, err)
	}
	if err := f.Chmod(filePerm); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("syncing %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, dst); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			if _, serr := os.Stat(dir); serr == nil {
				return errTempLost
			}
		}
		return err
	}
	renamed = true
	// Closing releases the lock; the file is already in place.
	if err := f.Close(); err != nil {
		return err
	}
	return syncDir(dir)
}

// ensureDir creates a fan-out directory on first use and makes its entry in
// the parent durable.
func ensureDir(dir string) error {
	err := os.Mkdir(dir, dirPerm)
	switch {
	case err == nil:
		return syncDir(filepath.Dir(dir))
	case errors.Is(err, fs.ErrExist):
		return nil
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(dir, dirPerm); err != nil {
			return err
		}
		return syncDir(filepath.Dir(dir))
	}
	return err
}

// syncDir fsyncs a directory so that renames and creations in it are
// durable. Filesystems that cannot sync directories (EINVAL, ENOTSUP) are
// accepted: there is nothing better to do on them.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ENOTSUP) {
		return fmt.Errorf("syncing directory %s: %w", dir, err)
	}
	return nil
}

// sameBytes reports whether the file at path holds exactly data; any error
// reading it counts as "no".
func sameBytes(path string, data []byte) bool {
	fi, err := os.Stat(path)
	if err != nil || fi.Size() != int64(len(data)) {
		return false
	}
	b, err := os.ReadFile(path)
	return err == nil && bytes.Equal(b, data)
}

// Objects lists the digests of the objects present in the store, from
// directory listings only (no hashing, one read per fan-out directory): a
// cheap presence index for checking thousands of outputs at once. Objects
// are verified when read, as always.
func (s *Store) Objects() (map[Digest]bool, error) {
	top, err := os.ReadDir(filepath.Join(s.root, objectsDir))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return map[Digest]bool{}, nil
		}
		return nil, err
	}
	// The fan-out directories are listed in parallel (unsorted reads): on
	// the no-op path of a large pipeline this listing is a good part of
	// the wall time.
	const workers = 4
	found := make([][]Digest, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(top); i += workers {
				if !top[i].IsDir() {
					continue
				}
				f, err := os.Open(filepath.Join(s.root, objectsDir, top[i].Name()))
				if err != nil {
					errs[w] = err
					return
				}
				names, err := f.ReadDir(-1)
				f.Close()
				if err != nil {
					errs[w] = err
					return
				}
				for _, e := range names {
					if h, ok := parseHexName(e.Name()); ok && e.Type().IsRegular() {
						found[w] = append(found[w], Digest(h))
					}
				}
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	n := 0
	for _, f := range found {
		n += len(f)
	}
	out := make(map[Digest]bool, n)
	for _, f := range found {
		for _, d := range f {
			out[d] = true
		}
	}
	return out, nil
}
