package artifacts

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// layoutVersion is the content of the VERSION file. Bump it on any change of
// the layout or of the index entry format, so that an old binary refuses a
// new store instead of misreading it. Version 2 added packs/ (pack.go) to
// version 1's loose files, which it still reads: a store of version 1 is
// read as it is, and becomes version 2 just before its first pack is made
// (upgradeVersion), after which a build that knows only version 1 refuses
// it rather than miss its packed objects. (thv gc then packs its loose
// files.)
const layoutVersion = "thv-store 2"

// LooseLayoutVersion is the VERSION of a store of loose files only,
// version 1, which this build reads as it is: the layout of the store in
// a bundle (pipeline/bundle), which tools read file by file.
const LooseLayoutVersion = "thv-store 1"

const looseLayoutVersion = LooseLayoutVersion

// ErrNotStore is wrapped by the errors of Open for a directory that is not
// a THV store.
var ErrNotStore = errors.New("not a THV store")

// Mode says what Open may do to the store directory and how the Store
// writes.
type Mode int

const (
	// Create opens the store for reading and writing, creating its layout
	// if the directory is missing or empty. A directory that exists, is
	// not empty and holds no VERSION file is refused (an error wrapping
	// ErrNotStore that names it): an ordinary directory is never adopted,
	// since GC could then remove its files. Opening an existing store
	// creates nothing but a subdirectory that someone removed, and removes
	// the store's own temp files that killed writers left behind (best
	// effort: on a read-only mount nothing is removed and Open still
	// succeeds). Its writes are not fsynced one by one: Sync is the
	// barrier that makes them durable, and Open syncs, or after a restart
	// of the machine checks, what writers that ended without one left
	// (durable.go).
	Create Mode = iota

	// Scratch is Create for a store whose contents are disposable: a
	// worker's output store, written by the worker through this handle.
	// Its writes are atomic but never made durable (Sync does nothing):
	// durability is the project store's job. The host that imports from a worker's scratch store
	// (re-hashing every object) or compares it reads it through
	// Store.Untrusted.
	Scratch

	// Existing opens a store that exists without creating or removing
	// anything: no directory, no VERSION file, no subdirectory, no lock
	// file, no cleaning of temp files. It is for readers of a store that
	// must be there (a worker reading its inputs from the project store)
	// and works on a read-only store (a read-only mount, or directories
	// without write permission), where Get, Has, Verify, GetEntry, Objects
	// and GCDryRun work while Put and PutEntry fail with an error wrapping
	// ErrReadOnly.
	// A missing directory, an empty one or one without a VERSION file is
	// an error wrapping ErrNotStore (and fs.ErrNotExist when the directory
	// does not exist).
	Existing

	// ExistingOrMissing is Existing, except that a directory that does not
	// exist yet is an empty store rather than an error: reads find
	// nothing there and writes fail. It is for commands that only read
	// (status, show, dag, gc --dry-run): `thv status` on a fresh clone
	// lists every task as new without creating .thv/. (The handle stays
	// empty if another process creates the store meanwhile.)
	ExistingOrMissing
)

