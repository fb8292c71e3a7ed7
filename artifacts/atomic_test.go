package artifacts

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestWriteFileAtomic: the file holds the data, mode 0644 whatever the
// umask, replacing what was there, with no temp file left beside it; the
// path is an ordinary one (a linked directory is followed); a missing
// directory is an error naming the path, and writes nothing.
func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "thv.lock")
	for _, data := range [][]byte{[]byte("first\n"), []byte("second, longer\n"), nil} {
		if err := WriteFileAtomic(p, data); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(p)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("read back %q, %v; want %q", got, err, data)
		}
		if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o644 {
			t.Errorf("mode %v, want 0644", fi.Mode().Perm())
		}
		if files := listFiles(t, dir); !slices.Equal(files, []string{"thv.lock"}) {
			t.Errorf("directory holds %v, want only thv.lock", files)
		}
	}

	linked := filepath.Join(t.TempDir(), "results")
	if err := os.Symlink(dir, linked); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomic(filepath.Join(linked, "all.tex"), []byte("x")); err != nil {
		t.Fatalf("through a linked directory: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "all.tex")); err != nil || string(b) != "x" {
		t.Errorf("the linked directory's file: %q, %v", b, err)
	}

	missing := filepath.Join(dir, "none", "f")
	err := WriteFileAtomic(missing, []byte("x"))
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), filepath.Join(dir, "none")) {
		t.Errorf("missing directory: %v, want ErrNotExist naming it", err)
	}

	t.Chdir(dir)
	if err := WriteFileAtomic("relative", []byte("r")); err != nil {
		t.Fatalf("a relative path: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "relative")); string(b) != "r" {
		t.Errorf("relative path wrote %q", b)
	}
}

// TestWriteFileAtomicFuncFailure: when the writer fails, the file keeps
// its old content, the error is the writer's, and no temp file is left.
func TestWriteFileAtomicFuncFailure(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "paper.tar.gz")
	if err := WriteFileAtomic(p, []byte("old")); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := WriteFileAtomicFunc(p, func(w io.Writer) error {
		w.Write([]byte("half of the new"))
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("got %v, want the writer's error", err)
	}
	if b, _ := os.ReadFile(p); string(b) != "old" {
		t.Errorf("after a failed write the file holds %q, want the old content", b)
	}
	if files := listFiles(t, dir); !slices.Equal(files, []string{"paper.tar.gz"}) {
		t.Errorf("directory holds %v, want only the file", files)
	}
}

// TestRemoveAbandonedTemps: the sweeper of ordinary directories removes the
// temp files of dead writers of the named file (of any file with name ""),
// never one whose writer holds it, never another file's, never a file
// that is not a temp file, never a link (nor what it points to); temp
// files of older builds (never locked) go once a minute old.
func TestRemoveAbandonedTemps(t *testing.T) {
	dir := t.TempDir()
	old := time.Now().Add(-time.Hour)
	write := func(name string, aged bool) string {
		p := filepath.Join(dir, name)
		writeFile(t, p, "x")
		if aged {
			os.Chtimes(p, old, old)
		}
		return name
	}
	a := atomicDir{d: plainDir{dir}, tmp: ".", hide: true}
	live, liveRel, err := a.createTemp("thv.lock")
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	if err := lockTemp(live); err != nil {
		t.Fatal(err)
	}
	dead, deadRel, err := a.createTemp("thv.lock")
	if err != nil {
		t.Fatal(err)
	}
	dead.Close() // its writer died: nobody holds it
	outside := filepath.Join(t.TempDir(), "precious")
	writeFile(t, outside, "do not touch")
	if err := os.Symlink(outside, filepath.Join(dir, ".thv.lock.1f.tmp")); err != nil {
		t.Fatal(err)
	}
	gone := []string{
		deadRel,
		write(".thv.lock.tmp123", true), // an older build's, aged
	}
	kept := []string{ // regular files (the link is checked apart)
		liveRel,
		write(".thv.quick.lock.2e.tmp", false), // another file's
		write(".thv.quick.lock.tmp9", true),    // another file's, older build
		write(".thv.lock.tmp456", false),       // an older build's, young: maybe writing
		write("thv.lock", false),
		write("thv.lock.3d.tmp", false),  // not hidden: not a name WriteFileAtomic makes
		write(".thv.lock.xyz.tmp", true), // not hex
		write(".thv.lock.tmp", true),
		write("notes.txt", true),
	}
	RemoveAbandonedTemps(dir, "thv.lock")
	got := listFiles(t, dir)
	want := slices.Clone(kept)
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("after the sweep: %v\nwant %v (removed: %v)", got, want, gone)
	}
	if _, err := os.Lstat(filepath.Join(dir, ".thv.lock.1f.tmp")); err != nil {
		t.Errorf("the link with a temp name was removed: %v", err)
	}
	if b, _ := os.ReadFile(outside); string(b) != "do not touch" {
		t.Error("the link's target was changed")
	}

	// Any file's temp files with name "": only the dead ones.
	RemoveAbandonedTemps(dir, "")
	for _, n := range []string{".thv.quick.lock.2e.tmp", ".thv.quick.lock.tmp9"} {
		if _, err := os.Lstat(filepath.Join(dir, n)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s survived a sweep of every name", n)
		}
	}
	for _, n := range []string{liveRel, ".thv.lock.1f.tmp", ".thv.lock.tmp456", "notes.txt"} {
		if _, err := os.Lstat(filepath.Join(dir, n)); err != nil {
			t.Errorf("%s was removed by a sweep of every name: %v", n, err)
		}
	}
}

