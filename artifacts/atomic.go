package artifacts

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The files THV must never show half-written (a store's objects, index
// entries and VERSION; a lock file; the files of results/; a bundle) are
// written by one routine, atomicDir.write: to a temp file, locked with flock(2) while it is
// written, fsynced, renamed over the file's name, and the directory
// fsynced, so that a reader sees the old file or the new one, never a part,
// even if the writer is killed at any instruction or the power fails (a
// store with a barrier skips the two fsyncs: durable.go). And
// one sweeper, atomicDir.sweep, removes the temp files whose writer has
// died: those whose lock it can take, so never one being written.
//
// A store writes through its dirFS (no link followed, nothing outside its
// directory) with its temp files in tmp/; WriteFileAtomic writes an
// ordinary path, links followed as usual, with its temp file beside it.

// atomicDir is a directory tree that files are written into atomically, and
// how: where the temp files go, how they are named, with what permissions
// the files end and whether they are made durable.
type atomicDir struct {
	d dirFS
	// tmp holds the temp files (a rel: "tmp" in a store, "." beside an
	// ordinary file). It must be on the files' file system.
	tmp string
	// hide starts temp names with a dot (beside an ordinary file, where
	// ls and globs should not show them).
	hide bool
	perm fs.FileMode // of every file once in place
	// noSync skips the fsyncs (a scratch store, thrown away after a
	// crash; a store whose barrier makes its writes durable): writes stay
	// atomic.
	noSync bool
}

// errTempLost means a sweeper removed our temp file before we renamed it
// (possible only in the instant between creating and locking it); the write
// is retried.
var errTempLost = errors.New("temp file removed before rename")

// write makes rel hold what fill writes, never showing a partial file: fill
// writes into a locked temp file, which is fsynced, renamed over rel, and
// rel's directory fsynced, so the rename survives a power cut. rel's
// directory must exist. fill is called again if a sweeper took the temp file
// before it was locked.
func (a atomicDir) write(rel string, fill func(io.Writer) error) error {
	for attempt := 0; ; attempt++ {
		err := a.writeOnce(rel, fill)
		if errors.Is(err, errTempLost) && attempt < 3 {
			continue
		}
		return err
	}
}

func (a atomicDir) writeOnce(rel string, fill func(io.Writer) error) (err error) {
	dir, base := splitRel(rel)
	f, tmp, err := a.createTemp(base)
	if err != nil {
		return err
	}
	renamed := false
	defer func() {
		if !renamed {
			f.Close()
			a.d.remove(tmp)
		}
	}()
	if err := lockTemp(f); err != nil {
		return fmt.Errorf("locking %s: %w", a.d.abs(tmp), err)
	}
	if err := fill(f); err != nil {
		return err // a write error names the temp file
	}
	if err := f.Chmod(a.perm); err != nil {
		return err
	}
	if !a.noSync {
		if err := f.Sync(); err != nil {
			return fmt.Errorf("syncing %s: %w", a.d.abs(tmp), err)
		}
	}
	if err := a.d.rename(tmp, rel); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			if _, serr := a.d.lstat(dir); serr == nil {
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
	if a.noSync {
		return nil
	}
	return syncDir(a.d, dir)
}

// Temp files are named <base>.<random hex>.tmp, where base is the name of
// the file being written (in a store: a 64-hex object name, a 64-hex.json
// entry name, or VERSION), with a leading dot beside an ordinary file. The
// sweepers remove only files with such names, so that nothing else in the
// directory is ever touched.
const tempSuffix = ".tmp"

// createTemp creates a new temp file for a file called base, and returns
// it and its rel.
func (a atomicDir) createTemp(base string) (*os.File, string, error) {
	prefix := base + "."
	if a.hide {
		prefix = "." + prefix
	}
	var f *os.File
	rel, err := uniqueName(a.tmp, prefix, tempSuffix, func(rel string) (err error) {
		f, err = a.d.open(rel, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		return err
	})
	return f, rel, err
}

// tempBase returns the base of the temp name name (<base>.<random>.tmp, the
// random part 1 to 20 lowercase hex or decimal digits: older builds used
// decimal), or false if name is not one.
func tempBase(name string) (string, bool) {
	rest, ok := strings.CutSuffix(name, tempSuffix)
	if !ok {
		return "", false
	}
	i := strings.LastIndexByte(rest, '.')
	if i < 0 {
		return "", false
	}
	base, rnd := rest[:i], rest[i+1:]
	if len(rnd) == 0 || len(rnd) > 20 || !isLowerHex(rnd) {
		return "", false
	}
	return base, true
}

// uniqueName calls create on dir/<prefix><random hex><suffix> until a name
// is free, and returns that name.
func uniqueName(dir, prefix, suffix string, create func(rel string) error) (string, error) {
	for try := 0; ; try++ {
		rel := prefix + strconv.FormatUint(rand.Uint64(), 16) + suffix
		if dir != "." {
			rel = dir + sep + rel
		}
		err := create(rel)
		if errors.Is(err, fs.ErrExist) && try < 100 {
			continue
		}
		return rel, err
	}
}

// syncDir fsyncs the directory rel of d so that renames and creations in
// it are durable. Filesystems that cannot sync directories (EINVAL,
// ENOTSUP) are accepted: there is nothing better to do on them.
func syncDir(d dirFS, rel string) error {
	f, err := d.openDir(rel)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ENOTSUP) {
		return fmt.Errorf("syncing directory %s: %w", d.abs(rel), err)
	}
	return nil
}

// sweep removes (or, with remove false, only counts) the temp files among
// ents, the entries of the directory a.tmp, whose writer has died. isTemp
// says whether a name is one of the temp files to sweep, and how old such
// a file must be before it is removed (0: as soon as no writer holds it).
// Symbolic links and entries that are not temp files are left alone and
// counted in st; errs, if not nil, collects the errors.
func (a atomicDir) sweep(ents []fs.DirEntry, isTemp func(name string) (ok bool, minAge time.Duration), st *GCStats, errs *[]error, remove bool) {
	for _, de := range ents {
		rel := de.Name()
		if a.tmp != "." {
			rel = a.tmp + sep + rel
		}
		p := a.d.abs(rel)
		ok, minAge := isTemp(de.Name())
		switch {
		case de.Type()&fs.ModeSymlink != 0:
			st.leftAlone(p, true)
			continue
		case !de.Type().IsRegular() || !ok:
			st.leftAlone(p, false)
			continue
		}
		fi, err := de.Info()
		if err != nil {
			appendErr(errs, err)
			continue
		}
		removed := false
		if time.Since(fi.ModTime()) >= minAge {
			removed, err = a.removeIfAbandoned(rel, fi, remove)
		}
		switch {
		case err != nil:
			appendErr(errs, err)
		case removed:
			st.TmpRemoved++
			st.BytesFreed += fi.Size()
		default:
			st.TmpLive++
		}
	}
}

// removeIfAbandoned removes the temp file rel (whose Lstat is fi) if no
// writer holds its lock (tempAbandoned); with remove false it only reports
// whether it would. It follows no link, and leaves a file that is not the
// one listed.
func (a atomicDir) removeIfAbandoned(rel string, fi fs.FileInfo, remove bool) (bool, error) {
	f, err := a.d.open(rel, os.O_RDONLY|oNonblock, 0)
	if err != nil {
		return false, err
	}
	defer f.Close()
	cur, err := f.Stat()
	if err != nil {
		return false, err
	}
	if !cur.Mode().IsRegular() || !os.SameFile(cur, fi) {
		return false, nil // replaced since listed: not what we looked at
	}
	if ok, err := tempAbandoned(f, fi); !ok || err != nil {
		return false, err
	}
	if !remove {
		return true, nil
	}
	if !flockSupported {
		f.Close() // no lock to hold, and Windows cannot remove an open file
	}
	if err := a.d.remove(rel); err != nil {
		return false, err
	}
	return true, nil
}

// The store's writes.

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

// writeBytes is the fill function that writes data.
func writeBytes(data []byte) func(io.Writer) error {
	return func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	}
}

// isTempName reports whether name is the name of one of the store's temp
// files: a temp name (tempBase) whose base is <64 hex>, <64 hex>.json,
// VERSION, or a pack's file, <16 hex>.pack or <16 hex>.idx.
func isTempName(name string) bool {
	base, ok := tempBase(name)
	if !ok {
		return false
	}
	if base == versionFile || isPackFileName(base) {
		return true
	}
	base, _ = strings.CutSuffix(base, ".json")
	_, ok = parseHexName(base)
	return ok
}

// sweepTemp removes (or, with remove false, counts) the store's own temp
// files in tmp/ whose writer has died. errs may be nil (Open's best-effort
// cleaning).
func (s *Store) sweepTemp(st *GCStats, errs *[]error, remove bool) {
	s.atomic().sweep(s.storeDir(tmpDir, st, errs), func(name string) (bool, time.Duration) {
		return isTempName(name), 0
	}, st, errs, remove)
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

// Ordinary files.

// WriteFileAtomic writes data to the file path, mode 0644, never showing a
// partial file: readers see the old content or the new, even if the writer
// is killed or the power fails. It writes the store's way (a temp file
// beside path, .<name>.<random>.tmp, locked while written, fsynced, renamed
// over path, the directory fsynced); path is an ordinary path, links in it
// followed. The directory must exist. RemoveAbandonedTemps removes the temp
// files of writers killed before the rename.
func WriteFileAtomic(path string, data []byte) error {
	return WriteFileAtomicFunc(path, writeBytes(data))
}

// WriteFileAtomicFunc is WriteFileAtomic of what write writes, for files
// too large to hold in memory. write may be called more than once (from
// the start, on a fresh file) if a sweeper removed the temp file in the
// instant before it was locked.
func WriteFileAtomicFunc(path string, write func(io.Writer) error) error {
	dir, name := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	a := atomicDir{d: plainDir{filepath.Clean(dir)}, tmp: ".", hide: true, perm: 0o644}
	return a.write(name, write)
}

// legacyTempAge is how old a temp file of an older thv (named by
// os.CreateTemp, .<name>.tmp<digits>, and never locked) must be before
// RemoveAbandonedTemps removes it: no single write takes this long.
const legacyTempAge = time.Minute

// RemoveAbandonedTemps removes from dir the temp files that writers of
// WriteFileAtomic killed before their rename left for the file name (for
// any file if name is ""): only regular files with the writer's temp names,
// and only those whose lock no writer holds, so never one being written.
// Failures are ignored: a temp file left is harmless, and the next sweep
// tries again.
func RemoveAbandonedTemps(dir, name string) {
	if dir == "" {
		dir = "."
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	a := atomicDir{d: plainDir{dir}, tmp: "."}
	var st GCStats
	a.sweep(ents, func(n string) (bool, time.Duration) {
		hidden, ok := strings.CutPrefix(n, ".")
		if !ok {
			return false, 0
		}
		if base, ok := tempBase(hidden); ok {
			return base != "" && (name == "" || base == name), 0
		}
		// Older builds: .<name>.tmp<decimal digits>, unlocked.
		i := strings.LastIndex(hidden, tempSuffix)
		if i <= 0 || name != "" && hidden[:i] != name {
			return false, 0
		}
		_, err := strconv.ParseUint(hidden[i+len(tempSuffix):], 10, 64)
		return err == nil, legacyTempAge
	}, &st, nil, true)
}