// String returns the mode's name, as in the package's constants.
func (m Mode) String() string {
	switch m {
	case Create:
		return "Create"
	case Scratch:
		return "Scratch"
	case Existing:
		return "Existing"
	case ExistingOrMissing:
		return "ExistingOrMissing"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// Open opens the store rooted at dir in the given mode. In every mode a
// store written with another layout version is an error, and so is, for
// Create and Scratch, a store whose objects/, index/ or tmp/ is a symbolic
// link or a file: the store follows no link inside its directory (see the
// package documentation), so it could neither read nor write through it.
// The path of dir itself is resolved the ordinary way (links in it
// followed), once.
func Open(dir string, mode Mode) (*Store, error) {
	abs, err := absDir(dir)
	if err != nil {
		return nil, err
	}
	switch mode {
	case Create, Scratch:
		return create(abs, mode == Scratch)
	case Existing:
		return openExisting(abs)
	case ExistingOrMissing:
		s, err := openExisting(abs)
		if err == nil || !errors.Is(err, fs.ErrNotExist) {
			return s, err
		}
		if _, serr := os.Lstat(abs); !errors.Is(serr, fs.ErrNotExist) {
			return nil, err
		}
		return newStore(abs, absentDir{abs}), nil
	}
	return nil, fmt.Errorf("artifacts: open %s: unknown mode %v", abs, mode)
}

// create is Open in mode Create (or Scratch, when scratch is set).
func create(abs string, scratch bool) (*Store, error) {
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
	s.scratch = scratch
	s.dur.deferred = !scratch && syncfsSupported
	version, err := s.checkVersion()
	if err != nil {
		return nil, err
	}
	if version != "" {
		return s.openExistingRW(version)
	}
	if what := s.foreignContent(); what != "" {
		// A concurrent Open may have finished creating the store
		// (and a writer started filling it) since we looked.
		if version, err := s.checkVersion(); err == nil && version != "" {
			return s.openExistingRW(version)
		}
		return nil, fmt.Errorf("artifacts: open %s: %w: it is not empty (%s) and has no %s file, so it is not a store this program created; "+
			"refusing to use it, as writing and garbage-collecting there could overwrite or remove your files: "+
			"choose a new or empty directory for the store, or the store directory itself (the one holding %s)",
			abs, ErrNotStore, what, versionFile, versionFile)
	}
	for _, d := range s.layoutDirs() {
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

// openExisting is Open in mode Existing.
func openExisting(abs string) (*Store, error) {
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
	version, err := s.checkVersion()
	if err != nil {
		return nil, err
	}
	if version == "" {
		what := "the directory is empty"
		if ents, err := readDirRel(s.dir, "."); err == nil && len(ents) > 0 {
			what = "the directory has no " + versionFile + " file"
		}
		return nil, fmt.Errorf("artifacts: open %s: %w: %s; a store is created by the first command that writes to it (thv repro), or choose an existing store", abs, ErrNotStore, what)
	}
	return s, nil
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

// checkVersion returns the layout the VERSION file names ("" if there is
// none), and fails if it is not one this build reads (or is not a regular
// file).
func (s *Store) checkVersion() (string, error) {
	v, err := s.readSmall(versionFile, 4096)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", nil
	case err != nil:
		return "", fmt.Errorf("artifacts: open %s: %w", s.root, err)
	}
	got := strings.TrimSpace(string(v))
	if got != layoutVersion && got != looseLayoutVersion {
		return "", fmt.Errorf("artifacts: open %s: store layout is %q, this build understands only %q and %q (use a matching thv, or a new store directory)", s.root, got, layoutVersion, looseLayoutVersion)
	}
	return got, nil
}

// upgradeVersion makes the store's VERSION this build's, if it is
// version 1's: before a pack is made in it.
func (s *Store) upgradeVersion() error {
	v, err := s.readSmall(versionFile, 4096)
	if err != nil || strings.TrimSpace(string(v)) != looseLayoutVersion {
		return nil // this build's (or none: a store being created)
	}
	return s.writeAtomic(versionFile, []byte(layoutVersion+"\n"))
}

// layoutDirs are the directories a store opened for writing has: a
// scratch store is written loose, and has no packs/.
func (s *Store) layoutDirs() []string {
	if s.scratch {
		return []string{objectsDir, indexDir, tmpDir}
	}
	return []string{objectsDir, indexDir, tmpDir, packsDir}
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

// openExistingRW finishes Open of a store whose VERSION, of version, is
// in place.
func (s *Store) openExistingRW(version string) (*Store, error) {
	// Recreate a directory someone removed (say, rm -r .thv/tmp); on a
	// read-only mount of an intact store this only looks.
	for _, d := range s.layoutDirs() {
		if err := s.layoutDir(d); err != nil {
			if s.scratch || d != packsDir || !isReadOnlyErr(err) {
				return nil, fmt.Errorf("artifacts: open %s: %w", s.root, err)
			}
		}
	}
	// Writers that ended without a barrier: sync what they wrote, or,
	// after a restart of the machine, check the whole store (durable.go).
	if s.dur.deferred {
		s.recoverUnsynced()
	}
	// Packs whose writer ended without writing their index: a torn
	// tail set aside, the index written (packrepair.go).
	if !s.scratch {
		s.repairPacks()
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
		case (name == objectsDir || name == indexDir || name == packsDir) && e.Type().IsDir():
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
		case (name == lockFile || isMarkerName(name)) && e.Type().IsRegular():
		default:
			return "it holds " + name
		}
	}
	return ""
}
