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

// writeBytes is the fill function that writes data.
func writeBytes(data []byte) func(io.Writer) error {
	return func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	}
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
