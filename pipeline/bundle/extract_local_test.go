package bundle

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestExtractTellsALocalFault: a full, read-only or failing disk is this
// machine's fault, not the bundle's. The error wraps ErrLocal and the
// system's error, names the directory and the fix, says the bundle was
// not judged — and the target directory is removed all the same.
func TestExtractTellsALocalFault(t *testing.T) {
	files := func(n, size int) []byte {
		m := Manifest{}
		var parts [][]byte
		for i := range n {
			data := bytes.Repeat([]byte{byte(i)}, size)
			name := fmt.Sprintf("f%02d", i)
			m[name] = sha256.Sum256(data)
			parts = append(parts, rawFile(name, data))
		}
		return rawTarGz(t, append([][]byte{rawFile(ManifestName, m.Encode())}, parts...)...)
	}
	for _, tc := range []struct {
		name   string
		opts   string
		flags  uintptr
		bundle []byte
		fill   int64 // bytes another program writes to the file system once Extract has begun
		errno  syscall.Errno
		want   []string
	}{
		{
			// The entries declare more than the free space: refused on
			// the header, before the disk fills.
			name: "too little free space", opts: "size=1m", bundle: bombArchive(t, 2<<20), errno: syscall.ENOSPC,
			want: []string{"is too full: 1.0 MiB (1048576 bytes) free, 51.2 KiB (52428 bytes) of it kept in reserve, and the bundle's files up to \"zeros\" need 2.0 MiB (2101248 bytes): free space, or extract with --dir on a larger disk; the bundle was not judged"},
		},
		{
			// The disk fills as the files are written: out of inodes.
			name: "out of inodes", opts: "size=1m,nr_inodes=8", bundle: files(20, 1), errno: syscall.ENOSPC,
			want: []string{"is full (creating f0", ": no space left on device; the bundle's files so far need", "): free space, or extract with --dir on a larger disk; the bundle was not judged"},
		},
		{
			// Another program fills the disk once the free space was
			// measured: a write fails.
			name: "filled meanwhile", opts: "size=1m", bundle: files(2, 256<<10), fill: 900 << 10, errno: syscall.ENOSPC,
			want: []string{"is full (writing f0", ": no space left on device; the bundle's files so far need", "the bundle was not judged"},
		},
		{
			name: "read-only", opts: "size=1m", flags: syscall.MS_RDONLY, bundle: files(1, 1), errno: syscall.EROFS,
			want: []string{"is read-only (creating ", "read-only file system): extract with --dir on a writable disk; the bundle was not judged"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := mountTmpfs(t, tc.opts, tc.flags)
			var r io.Reader = bytes.NewReader(tc.bundle)
			if tc.fill > 0 {
				r = &filler{r: r, path: filepath.Join(fs, "other-program"), n: tc.fill}
			}
			dir := filepath.Join(fs, "target")
			_, err := Extract(r, dir, Limits{})
			if !errors.Is(err, ErrLocal) || !errors.Is(err, tc.errno) {
				t.Fatalf("got %v, want an error wrapping ErrLocal and %v", err, tc.errno)
			}
			msg := err.Error()
			prefix := "this machine's file system at " + dir + " "
			if tc.errno == syscall.EROFS {
				prefix = "this machine's file system at " + fs + " " // the target could not be made
			}
			if !strings.HasPrefix(msg, prefix) {
				t.Errorf("got %q, want it to start with %q", msg, prefix)
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("got %q, want %q in it", msg, w)
				}
			}
			var ee *EntryError
			if errors.As(err, &ee) || errors.Is(err, ErrTampered) || strings.Contains(msg, "refused") || strings.Contains(msg, "not a valid bundle") {
				t.Errorf("a local fault blamed on the bundle: %v", err)
			}
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Errorf("the target directory was left: %v", err)
			}
		})
	}
}

// filler writes n bytes to path on its first Read: another program
// filling the disk once Extract has measured it.
type filler struct {
	r    io.Reader
	path string
	n    int64
	done bool
}

func (f *filler) Read(p []byte) (int, error) {
	if !f.done {
		f.done = true
		if err := os.WriteFile(f.path, make([]byte, f.n), 0o644); err != nil {
			return 0, fmt.Errorf("the test's filler: %v", err)
		}
	}
	return f.r.Read(p)
}

// TestExtractUnreadableBundle: failing to read the bundle's file is this
// machine's fault too, however the archive would have been judged.
func TestExtractUnreadableBundle(t *testing.T) {
	good := archive(t, true, reg("a", "alpha"))
	for _, after := range []int{0, 10, len(good) / 2} {
		r := io.MultiReader(bytes.NewReader(good[:after]), errReader{&os.PathError{Op: "read", Path: "b.tar.gz", Err: syscall.EIO}})
		base := t.TempDir()
		_, err := Extract(r, filepath.Join(base, "target"), Limits{})
		assertEmptyDir(t, base)
		want := "reading the bundle failed on this machine: read b.tar.gz: input/output error; the bundle was not judged"
		if !errors.Is(err, ErrLocal) || !errors.Is(err, syscall.EIO) || err.Error() != want {
			t.Errorf("failing after %d bytes: got %v, want %s (wrapping ErrLocal and EIO)", after, err, want)
		}
	}
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }
