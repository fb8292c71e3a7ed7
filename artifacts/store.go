package artifacts

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
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
	lockFile    = "LOCK"

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
// documentation for the layout. The zero value is not usable; call Open or
// OpenExisting.
type Store struct {
	root string     // absolute, so that a later chdir cannot move the store
	lk   *storeLock // this handle's hold on <root>/LOCK (see lock.go)
	// scratch skips the fsyncs: the store is thrown away after a crash
	// (OpenScratch). Writes stay atomic (temp file, rename).
	scratch bool
}

func newStore(root string) *Store { return &Store{root: root, lk: &storeLock{}} }

// ErrNotStore is wrapped by the errors of Open and OpenExisting for a
// directory that is not a THV store.
var ErrNotStore = errors.New("not a THV store")

// ErrReadOnly is wrapped by the errors of Put, PutEntry and GC when the store
// cannot be written (a read-only mount, or no permission).
var ErrReadOnly = errors.New("store is not writable")

// Open opens the store rooted at dir for reading and writing, creating the
// layout if dir is missing or empty. A directory that exists, is not empty
// and holds no VERSION file is refused (an error wrapping ErrNotStore that
// names it): Open never adopts an ordinary directory, whose files GC could
// then remove. A store written with another layout version is an error.
//
// Opening an existing store creates nothing but a subdirectory that someone
// removed, and removes the store's own temp files that writers killed
// earlier left behind (best effort: on a read-only mount nothing is removed
// and Open still succeeds). Read-only commands should use OpenExisting.
func Open(dir string) (*Store, error) {
	s, err := openRoot(dir)
	if err != nil {
		return nil, err
	}
	abs := s.root
	present, err := s.checkVersion()
	if err != nil {
		return nil, err
	}
	if present {
		return s.openExistingRW()
	}
	fi, err := os.Stat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		// A new store below.
	case err != nil:
		return nil, fmt.Errorf("artifacts: open %s: %w", abs, err)
	case !fi.IsDir():
		return nil, fmt.Errorf("artifacts: open %s: not a directory", abs)
	default:
		if what := foreignContent(abs); what != "" {
			// A concurrent Open may have finished creating the store
			// (and a writer started filling it) since we looked.
			if present, err := s.checkVersion(); err == nil && present {
				return s.openExistingRW()
			}
			return nil, fmt.Errorf("artifacts: open %s: %w: it is not empty (%s) and has no %s file, so it is not a store this program created; "+
				"refusing to use it, as writing and garbage-collecting there could overwrite or remove your files: "+
				"choose a new or empty directory for the store, or the store directory itself (the one holding %s)",
				abs, ErrNotStore, what, versionFile, versionFile)
		}
	}
	for _, d := range []string{"", objectsDir, indexDir, tmpDir} {
		if err := os.MkdirAll(filepath.Join(abs, d), dirPerm); err != nil {
			return nil, fmt.Errorf("artifacts: open %s: %w", abs, s.writeErr(err))
		}
	}
	// VERSION is written last and atomically: its presence means the
	// layout is complete. Two processes creating the store at once both
	// write the same bytes.
	if err := s.writeAtomic(filepath.Join(abs, versionFile), []byte(layoutVersion+"\n")); err != nil {
		return nil, fmt.Errorf("artifacts: open %s: %w", abs, err)
	}
	// An earlier Open killed before its VERSION was in place may have
	// left its temp file.
	var st GCStats
	s.sweepTemp(&st, nil, true)
	return s, nil
}

// OpenExisting opens the store rooted at dir without creating or removing
// anything: no directory, no VERSION file, no subdirectory, no lock file,
// no cleaning of temp files. It is for read-only commands (status, show,
// dag, gc --dry-run) and works on a read-only store (a read-only mount, or
// directories without write permission): Get, Has, Verify, GetEntry, Objects
// and GCDryRun work there, while Put and PutEntry fail with an error
// wrapping ErrReadOnly.
//
// A missing directory, an empty one or one without a VERSION file is an
// error wrapping ErrNotStore (and fs.ErrNotExist when dir does not exist)
// OpenScratch opens (creating if needed, as Open) a store whose contents
// are disposable: a worker's output store that the host imports from
// (re-hashing every object) or compares, and removes afterwards. Its
// writes are atomic but not fsynced: durability is the project store's
// job, and two fsyncs per file are most of a small task's cost.
func OpenScratch(dir string) (*Store, error) {
	s, err := Open(dir)
	if err != nil {
		return nil, err
	}
	s.scratch = true
	return s, nil
}

