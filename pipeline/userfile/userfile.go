// Package userfile reads the files a user names to thv (--params,
// --reference, --instance, thv hv FILE) through a size limit, refusing
// anything that is not a regular file before it is opened for reading: a
// named pipe would block the open or the read forever, and a device such as
// /dev/zero would grow the reader without end.
//
// It is generic (no science imports) and in no task's code identity.
package userfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// ErrTooLarge is wrapped by the error for a file or stream over its limit.
var ErrTooLarge = errors.New("larger than the limit")

// ErrNotRegular is wrapped by the error for a path that is not a regular
// file (after symbolic links).
var ErrNotRegular = errors.New("not a regular file")

// Open opens path for reading if it is a regular file of at most limit
// bytes. The file is checked before it is opened (a FIFO's open would
// block), opened without blocking, and checked again on the open file (it
// may have been replaced in between). Reading it past limit bytes (it may
// grow) fails with an error wrapping ErrTooLarge.
func Open(path string, limit int64) (io.ReadCloser, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := check(path, fi, limit); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	if fi, err = f.Stat(); err == nil {
		err = check(path, fi, limit)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return &limited{r: LimitReader(f, limit, path), c: f}, nil
}

// ReadFile reads the regular file path whole, if it has at most limit
// bytes (see Open).
func ReadFile(path string, limit int64) ([]byte, error) {
	f, err := Open(path, limit)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// LimitReader reads r, failing with an error naming name that wraps
// ErrTooLarge once r has more than limit bytes: unlike io.LimitReader, a
// stream that is too long is an error, never silently cut.
func LimitReader(r io.Reader, limit int64, name string) io.Reader {
	return &limitReader{r: r, left: limit, limit: limit, name: name}
}

type limitReader struct {
	r           io.Reader
	left, limit int64
	name        string
}

func (l *limitReader) Read(p []byte) (int, error) {
	if l.left < 0 {
		return 0, tooLarge(l.name, l.limit)
	}
	// Read one byte more than allowed, to tell "exactly limit" from "more".
	if int64(len(p)) > l.left+1 {
		p = p[:l.left+1]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	if l.left < 0 {
		return n + int(l.left), tooLarge(l.name, l.limit)
	}
	return n, err
}

type limited struct {
	r io.Reader
	c io.Closer
}

func (l *limited) Read(p []byte) (int, error) { return l.r.Read(p) }
func (l *limited) Close() error               { return l.c.Close() }

// check refuses fi unless it is a regular file of at most limit bytes.
func check(path string, fi fs.FileInfo, limit int64) error {
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s: %w (%s); give a file", path, ErrNotRegular, kind(fi.Mode()))
	}
	if fi.Size() > limit {
		return tooLarge(path, limit)
	}
	return nil
}

func tooLarge(name string, limit int64) error {
	return fmt.Errorf("%s: %w of %s", name, ErrTooLarge, Size(limit))
}

// Size prints a limit in the largest binary unit that divides it.
func Size(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// kind names a file mode that is not a regular file.
func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "a special file"
}
