package remote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"thv/artifacts"
)

// fileBackend is a remote in a local directory (a mounted network file
// system, a shared disk): each file is written to a temp file beside it and
// renamed, as the local store does.
type fileBackend struct {
	url, root string
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
	return &fileBackend{url: rawURL, root: root}, nil
}

func (b *fileBackend) String() string { return b.url }

func (b *fileBackend) path(name string) string {
	return filepath.Join(b.root, filepath.FromSlash(name))
}

func (b *fileBackend) Get(_ context.Context, name string, limit int64) ([]byte, error) {
	f, err := os.Open(b.path(name))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s: larger than %d bytes", name, limit)
	}
	return data, nil
}

func (b *fileBackend) Put(_ context.Context, name string, data []byte) error {
	p := b.path(name)
	if err := os.MkdirAll(filepath.Dir(p), 0o777); err != nil {
		return err
	}
	return artifacts.WriteFileAtomic(p, data)
}

func (b *fileBackend) Stat(_ context.Context, name string) (Info, error) {
	fi, err := os.Stat(b.path(name))
	if err != nil {
		return Info{}, err
	}
	if !fi.Mode().IsRegular() {
		return Info{}, fmt.Errorf("%s is not a regular file", b.path(name))
	}
	return Info{Name: name, Size: fi.Size(), ModTime: fi.ModTime()}, nil
}

func (b *fileBackend) List(_ context.Context, prefix string, fn func(Info) error) error {
	dir := b.path(prefix)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
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
		rel, err := filepath.Rel(b.root, p)
		if err != nil {
			return err
		}
		name := filepath.ToSlash(rel)
		if !strings.HasPrefix(name, prefix) {
			return nil
		}
		return fn(Info{Name: name, Size: fi.Size(), ModTime: fi.ModTime()})
	})
	return err
}

func (b *fileBackend) Delete(_ context.Context, name string) error {
	err := os.Remove(b.path(name))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}
