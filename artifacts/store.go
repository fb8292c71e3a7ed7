package artifacts

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync"
)

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

// Store is a content-addressed store rooted at a directory, opened by Open
// (see the package documentation for the layout). The zero value is not
// usable. A Store is safe for concurrent use by goroutines.
type Store struct {
	root string     // absolute, for messages and Root
	dir  dirFS      // the directory itself: every access goes through it (dirfs.go)
	lk   *storeLock // this handle's hold on <root>/LOCK (see lock.go)
	// scratch skips the fsyncs: the store is thrown away after a crash
	// (mode Scratch). Writes stay atomic (temp file, rename).
	scratch bool
	// untrusted makes the handle a read-only view of a store another
	// process wrote (Untrusted).
	untrusted bool
	// dur is the handle's barrier and marker (durable.go).
	dur *durability
	// pv is what the handle knows of the packs (packview.go); pw the
	// pack it appends to, guarded by pwMu (packwrite.go).
	pv   *packView
	pwMu sync.Mutex
	pw   *packWriter
	// noAdopt makes the handle start new packs rather than append to
	// one no writer holds (GC, while it rewrites packs).
	noAdopt bool
}

func newStore(root string, dir dirFS) *Store {
	return &Store{root: root, dir: dir, lk: &storeLock{}, dur: &durability{}, pv: &packView{}}
}

// ErrReadOnly is wrapped by the errors of Put, PutEntry and GC when the store
// cannot be written (a read-only mount, or no permission), or must not be
// (Untrusted).
var ErrReadOnly = errors.New("store is not writable")

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
// The view of a scratch store reads its loose files only, never packs: a
// scratch store is written loose (Scratch), so its packs/, if any, are a
// worker's invention.
func (s *Store) Untrusted() *Store {
	return &Store{root: s.root, dir: s.dir, lk: &storeLock{}, scratch: s.scratch, untrusted: true, dur: &durability{}, pv: &packView{loaded: s.scratch}}
}

// readsPacks reports whether the handle reads packs: all but an untrusted
// view of a scratch store do.
func (s *Store) readsPacks() bool { return !(s.untrusted && s.scratch) }

// errUntrusted is the error of a write through an untrusted view.
func (s *Store) errUntrusted() error {
	return fmt.Errorf("%w: %s is read through an untrusted view (a store another process wrote), which never writes, moves or removes anything", ErrReadOnly, s.root)
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

// fanoutRel is objects/<2 hex>, the fan-out directory of the objects whose
// digest starts with b.
func fanoutRel(b byte) string {
	const digits = "0123456789abcdef"
	return objectsDir + sep + string([]byte{digits[b>>4], digits[b&15]})
}

// entryRel is index/<2 hex>/<64 hex>.json, relative to the store directory.
func entryRel(k Key) string {
	h := k.Hex()
	return indexDir + sep + h[:2] + sep + h + ".json"
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
