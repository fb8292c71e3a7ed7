// Package tempdir makes THV's temporary directories, and removes the ones
// a killed thv left behind.
//
// A directory made by New is os.TempDir()/<prefix><random>/ (the prefix
// starts with "thv-"), holding the caller's directory, data/ (Path), and
// owner.lock, a file this process holds an exclusive flock on for as long
// as the directory lives. The kernel releases the lock when the process
// ends, however it ends (SIGKILL, an out-of-memory kill, a second Ctrl-C),
// so a directory whose lock can be taken belongs to no live process: Sweep,
// run when a thv command that makes temp data starts, removes those. It
// never removes a directory without owner.lock (not ours), one whose lock
// is held (a live thv's, this one's included), one owned by another user,
// or a symbolic link; it unmounts what is mounted below a dead directory
// (a container's tmpfs scratch) before removing it, and never follows a
// link while removing.
//
// The lock lives beside data/, not in it, so that what a caller puts in
// its directory (results, a store, a container's bundle) is all that is
// there.
//
// It is generic (no science imports) and in no task's code identity.
package tempdir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"thv/artifacts/flock"
)

// Prefix starts the name of every THV temp directory.
const Prefix = "thv-"

const (
	lockName    = "owner.lock"      // the marker and the lock
	newLockName = ".owner.lock.new" // the lock before it is held
	dataName    = "data"            // the caller's directory
)

// Dir is a temp directory of this process.
type Dir struct {
	root string
	lock *os.File
}

// live keeps every Dir not yet removed reachable: a Dir dropped without
// Remove must not have its lock file closed by the garbage collector
// while its directory is in use.
var live sync.Map // *Dir → struct{}

// New makes a temp directory under os.TempDir() named prefix followed by
// random characters; prefix must start with Prefix. The caller uses Path
// and calls Remove when done.
func New(prefix string) (*Dir, error) {
	if !strings.HasPrefix(prefix, Prefix) || strings.ContainsAny(prefix, `/\*`) {
		return nil, fmt.Errorf("tempdir: prefix %q: want %s… without / or *", prefix, Prefix)
	}
	root, err := os.MkdirTemp("", prefix+"*")
	if err != nil {
		return nil, err
	}
	d, err := initDir(root)
	if err != nil {
		os.RemoveAll(root)
		return nil, fmt.Errorf("tempdir: %s: %w", root, err)
	}
	live.Store(d, struct{}{})
	return d, nil
}

// initDir takes the lock under a name Sweep ignores and only then gives it
// its name: a sweep never sees owner.lock unheld while its owner lives.
func initDir(root string) (*Dir, error) {
	f, err := os.OpenFile(filepath.Join(root, newLockName), os.O_RDWR|os.O_CREATE|os.O_EXCL|oNoFollow, 0o600)
	if err != nil {
		return nil, err
	}
	ok, err := flock.TryAcquire(f, true)
	if err == nil && !ok {
		err = errors.New("the new lock file is locked by another process")
	}
	if err == nil {
		err = os.Rename(filepath.Join(root, newLockName), filepath.Join(root, lockName))
	}
	if err == nil {
		err = os.Mkdir(filepath.Join(root, dataName), 0o700)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return &Dir{root: root, lock: f}, nil
}

// Path is the caller's directory: empty when New returns, private to the
// user (mode 0700).
func (d *Dir) Path() string { return filepath.Join(d.root, dataName) }

// Root is the directory New made, which holds Path and the lock.
func (d *Dir) Root() string { return d.root }

// Remove removes the directory (unmounting what is mounted below it) and
// releases its lock. Removing twice is harmless.
func (d *Dir) Remove() error {
	if _, ok := live.LoadAndDelete(d); !ok {
		return nil
	}
	err := remove(d.root)
	d.lock.Close()
	return err
}

// Sweep removes the THV temp directories under os.TempDir() whose owner is
// gone (see the package comment), and returns their paths. Its error joins
// the directories it could not remove (a mount it may not unmount); a
// directory it cannot judge is left alone silently.
func Sweep() (removed []string, err error) {
	if !flock.Supported {
		return nil, nil
	}
	tmp := os.TempDir()
	entries, err := os.ReadDir(tmp)
	if err != nil {
		return nil, fmt.Errorf("tempdir: sweep: %w", err)
	}
	var errs []error
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), Prefix) || !e.IsDir() { // a link is not IsDir
			continue
		}
		root := filepath.Join(tmp, e.Name())
		lock, ok := deadLock(root)
		if !ok {
			continue
		}
		if !stillThere(root, lock) { // removed by its owner meanwhile
			lock.Close()
			continue
		}
		if err := remove(root); err != nil {
			errs = append(errs, err)
		} else {
			removed = append(removed, root)
		}
		lock.Close()
	}
	return removed, errors.Join(errs...)
}

// deadLock returns root's owner.lock, locked by this call, if root is a
// directory of this user (not a link) whose owner.lock is a regular file
// no one holds.
func deadLock(root string) (*os.File, bool) {
	fi, err := os.Lstat(root)
	if err != nil || !fi.IsDir() || !ownedByMe(fi) {
		return nil, false
	}
	f, err := os.OpenFile(filepath.Join(root, lockName), os.O_RDONLY|oNoFollow, 0)
	if err != nil {
		return nil, false
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, false
	}
	if ok, err := flock.TryAcquire(f, true); err != nil || !ok {
		f.Close()
		return nil, false
	}
	return f, true
}

// stillThere reports whether root/owner.lock is still the file lock: its
// owner may have removed the directory (and released the lock) between our
// open and our flock.
func stillThere(root string, lock *os.File) bool {
	a, err := lock.Stat()
	if err != nil {
		return false
	}
	b, err := os.Lstat(filepath.Join(root, lockName))
	return err == nil && os.SameFile(a, b)
}

// remove unmounts every mount at or below root, deepest first, and then
// removes root; with a mount it could not unmount, it removes nothing (a
// removal would empty the mounted filesystem and fail).
func remove(root string) error {
	mounts, err := mountsBelow(root)
	if err != nil {
		return fmt.Errorf("tempdir: %s: %w", root, err)
	}
	for _, m := range mounts {
		if err := unmount(m); err != nil {
			return fmt.Errorf("tempdir: %s: cannot unmount %s: %w (unmount it, then run thv again)", root, m, err)
		}
	}
	if err := os.RemoveAll(root); err != nil { // RemoveAll follows no link
		return fmt.Errorf("tempdir: %w", err)
	}
	return nil
}
