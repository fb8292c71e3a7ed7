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

// Store is a content-addressed store rooted at a directory. See the package
// documentation for the layout. The zero value is not usable; call Open,
// OpenExisting, OpenForReading or OpenScratch.
type Store struct {
	root string     // absolute, for messages and Root
	dir  dirFS      // the directory itself: every access goes through it (dirfs.go)
	lk   *storeLock // this handle's hold on <root>/LOCK (see lock.go)
	// scratch skips the fsyncs: the store is thrown away after a crash
	// (OpenScratch). Writes stay atomic (temp file, rename).
	scratch bool
	// untrusted makes the handle a read-only view of a store another
	// process wrote (Untrusted).
	untrusted bool
}

func newStore(root string, dir dirFS) *Store { return &Store{root: root, dir: dir, lk: &storeLock{}} }

// ErrNotStore is wrapped by the errors of Open and OpenExisting for a
// directory that is not a THV store.
var ErrNotStore = errors.New("not a THV store")

// ErrReadOnly is wrapped by the errors of Put, PutEntry and GC when the store
// cannot be written (a read-only mount, or no permission), or must not be
// (Untrusted).
var ErrReadOnly = errors.New("store is not writable")

// Open opens the store rooted at dir for reading and writing, creating the
// layout if dir is missing or empty. A directory that exists, is not empty
// and holds no VERSION file is refused (an error wrapping ErrNotStore that
// names it): Open never adopts an ordinary directory, whose files GC could
// then remove. A store written with another layout version is an error, and
// so is a store whose objects/, index/ or tmp/ is a symbolic link or a file:
// the store follows no link inside its directory (see the package
// documentation), so it could neither read nor write through it.
//
// Opening an existing store creates nothing but a subdirectory that someone
// removed, and removes the store's own temp files that writers killed
// earlier left behind (best effort: on a read-only mount nothing is removed
// and Open still succeeds). Read-only commands should use OpenExisting.
func Open(dir string) (*Store, error) {
	abs, err := absDir(dir)
	if err != nil {
		return nil, err
	}
	// The store directory itself is the caller's to name: links in its
	// path are followed, here and only here.
	if err := os.MkdirAll(abs, dirPerm); err != nil {
		s := newStore(abs, absentDir{abs})
		return nil, fmt.Errorf("artifacts: open %s: %w", abs, s.writeErr(err))
	}
	d, err := openDirFS(abs)
	if err != nil {
		return nil, fmt.Errorf("artifacts: open %s: %w", abs, err)
	}
	s := newStore(abs, d)
	present, err := s.checkVersion()
	if err != nil {
		return nil, err
	}
	if present {
		return s.openExistingRW()
	}
	if what := s.foreignContent(); what != "" {
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
	for _, d := range []string{objectsDir, indexDir, tmpDir} {
		if err := s.layoutDir(d); err != nil {
			return nil, fmt.Errorf("artifacts: open %s: %w", abs, err)
		}
	}
	// VERSION is written last and atomically: its presence means the
	// layout is complete. Two processes creating the store at once both
	// write the same bytes.
	if err := s.writeAtomic(versionFile, []byte(layoutVersion+"\n")); err != nil {
		return nil, fmt.Errorf("artifacts: open %s: %w", abs, err)
	}
	// An earlier Open killed before its VERSION was in place may have
	// left its temp file.
	var st GCStats
	s.sweepTemp(&st, nil, true)
	return s, nil
}

// OpenScratch opens (creating if needed, as Open) a store whose contents
// are disposable: a worker's output store, written by the worker through
// this handle. Its writes are atomic but not fsynced: durability is the
// project store's job, and two fsyncs per file are most of a small task's
// cost. The host that imports from a worker's scratch store (re-hashing
// every object) or compares it reads it through Untrusted.
func OpenScratch(dir string) (*Store, error) {
	s, err := Open(dir)
	if err != nil {
		return nil, err
	}
	s.scratch = true
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
// that names the directory.
func OpenExisting(dir string) (*Store, error) {
	abs, err := absDir(dir)
	if err != nil {
		return nil, err
	}
	fi, err := os.Stat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("artifacts: open %s: %w: the directory does not exist (%w); a store is created by the first command that writes to it (thv repro), or choose an existing store", abs, ErrNotStore, fs.ErrNotExist)
	case err != nil:
		return nil, fmt.Errorf("artifacts: open %s: %w", abs, err)
	case !fi.IsDir():
		return nil, fmt.Errorf("artifacts: open %s: %w: not a directory", abs, ErrNotStore)
	}
	d, err := openDirFS(abs)
	if err != nil {
		return nil, fmt.Errorf("artifacts: open %s: %w", abs, err)
	}
	s := newStore(abs, d)
	present, err := s.checkVersion()
	if err != nil {
		return nil, err
	}
	if !present {
		what := "the directory is empty"
		if ents, err := readDirRel(s.dir, "."); err == nil && len(ents) > 0 {
			what = "the directory has no " + versionFile + " file"
		}
		return nil, fmt.Errorf("artifacts: open %s: %w: %s; a store is created by the first command that writes to it (thv repro), or choose an existing store", abs, ErrNotStore, what)
	}
	return s, nil
}

// Untrusted returns a read-only view of the store for reading what another
// process wrote there and may have arranged against the reader: a worker's
// scratch store, such as a container's /out, which the host imports from
// (pipeline.ImportOutputs). The view shares the store's open directory, so
// a handle the host opened on a directory it created stays on that
// directory whatever the worker does inside it.
//
// Through the view nothing is ever written, moved, quarantined or removed:
// Put, PutEntry, GC and LockExclusive fail with an error wrapping
// ErrReadOnly. An object or index entry that fails verification, or
// anything but a regular file with a single link in its place (a symbolic
// or hard link, a directory, a FIFO), is a *CorruptError naming it whose
// MoveErr says it was left in place ("a scratch store is never quarantined
// into"); a symbolic link anywhere on a path is refused, as everywhere in
// the store, even if the bytes it leads to would verify. Reads otherwise
// work as on the store: Get and Verify re-hash, GetEntry decodes strictly.
func (s *Store) Untrusted() *Store {
	return &Store{root: s.root, dir: s.dir, lk: &storeLock{}, scratch: s.scratch, untrusted: true}
}

// errUntrusted is the error of a write through an untrusted view.
func (s *Store) errUntrusted() error {
	return fmt.Errorf("%w: %s is read through an untrusted view (a store another process wrote), which never writes, moves or removes anything", ErrReadOnly, s.root)
}

// absDir makes dir absolute, so that a later chdir cannot move the store.
func absDir(dir string) (string, error) {
	if dir == "" {
		return "", errors.New("artifacts: open: empty store directory")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("artifacts: open %s: %w", dir, err)
	}
	return abs, nil
}

// checkVersion reports whether the VERSION file is present, and fails if it
// names another layout (or is not a regular file).
func (s *Store) checkVersion() (bool, error) {
	v, err := s.readSmall(versionFile, 4096)
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

// readSmall reads the regular file rel, of at most max bytes.
func (s *Store) readSmall(rel string, max int64) ([]byte, error) {
	f, err := s.dir.open(rel, os.O_RDONLY|oNonblock, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is %s", s.dir.abs(rel), notRegular(fi))
	}
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err == nil && int64(len(b)) > max {
		err = fmt.Errorf("%s is larger than %d bytes", s.dir.abs(rel), max)
	}
	return b, err
}

// openExistingRW finishes Open of a store whose VERSION is in place.
func (s *Store) openExistingRW() (*Store, error) {
	// Recreate a directory someone removed (say, rm -r .thv/tmp); on a
	// read-only mount of an intact store this only looks.
	for _, d := range []string{objectsDir, indexDir, tmpDir} {
		if err := s.layoutDir(d); err != nil {
			return nil, fmt.Errorf("artifacts: open %s: %w", s.root, err)
		}
	}
	// Temp files of writers that were killed: only the store's own names,
	// only those whose writer is gone. Failures (a read-only mount) are
	// not Open's business; GC reports them.
	var st GCStats
	s.sweepTemp(&st, nil, true)
	return s, nil
}

// layoutDir makes sure the top-level directory name is a directory: it
// creates it if it is missing, and refuses a symbolic link or a file in its
// place, through which the store would read and write nothing.
func (s *Store) layoutDir(name string) error {
	fi, err := s.dir.lstat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := s.dir.mkdir(name, dirPerm); err != nil && !errors.Is(err, fs.ErrExist) {
			return s.writeErr(err)
		}
		return nil
	case err != nil:
		return err
	case fi.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("%s is a symbolic link: the store follows no link inside its directory, so that nothing there can make it read or write elsewhere; "+
			"remove the link (to keep the store on another disk, link or mount the store directory itself)", s.dir.abs(name))
	case !fi.IsDir():
		return fmt.Errorf("%s is %s, not a directory: move it away", s.dir.abs(name), notRegular(fi))
	}
	return nil
}

// foreignContent returns "" if the store directory holds nothing, or only
// what an interrupted Open of a new store leaves (empty objects/ and index/,
// tmp/ with nothing but the store's own temp files), and otherwise a short
// description of the first thing that is not the store's.
func (s *Store) foreignContent() string {
	ents, err := readDirRel(s.dir, ".")
	if err != nil {
		return err.Error()
	}
	for _, e := range ents {
		name := e.Name()
		switch {
		case (name == objectsDir || name == indexDir) && e.Type().IsDir():
			if sub, err := readDirRel(s.dir, name); err != nil || len(sub) > 0 {
				return "it holds " + name + "/ with files in it"
			}
		case name == tmpDir && e.Type().IsDir():
			sub, err := readDirRel(s.dir, name)
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
// only through Put. (A path is resolved by whoever opens it, links
// included: the store's own reads go through its open directory instead.)
func (s *Store) ObjectPath(d Digest) string { return filepath.Join(s.root, objectRel(d)) }

func (s *Store) entryPath(k Key) string { return filepath.Join(s.root, entryRel(k)) }

const sep = string(filepath.Separator)

// objectRel is objects/<2 hex>/<64 hex>, relative to the store directory.
func objectRel(d Digest) string {
	h := d.Hex()
	return objectsDir + sep + h[:2] + sep + h
}

// entryRel is index/<2 hex>/<64 hex>.json, relative to the store directory.
func entryRel(k Key) string {
	h := k.Hex()
	return indexDir + sep + h[:2] + sep + h + ".json"
}

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
		holder, err = s.uniqueName(corruptDir, prefix, "", func(rel string) error { return s.dir.mkdir(rel, dirPerm) })
		if err != nil {
			e.MoveErr = err
			return e
		}
		dst = holder + sep + base
	} else {
		// A placeholder the rename replaces: no earlier name is reused.
		dst, err = s.uniqueName(corruptDir, prefix, "", func(rel string) error {
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
	_ = s.syncDir(parent)
	_ = s.syncDir(corruptDir)
	return e
}

// uniqueName calls create on dir/<prefix><random hex><suffix> until a name
// is free, and returns that name.
func (s *Store) uniqueName(dir, prefix, suffix string, create func(rel string) error) (string, error) {
	for try := 0; ; try++ {
		rel := dir + sep + prefix + strconv.FormatUint(rand.Uint64(), 16) + suffix
		err := create(rel)
		if errors.Is(err, fs.ErrExist) && try < 100 {
			continue
		}
		return rel, err
	}
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

// errTempLost means GC removed our temp file before we renamed it (possible
// only in the instant between creating and locking it); the write is retried.
var errTempLost = errors.New("temp file removed before rename")

// writeAtomic makes rel hold data, never showing a partial file: it writes a
// locked temp file in tmp/, fsyncs it, renames it over rel and fsyncs rel's
// directory, so the rename survives a power cut.
func (s *Store) writeAtomic(rel string, data []byte) error {
	if s.untrusted {
		return s.errUntrusted()
	}
	dir, base := splitRel(rel)
	if err := s.ensureDir(dir); err != nil {
		return s.writeErr(err)
	}
	for attempt := 0; ; attempt++ {
		err := s.writeOnce(rel, dir, base, data)
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

func (s *Store) writeOnce(rel, dir, base string, data []byte) (err error) {
	f, tmp, err := s.createTemp(base)
	if err != nil {
		return err
	}
	renamed := false
	defer func() {
		if !renamed {
			f.Close()
			s.dir.remove(tmp)
		}
	}()
	if err := lockTemp(f); err != nil {
		return fmt.Errorf("locking %s: %w", s.dir.abs(tmp), err)
	}
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("writing %s: %w", s.dir.abs(tmp), err)
	}
	if err := f.Chmod(filePerm); err != nil {
		return err
	}
	if !s.scratch {
		if err := f.Sync(); err != nil {
			return fmt.Errorf("syncing %s: %w", s.dir.abs(tmp), err)
		}
	}
	if err := s.dir.rename(tmp, rel); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			if _, serr := s.dir.lstat(dir); serr == nil {
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
	return s.syncDir(dir)
}

// Temp files are named <base>.<random hex>.tmp, where base is the name of
// the file being written (a 64-hex object name, a 64-hex.json entry name, or
// VERSION). Open and GC remove only files with such names (isTempName), so
// that nothing else in tmp/ is ever touched.
const tempSuffix = ".tmp"

// createTemp creates a new temp file in tmp/ for a file called base, and
// returns it and its rel.
func (s *Store) createTemp(base string) (*os.File, string, error) {
	var f *os.File
	rel, err := s.uniqueName(tmpDir, base+".", tempSuffix, func(rel string) (err error) {
		f, err = s.dir.open(rel, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		return err
	})
	return f, rel, err
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

// ensureDir creates a fan-out directory (or objects/, index/ someone
// removed) on first use and makes its entry in the parent durable.
func (s *Store) ensureDir(dir string) error {
	if dir == "." {
		return nil
	}
	parent, _ := splitRel(dir)
	err := s.dir.mkdir(dir, dirPerm)
	switch {
	case err == nil:
		return s.syncDir(parent)
	case errors.Is(err, fs.ErrExist):
		// A link in its place fails the write that goes through it.
		return nil
	case errors.Is(err, fs.ErrNotExist) && parent != ".":
		if err := s.ensureDir(parent); err != nil {
			return err
		}
		if err := s.dir.mkdir(dir, dirPerm); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
		return s.syncDir(parent)
	}
	return err
}

// syncDir fsyncs the directory rel so that renames and creations in it are
// durable. Filesystems that cannot sync directories (EINVAL, ENOTSUP) are
// accepted: there is nothing better to do on them.
func (s *Store) syncDir(rel string) error {
	d, err := s.dir.openDir(rel)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ENOTSUP) {
		return fmt.Errorf("syncing directory %s: %w", s.dir.abs(rel), err)
	}
	return nil
}

// sameBytes reports whether the regular file rel holds exactly data; any
// error reading it counts as "no".
func (s *Store) sameBytes(rel string, data []byte) bool {
	f, err := s.dir.open(rel, os.O_RDONLY|oNonblock, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() != int64(len(data)) {
		return false
	}
	b, err := io.ReadAll(io.LimitReader(f, int64(len(data))+1))
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
	top, err := readDirRel(s.dir, dir)
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
				f, err := s.dir.openDir(dir + sep + top[i].Name())
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