// that names the directory.
func OpenExisting(dir string) (*Store, error) {
	s, err := openRoot(dir)
	if err != nil {
		return nil, err
	}
	fi, err := os.Stat(s.root)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("artifacts: open %s: %w: the directory does not exist (%w); a store is created by the first command that writes to it (thv repro), or choose an existing store", s.root, ErrNotStore, fs.ErrNotExist)
	case err != nil:
		return nil, fmt.Errorf("artifacts: open %s: %w", s.root, err)
	case !fi.IsDir():
		return nil, fmt.Errorf("artifacts: open %s: %w: not a directory", s.root, ErrNotStore)
	}
	present, err := s.checkVersion()
	if err != nil {
		return nil, err
	}
	if !present {
		what := "the directory is empty"
		if ents, err := os.ReadDir(s.root); err == nil && len(ents) > 0 {
			what = "the directory has no " + versionFile + " file"
		}
		return nil, fmt.Errorf("artifacts: open %s: %w: %s; a store is created by the first command that writes to it (thv repro), or choose an existing store", s.root, ErrNotStore, what)
	}
	return s, nil
}

func openRoot(dir string) (*Store, error) {
	if dir == "" {
		return nil, errors.New("artifacts: open: empty store directory")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("artifacts: open %s: %w", dir, err)
	}
	return newStore(abs), nil
}

// checkVersion reports whether the VERSION file is present, and fails if it
// names another layout.
func (s *Store) checkVersion() (bool, error) {
	v, err := os.ReadFile(filepath.Join(s.root, versionFile))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("artifacts: open %s: %w", s.root, err)
	}
	if got := strings.TrimSpace(string(v)); got != layoutVersion {
		return false, fmt.Errorf("artifacts: open %s: store layout is %q, this build understands only %q (use a matching thv, or a new store directory)", s.root, got, layoutVersion)
	}
	return true, nil
}

// openExistingRW finishes Open of a store whose VERSION is in place.
func (s *Store) openExistingRW() (*Store, error) {
	// Recreate a directory someone removed (say, rm -r .thv/tmp); on a
	// read-only mount of an intact store this only stats.
	for _, d := range []string{objectsDir, indexDir, tmpDir} {
		if err := os.MkdirAll(filepath.Join(s.root, d), dirPerm); err != nil {
			return nil, fmt.Errorf("artifacts: open %s: %w", s.root, s.writeErr(err))
		}
	}
	// Temp files of writers that were killed: only the store's own names,
	// only those whose writer is gone. Failures (a read-only mount) are
	// not Open's business; GC reports them.
	var st GCStats
	s.sweepTemp(&st, nil, true)
	return s, nil
}