// writeFileHelperEnv, when set to a path, turns the test binary into a
// writer that replaces that file with WriteFileAtomic until it is killed.
const writeFileHelperEnv = "THV_ARTIFACTS_WRITEFILE_HELPER"

// sealedBlob is size bytes whose first 32 are the SHA-256 of the rest.
func sealedBlob(r *rand.Rand, size int) []byte {
	b := make([]byte, size)
	for i := 32; i < size; i++ {
		b[i] = byte(r.Uint32())
	}
	sum := sha256.Sum256(b[32:])
	copy(b, sum[:])
	return b
}

func sealed(b []byte) bool {
	return len(b) >= 32 && sha256.Sum256(b[32:]) == [32]byte(b[:32])
}

func writeFileForever(path string) {
	r := rand.New(rand.NewPCG(uint64(os.Getpid()), 1))
	for i := 0; ; i++ {
		if err := WriteFileAtomic(path, sealedBlob(r, 256<<10+r.IntN(256<<10))); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(3)
		}
		if i == 0 {
			os.Stdout.WriteString("ready\n")
		}
	}
}

// TestKilledWriteFileAtomic SIGKILLs a process that keeps replacing a file
// with WriteFileAtomic, while this process keeps reading it: every read,
// and the file after each kill, is one whole version; the killed writers'
// temp files are all removed by RemoveAbandonedTemps.
func TestKilledWriteFileAtomic(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns writer processes")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "thv.lock")
	stop := make(chan struct{})
	var wg sync.WaitGroup
	reads := 0
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			b, err := os.ReadFile(p)
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil || !sealed(b) {
				t.Errorf("a reader saw a partial file (%d bytes, %v)", len(b), err)
				return
			}
			reads++
		}
	})
	r := rand.New(rand.NewPCG(3, 4))
	for round := range 3 {
		killHelper(t, exe, []string{writeFileHelperEnv + "=" + p}, r)
		if b, err := os.ReadFile(p); err != nil || !sealed(b) {
			t.Fatalf("round %d: after the kill the file is not whole (%d bytes, %v)", round, len(b), err)
		}
	}
	close(stop)
	wg.Wait()
	before := listFiles(t, dir)
	RemoveAbandonedTemps(dir, "thv.lock")
	if after := listFiles(t, dir); !slices.Equal(after, []string{"thv.lock"}) {
		t.Errorf("after the sweep: %v, want only thv.lock", after)
	}
	t.Logf("%d whole reads; %d temp files of killed writers removed", reads, len(before)-1)
}
