package userfile

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// within runs f and fails the test if it has not returned after a few
// seconds: a FIFO that blocks the open would hang the test otherwise.
func within(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: still blocked after 10 s", what)
	}
}

// TestReadFile: a regular file up to the limit is read whole; a larger
// one, a named pipe, a device, a directory or a socket is refused with an
// error naming the path and the kind, at once and without reading.
func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, n int) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, bytes.Repeat([]byte("x"), n), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	small, exact, big := write("small", 10), write("exact", 1024), write("big", 1025)
	link := filepath.Join(dir, "link")
	if err := os.Symlink(small, link); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path string
		n    int
	}{{small, 10}, {exact, 1024}, {link, 10}} {
		b, err := ReadFile(c.path, 1024)
		if err != nil || len(b) != c.n {
			t.Errorf("%s: %d bytes, %v", c.path, len(b), err)
		}
	}
	if _, err := ReadFile(big, 1024); !errors.Is(err, ErrTooLarge) || err.Error() != big+": larger than the limit of 1 KiB" {
		t.Errorf("1025 bytes with a limit of 1024: %v", err)
	}
	if _, err := ReadFile(filepath.Join(dir, "missing"), 1024); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}

	refused := map[string]string{dir: "a directory"}
	if runtime.GOOS != "windows" {
		for path, kind := range specialFiles(t, dir) {
			refused[path] = kind
		}
	}
	for path, kind := range refused {
		within(t, path, func() {
			_, err := ReadFile(path, 1024)
			if want := path + ": not a regular file (" + kind + "); give a file"; !errors.Is(err, ErrNotRegular) || err.Error() != want {
				t.Errorf("%s: %v, want %q", path, err, want)
			}
		})
	}
}

// TestLimitReader: a stream is read up to its limit and fails one byte
// past it, never silently cut; /dev/zero stops at the limit.
func TestLimitReader(t *testing.T) {
	for _, c := range []struct {
		n       int
		tooLong bool
	}{{0, false}, {99, false}, {100, false}, {101, true}, {1 << 20, true}} {
		b, err := io.ReadAll(LimitReader(strings.NewReader(strings.Repeat("y", c.n)), 100, "stdin"))
		switch {
		case c.tooLong && (!errors.Is(err, ErrTooLarge) || err.Error() != "stdin: larger than the limit of 100 bytes" || len(b) > 100):
			t.Errorf("%d bytes: %d read, %v", c.n, len(b), err)
		case !c.tooLong && (err != nil || len(b) != c.n):
			t.Errorf("%d bytes: %d read, %v", c.n, len(b), err)
		}
	}
	if runtime.GOOS == "windows" {
		return
	}
	f, err := os.Open("/dev/zero")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	within(t, "/dev/zero", func() {
		if b, err := io.ReadAll(LimitReader(f, 1<<20, "/dev/zero")); !errors.Is(err, ErrTooLarge) || len(b) != 1<<20 {
			t.Errorf("/dev/zero: %d bytes, %v", len(b), err)
		}
	})
}

// TestOpenGrows: a file that grows past the limit after it was opened
// fails the read.
func TestOpenGrows(t *testing.T) {
	p := filepath.Join(t.TempDir(), "grows")
	if err := os.WriteFile(p, []byte("abc"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Open(p, 10)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := os.WriteFile(p, bytes.Repeat([]byte("z"), 100), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := io.ReadAll(r); !errors.Is(err, ErrTooLarge) || len(b) > 10 {
		t.Errorf("grown to 100 bytes with a limit of 10: %d read, %v", len(b), err)
	}
}

func TestSize(t *testing.T) {
	for n, want := range map[int64]string{1 << 20: "1 MiB", 4 << 20: "4 MiB", 256 << 20: "256 MiB", 1 << 30: "1 GiB", 3 << 10: "3 KiB", 1536: "1536 bytes", 100: "100 bytes"} {
		if got := Size(n); got != want {
			t.Errorf("Size(%d) = %q, want %q", n, got, want)
		}
	}
}