// foreignContent returns "" if the directory at dir holds nothing, or only
// what an interrupted Open of a new store leaves (empty objects/ and index/,
// tmp/ with nothing but the store's own temp files), and otherwise a short
// description of the first thing that is not the store's.
func foreignContent(dir string) string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err.Error()
	}
	for _, e := range ents {
		name := e.Name()
		switch {
		case (name == objectsDir || name == indexDir) && e.Type().IsDir():
			if sub, err := os.ReadDir(filepath.Join(dir, name)); err != nil || len(sub) > 0 {
				return "it holds " + name + "/ with files in it"
			}
		case name == tmpDir && e.Type().IsDir():
			sub, err := os.ReadDir(filepath.Join(dir, name))
			if err != nil {
				return err.Error()
			}
			for _, f := range sub {
				if !f.Type().IsRegular() || !isTempName(f.Name()) {
					return "it holds " + filepath.Join(name, f.Name())
				}
			}
		case name == lockFile && e.Type().IsRegular():
		default:
			return "it holds " + name
		}
	}
	return ""
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
	f, err := openNoFollow(p)
	if err != nil {
		if ce := s.quarantineLink("object", d.String(), p, err); ce != nil {
			return nil, ce
		}
		return nil, s.openErr("get", d, p, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("artifacts: get %v: %w", d, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, s.quarantine("object", d.String(), p, fi, notRegular(fi))
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
	f, err := openNoFollow(p)
	if err != nil {
		if ce := s.quarantineLink("object", d.String(), p, err); ce != nil {
			return ce
		}
		return s.openErr("verify", d, p, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return s.quarantine("object", d.String(), p, fi, notRegular(fi))
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
	var dst, holder string
	if cur.IsDir() {
		// A directory cannot be renamed over a file: it goes into a
		// fresh directory of its own under corrupt/.
		holder, err = os.MkdirTemp(cdir, prefix+"*")
		if err != nil {
			e.MoveErr = err
			return e
		}
		dst = filepath.Join(holder, filepath.Base(path))
	} else {
		f, err := os.CreateTemp(cdir, prefix+"*")
		if err != nil {
			e.MoveErr = err
			return e
		}
		dst = f.Name()
		f.Close()
	}
	if err := os.Rename(path, dst); err != nil {
		if holder != "" {
			os.Remove(holder)
		} else {
			os.Remove(dst)
		}
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

// quarantineLink handles an openNoFollow error at path: if path is a
// symbolic link (which the store never creates, and never follows), it is
// moved to corrupt/ and reported; otherwise quarantineLink returns nil and
// the caller reports openErr.
func (s *Store) quarantineLink(what, name, path string, openErr error) *CorruptError {
	if errors.Is(openErr, fs.ErrNotExist) {
		return nil
	}
	fi, err := os.Lstat(path)
	if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		return nil
	}
	return s.quarantine(what, name, path, fi, notRegular(fi))
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

// errTempLost means GC removed our temp file before we renamed it (possible
// only in the instant between creating and locking it); the write is retried.
var errTempLost = errors.New("temp file removed before rename")

// writeAtomic makes dst hold data, never showing a partial file: it writes a
// locked temp file in tmp/, fsyncs it, renames it over dst and fsyncs dst's
// directory, so the rename survives a power cut.
func (s *Store) writeAtomic(dst string, data []byte) error {
	dir := filepath.Dir(dst)
	if err := ensureDir(dir); err != nil {
		return s.writeErr(err)
	}
	for attempt := 0; ; attempt++ {
		err := s.writeOnce(dst, dir, data)
		if errors.Is(err, errTempLost) && attempt < 3 {
			continue
		}
		return s.writeErr(err)
	}
}

// writeErr adds what a user can do to the errors of a write that cannot
// succeed by retrying: a read-only store (wrapping ErrReadOnly) and a full
// file system.
func (s *Store) writeErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrReadOnly):
		return err
	case isReadOnlyErr(err):
		return fmt.Errorf("%w: %s is read-only or not ours to write (use a store directory you can write, or a read-only command): %w", ErrReadOnly, s.root, err)
	case isNoSpaceErr(err):
		return fmt.Errorf("the file system holding the store %s is full (nothing was written; free some space, or run thv gc): %w", s.root, err)
	}
	return err
}

func (s *Store) writeOnce(dst, dir string, data []byte) (err error) {
	f, err := createTemp(filepath.Join(s.root, tmpDir), filepath.Base(dst))
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
	if !s.scratch {
		if err := f.Sync(); err != nil {
			return fmt.Errorf("syncing %s: %w", tmp, err)
		}
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
	if s.scratch {
		return nil
	}
	return syncDir(dir)
}

// Temp files are named <base>.<random hex>.tmp, where base is the name of
// the file being written (a 64-hex object name, a 64-hex.json entry name, or
// VERSION). Open and GC remove only files with such names (isTempName), so
// that nothing else in tmp/ is ever touched.
const tempSuffix = ".tmp"

// createTemp creates a new temp file in dir for a file called base.
func createTemp(dir, base string) (*os.File, error) {
	for try := 0; ; try++ {
		name := filepath.Join(dir, base+"."+strconv.FormatUint(rand.Uint64(), 16)+tempSuffix)
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) && try < 100 {
			continue
		}
		return f, err
	}
}

// isTempName reports whether name is the name of one of the store's temp
// files: <64 hex>, <64 hex>.json or VERSION, then a dot, 1 to 20 lowercase
// hex or decimal digits (older builds used decimal), and ".tmp".
func isTempName(name string) bool {
	rest, ok := strings.CutSuffix(name, tempSuffix)
	if !ok {
		return false
	}
	i := strings.LastIndexByte(rest, '.')
	if i < 0 {
		return false
	}
	base, rnd := rest[:i], rest[i+1:]
	if len(rnd) == 0 || len(rnd) > 20 || !isLowerHex(rnd) {
		return false
	}
	if base == versionFile {
		return true
	}
	base, _ = strings.CutSuffix(base, ".json")
	_, ok = parseHexName(base)
	return ok
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
	names, err := s.listFanout(objectsDir, "")
	if err != nil {
		return nil, err
	}
	out := make(map[Digest]bool, len(names))
	for _, h := range names {
		out[Digest(h)] = true
	}
	return out, nil
}

// Keys lists the keys of the index entries present in the store, from
// directory listings only, in no particular order.
func (s *Store) Keys() ([]Key, error) {
	names, err := s.listFanout(indexDir, ".json")
	if err != nil {
		return nil, err
	}
	out := make([]Key, len(names))
	for i, h := range names {
		out[i] = Key(h)
	}
	return out, nil
}

// listFanout lists the regular files <dir>/<2 hex>/<64 hex><suffix>. The
// fan-out directories are listed in parallel (unsorted reads): on the no-op
// path of a large pipeline this listing is a good part of the wall time.
func (s *Store) listFanout(dir, suffix string) ([][32]byte, error) {
	top, err := os.ReadDir(filepath.Join(s.root, dir))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	const workers = 4
	found := make([][][32]byte, workers)
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
				f, err := os.Open(filepath.Join(s.root, dir, top[i].Name()))
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
					base, ok := strings.CutSuffix(e.Name(), suffix)
					if !ok || !e.Type().IsRegular() {
						continue
					}
					if h, ok := parseHexName(base); ok {
						found[w] = append(found[w], h)
					}
				}
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	var out [][32]byte
	for _, f := range found {
		out = append(out, f...)
	}
	return out, nil
}
