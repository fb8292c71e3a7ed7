package remote

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
)

// fileBackend is a remote in a local directory (a mounted network file
// system, a shared disk): each file is written to a temp file beside it and
// renamed, as the local store does. The directory is as untrusted as a
// bucket: every path goes through an os.Root opened on it (nothing outside
// is read or written), only regular files are read — a named pipe would
// block a reader, a device would never end — and no symbolic link is
// followed, as a file or as a directory on the way to one.
type fileBackend struct {
	url, root string
	dir       *os.Root
}

func newFile(rawURL, root string) (*fileBackend, error) {
	root = filepath.Clean(root)
	fi, err := os.Stat(root)
	if err != nil {
		return nil, fmt.Errorf("remote %s: %w (create the directory first)", rawURL, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("remote %s: %s is not a directory", rawURL, root)
	}
	dir, err := os.OpenRoot(root)
	if err != nil {
		return nil, fmt.Errorf("remote %s: %w", rawURL, err)
	}
	return &fileBackend{url: rawURL, root: root, dir: dir}, nil
}

func (b *fileBackend) String() string { return b.url }

// refused is the error for a remote file that is not read as it is.
func (b *fileBackend) refused(name, why string) error {
	return fmt.Errorf("%s: %w: %s", filepath.Join(b.root, filepath.FromSlash(name)), ErrRefused, why)
}

// checkDirs refuses a name whose directories are not directories of the
// remote itself (a link to one elsewhere, or no directory).
func (b *fileBackend) checkDirs(name string) error {
	var dirs []string
	for d := path.Dir(name); d != "."; d = path.Dir(d) {
		dirs = append(dirs, d)
	}
	for i := len(dirs) - 1; i >= 0; i-- { // from the top
		d := dirs[i]
		fi, err := b.dir.Lstat(d)
		if err != nil {
			return err
		}
		if !fi.IsDir() {
			return b.refused(d, "not a directory ("+kindOf(fi.Mode())+")")
		}
	}
	return nil
}

// lstat describes the file name itself (not a link's target) and
// refuses any but a regular file.
func (b *fileBackend) lstat(name string) (fs.FileInfo, error) {
	if err := b.checkDirs(name); err != nil {
		return nil, err
	}
	fi, err := b.dir.Lstat(name)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, b.refused(name, "not a regular file ("+kindOf(fi.Mode())+")")
	}
	return fi, nil
}

// Get reads the regular file name, of at most limit bytes. It is opened
// without blocking (a named pipe put there after the check returns at
// once) and checked again once open: the same file, still regular.
func (b *fileBackend) Get(_ context.Context, name string, limit int64) ([]byte, error) {
	before, err := b.lstat(name)
	if err != nil {
		return nil, err
	}
	if before.Size() > limit {
		return nil, b.refused(name, fmt.Sprintf("%d bytes, more than the %d expected", before.Size(), limit))
	}
	f, err := b.dir.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() || !os.SameFile(before, fi) {
		return nil, b.refused(name, "replaced while it was opened")
	}
	if fi.Size() > limit {
		return nil, b.refused(name, fmt.Sprintf("%d bytes, more than the %d expected", fi.Size(), limit))
	}
	return readBounded(f, name, fi.Size(), limit)
}

// Put writes name whole or not at all: a temp file beside it (created
// new, never through a link), synced, renamed over the name (which
// replaces whatever was there, a link or a pipe included, without
// following it).
func (b *fileBackend) Put(_ context.Context, name string, data []byte) error {
	dir := path.Dir(name)
	if err := b.checkDirs(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err // a link where a directory belongs: not followed, not replaced
	}
	if err := b.dir.MkdirAll(dir, 0o777); err != nil {
		return err
	}
	if err := b.checkDirs(name); err != nil {
		return err
	}
	var r [8]byte
	rand.Read(r[:])
	tmp := path.Join(dir, "."+path.Base(name)+"."+hex.EncodeToString(r[:])+".tmp")
	f, err := b.dir.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = b.dir.Rename(tmp, name)
	}
	if err != nil {
		b.dir.Remove(tmp)
		return err
	}
	if d, err := b.dir.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

func (b *fileBackend) Stat(_ context.Context, name string) (Info, error) {
	fi, err := b.lstat(name)
	if err != nil {
		return Info{}, err
	}
	return Info{Name: name, Size: fi.Size(), ModTime: fi.ModTime()}, nil
}

func (b *fileBackend) List(_ context.Context, prefix string, fn func(Info) error) error {
	dir := strings.TrimSuffix(prefix, "/")
	if dir == "" {
		dir = "."
	}
	err := fs.WalkDir(b.dir.FS(), dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p == dir {
				return nil
			}
			return err
		}
		if !d.Type().IsRegular() {
			return nil // directories; links are never followed
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if !strings.HasPrefix(p, prefix) {
			return nil
		}
		return fn(Info{Name: p, Size: fi.Size(), ModTime: fi.ModTime()})
	})
	return err
}

func (b *fileBackend) Delete(_ context.Context, name string) error {
	if err := b.checkDirs(name); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	err := b.dir.Remove(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// kindOf names a file mode that is not a regular file.
func kindOf(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	}
	return "not a regular file"
}
