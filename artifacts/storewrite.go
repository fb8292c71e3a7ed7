package artifacts

// The store's writes: every file of the store is written atomically
// (atomic.go), durable at once or at the store's next barrier (durable.go).

import (
	"errors"
	"io/fs"
)

// atomic is how the store writes: through its directory, temp files in
// tmp/, files read-only once in place; each write fsynced only where the
// store has no barrier (durable.go: a store opened Create on Linux syncs
// at its barriers, a scratch store never).
func (s *Store) atomic() atomicDir {
	return atomicDir{d: s.dir, tmp: tmpDir, perm: filePerm, noSync: s.noSync()}
}

// noSync reports whether the store's writes skip their fsyncs: a scratch
// store, or one whose durability comes from its barrier (Sync).
func (s *Store) noSync() bool { return s.scratch || s.dur != nil && s.dur.deferred }

// writeAtomic makes rel hold data (atomicDir.write), creating its fan-out
// directory if needed. In a store with a barrier, the write is not
// fsynced but preceded by the handle's durable marker (beginWrite); the
// VERSION file, whose presence says the layout is complete, is always
// fsynced.
func (s *Store) writeAtomic(rel string, data []byte) error {
	if s.untrusted {
		return s.errUntrusted()
	}
	a := s.atomic()
	if rel == versionFile && !s.scratch {
		a.noSync = false
	} else {
		end, err := s.beginWrite()
		if err != nil {
			return s.writeErr(err)
		}
		defer end()
	}
	dir, _ := splitRel(rel)
	if err := s.ensureDir(dir); err != nil {
		return s.writeErr(err)
	}
	return s.writeErr(a.write(rel, writeBytes(data)))
}

// ensureDir creates a fan-out directory (or objects/, index/ someone
// removed) on first use and makes its entry in the parent durable (at
// once, or at the store's next barrier).
func (s *Store) ensureDir(dir string) error {
	if dir == "." {
		return nil
	}
	parent, _ := splitRel(dir)
	syncParent := func() error {
		if s.noSync() {
			return nil
		}
		return syncDir(s.dir, parent)
	}
	err := s.dir.mkdir(dir, dirPerm)
	switch {
	case err == nil:
		return syncParent()
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
		return syncParent()
	}
	return err
}
