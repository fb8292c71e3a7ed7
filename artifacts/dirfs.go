package artifacts

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// dirFS is the store directory as the store touches it: every path it takes
// is relative to the directory (a "rel", such as objects/ab/<64 hex>), and
// no operation follows a symbolic link in any component of it or reaches
// outside the directory. A link anywhere on the path (objects/, a fan-out
// directory, corrupt/, tmp/, the file itself) makes the operation fail with
// a *fs.PathError naming the link and wrapping errSymlink, except lstat of
// a link as the last component, which describes the link itself.
//
// That is what keeps the store inside its directory whoever else writes
// there: a `corrupt -> /etc` link cannot make quarantine move a file out, a
// `tmp -> /home/you` link cannot make GC remove a file there, an
// `objects/ab -> /srv` link cannot make Put write there nor Get read from
// there. Only the path of the store directory itself, which the user names,
// is resolved the ordinary way (links in it followed) once, when the store
// is opened (openDirFS); the Store then holds one descriptor on the
// directory for its life (closed when the Store is collected), so it stays
// bound to that directory even if the directory is renamed.
//
// Hard links need no defence on the write side: the store only ever creates
// files (O_EXCL), renames them and unlinks names, so a hard link in the
// store to an outside file can neither be written through nor have its
// outside name removed. (A reader of a store another process wrote,
// Store.Untrusted, refuses them anyway: the store never makes them.)
//
// Two implementations: openat2(2) with RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS
// on Linux (dirfs_linux.go: the kernel resolves the whole path in one
// system call, with no window between a check and a use) and, elsewhere or
// on a kernel without openat2, an *os.Root with an Lstat of every
// component first (dirfs_root.go: os.Root keeps every operation inside the
// directory even if a component is swapped for a link between the check
// and the use; it would then follow a link that points inside the store,
// never one out of it).
type dirFS interface {
	// open opens rel with flag (os.O_RDONLY|oNonblock to read a file that
	// may be a FIFO; os.O_CREATE|os.O_EXCL|... to create one).
	open(rel string, flag int, perm fs.FileMode) (*os.File, error)
	// openDir opens the directory rel for reading its entries or
	// syncing it ("." is the store directory).
	openDir(rel string) (*os.File, error)
	// lstat describes rel without following it (a link in the last
	// component is described, not followed).
	lstat(rel string) (fs.FileInfo, error)
	// isRegular reports whether rel is a regular file: the cheap presence
	// test of Has.
	isRegular(rel string) bool
	mkdir(rel string, perm fs.FileMode) error
	// rename renames oldrel to newrel (both inside the store); the last
	// components are never followed (rename(2) acts on names).
	rename(oldrel, newrel string) error
	// remove removes the file or empty directory rel (never what a link
	// in its place points to).
	remove(rel string) error
	// abs returns the absolute path of rel, for messages.
	abs(rel string) string
	// syncfs makes everything written to the file system holding the
	// directory durable (syncfs(2): the store's barrier, durable.go).
	syncfs() error
}

// errSymlink is wrapped (in a *fs.PathError naming the link) by a dirFS
// operation that met a symbolic link on its path.
var errSymlink = errors.New("is a symbolic link, which the store never follows (it never creates links either: remove it)")

// absentDir is the dirFS of a store directory that does not exist (Open
// in mode ExistingOrMissing on a fresh clone): everything is missing,
// nothing can be created.
type absentDir struct{ name string }

func (d absentDir) notExist(op, rel string) error {
	return &fs.PathError{Op: op, Path: d.abs(rel), Err: fs.ErrNotExist}
}

func (d absentDir) open(rel string, _ int, _ fs.FileMode) (*os.File, error) {
	return nil, d.notExist("open", rel)
}
func (d absentDir) openDir(rel string) (*os.File, error)  { return nil, d.notExist("open", rel) }
func (d absentDir) lstat(rel string) (fs.FileInfo, error) { return nil, d.notExist("lstat", rel) }
func (d absentDir) isRegular(string) bool                 { return false }
func (d absentDir) mkdir(rel string, _ fs.FileMode) error { return d.notExist("mkdir", rel) }
func (d absentDir) rename(oldrel, _ string) error         { return d.notExist("rename", oldrel) }
func (d absentDir) remove(rel string) error               { return d.notExist("remove", rel) }
func (d absentDir) abs(rel string) string                 { return joinRel(d.name, rel) }
func (d absentDir) syncfs() error                         { return nil }

// plainDir is an ordinary directory as a dirFS, for files outside a store
// (WriteFileAtomic): paths are joined to its name and links followed, as
// everywhere but in a store.
type plainDir struct{ name string }

func (d plainDir) open(rel string, flag int, perm fs.FileMode) (*os.File, error) {
	return os.OpenFile(d.abs(rel), flag, perm)
}
func (d plainDir) openDir(rel string) (*os.File, error)     { return os.Open(d.abs(rel)) }
func (d plainDir) lstat(rel string) (fs.FileInfo, error)    { return os.Lstat(d.abs(rel)) }
func (d plainDir) mkdir(rel string, perm fs.FileMode) error { return os.Mkdir(d.abs(rel), perm) }
func (d plainDir) rename(oldrel, newrel string) error       { return os.Rename(d.abs(oldrel), d.abs(newrel)) }
func (d plainDir) remove(rel string) error                  { return os.Remove(d.abs(rel)) }
func (d plainDir) abs(rel string) string                    { return joinRel(d.name, rel) }
func (d plainDir) syncfs() error                            { return syncfsOf(d, ".") }
func (d plainDir) isRegular(rel string) bool {
	fi, err := os.Lstat(d.abs(rel))
	return err == nil && fi.Mode().IsRegular()
}

// joinRel is the absolute path of rel below the store directory root.
func joinRel(root, rel string) string {
	if rel == "." || rel == "" {
		return root
	}
	return filepath.Join(root, rel)
}

// splitRel splits rel into its parent ("." for a top-level name) and its
// last component.
func splitRel(rel string) (dir, base string) {
	i := strings.LastIndexByte(rel, filepath.Separator)
	if i < 0 {
		return ".", rel
	}
	return rel[:i], rel[i+1:]
}

// syncfsOf syncs the file system holding the directory rel of d.
func syncfsOf(d dirFS, rel string) error {
	f, err := d.openDir(rel)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := syncfsFile(f); err != nil {
		return &fs.PathError{Op: "syncfs", Path: d.abs(rel), Err: err}
	}
	return nil
}

// readDirRel lists the directory rel of d.
func readDirRel(d dirFS, rel string) ([]fs.DirEntry, error) {
	f, err := d.openDir(rel)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.ReadDir(-1)
}
