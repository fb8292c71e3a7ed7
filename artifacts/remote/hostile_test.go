//go:build linux

package remote

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"thv/artifacts"
)

// within fails the test if f does not return within d: a read of a
// hostile remote must never block.
func within(t *testing.T, d time.Duration, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s did not return within %v", what, d)
	}
}

// allocated is the bytes f allocates on the heap.
func allocated(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// TestFileRemoteRefusesSpecialFiles: a file:// remote is a directory
// anyone with access may fill. An entry or an object that is a named pipe,
// a link (to a file outside, or to a directory), or a directory where a
// file belongs is refused at once — never a blocked read, never a byte
// from outside — and the entry is not used; a writer replaces such a
// file by renaming over it, and writes nothing through a linked
// directory.
func TestFileRemoteRefusesSpecialFiles(t *testing.T) {
	ctx := context.Background()
	alice := genKey(t, "alice")
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret")
	if err := os.WriteFile(secret, []byte("outside the remote"), 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := func(p string) error { return syscall.Mkfifo(p, 0o644) }
	for _, c := range []struct {
		name   string
		object bool // plant it as the first object, else as the entry
		plant  func(p string) error
	}{
		{"entry a named pipe", false, fifo},
		{"entry a link outside", false, func(p string) error { return os.Symlink(secret, p) }},
		{"entry a directory", false, func(p string) error { return os.Mkdir(p, 0o755) }},
		{"object a named pipe", true, fifo},
		{"object a link outside", true, func(p string) error { return os.Symlink(secret, p) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir, url := fileRemote(t)
			a := newStore(t)
			e := putTask(t, a, 1, 100)
			w, _ := openRemote(t, url, alice)
			w.Publish(ctx, a, e.Key, "t")
			target := filepath.Join(dir, filepath.FromSlash(entryName(e.Key)))
			if c.object {
				target = filepath.Join(dir, filepath.FromSlash(objectName(e.Outputs[0].Digest)))
			}
			if err := os.Remove(target); err != nil {
				t.Fatal(err)
			}
			if err := c.plant(target); err != nil {
				t.Fatal(err)
			}
			r, log := openRemote(t, url, nil, alice.Public())
			b := newStore(t)
			within(t, 5*time.Second, "a fetch", func() {
				if _, ok := r.Fetch(ctx, b, e.Key, "run", "t"); ok {
					t.Error("an entry was used through a special file")
				}
			})
			if !strings.Contains(log.String(), "refused") {
				t.Errorf("the refusal is not said: %s", log)
			}
			if r.Failure() != nil {
				t.Errorf("a refused file gave up on the remote: %v", r.Failure())
			}
			// A signing push replaces it, renaming over it: the link's
			// target is untouched.
			if c.name != "entry a directory" {
				w2, _ := openRemote(t, url, alice)
				within(t, 5*time.Second, "a push", func() { w2.Publish(ctx, a, e.Key, "t") })
				if err := w2.Err(); err != nil {
					t.Fatal(err)
				}
				if fi, err := os.Lstat(target); err != nil || !fi.Mode().IsRegular() {
					t.Errorf("the push left %s as %v (%v)", target, fi.Mode(), err)
				}
				r, log := openRemote(t, url, nil, alice.Public())
				if _, ok := r.Fetch(ctx, newStore(t), e.Key, "run", "t"); !ok {
					t.Errorf("the replaced entry is not used: %s", log)
				}
			}
			if got, _ := os.ReadFile(secret); string(got) != "outside the remote" {
				t.Fatalf("the file outside the remote was written: %q", got)
			}
		})
	}
	t.Run("linked directory", func(t *testing.T) {
		// objects/<2 hex> a link to a directory outside: nothing is read
		// from it or written into it.
		dir, url := fileRemote(t)
		a := newStore(t)
		e := putTask(t, a, 2, 100)
		h := e.Outputs[0].Digest.Hex()
		if err := os.MkdirAll(filepath.Join(dir, "objects"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(outside, filepath.Join(dir, "objects", h[:2])); err != nil {
			t.Fatal(err)
		}
		w, _ := openRemote(t, url, alice)
		w.Publish(ctx, a, e.Key, "t")
		if err := w.Err(); err == nil || !strings.Contains(err.Error(), "not a directory (a symbolic link)") {
			t.Fatalf("a push through a linked directory: %v", err)
		}
		if ents, _ := os.ReadDir(outside); len(ents) != 1 {
			t.Fatalf("the push wrote into the linked directory: %v", ents)
		}
	})
}

// TestHugeRemoteObject: a signed entry states each object's size; an
// object on the remote larger than that (2 GiB here: a sparse file, or a
// real upload of 64 MiB to S3) is refused without being read — the
// reader allocates a few kilobytes, not the object — and a push with the
// signing key replaces it.
func TestHugeRemoteObject(t *testing.T) {
	eachBackend(t, func(t *testing.T, url string, path func(string) string) {
		ctx := context.Background()
		alice := genKey(t, "alice")
		a := newStore(t)
		e := putTask(t, a, 5, 1000)
		w, _ := openRemote(t, url, alice)
		w.Publish(ctx, a, e.Key, "t")
		obj := path(objectName(e.Outputs[0].Digest))
		huge := int64(2 << 30)
		if strings.HasPrefix(url, "s3://") {
			huge = 64 << 20 // uploaded for real
			if err := w.r.b.Put(ctx, objectName(e.Outputs[0].Digest), make([]byte, huge)); err != nil {
				t.Fatal(err)
			}
		} else if err := os.Truncate(obj, huge); err != nil {
			t.Fatal(err)
		}
		r, log := openRemote(t, url, nil, alice.Public())
		var ok bool
		n := allocated(func() { _, ok = r.Fetch(ctx, newStore(t), e.Key, "run", "t") })
		if ok {
			t.Fatal("an oversized object was used")
		}
		if n > 8<<20 {
			t.Errorf("refusing a %d-byte object allocated %d bytes", huge, n)
		}
		if !strings.Contains(log.String(), "more than the 1000 expected") {
			t.Errorf("the log does not say why: %s", log)
		}
		w2, _ := openRemote(t, url, alice)
		w2.Publish(ctx, a, e.Key, "t")
		if w2.Stats.ObjectsPushed.Load() != 1 {
			t.Errorf("the push uploaded %d objects, want the bad one again", w2.Stats.ObjectsPushed.Load())
		}
		if _, ok := r.Fetch(ctx, newStore(t), e.Key, "run", "t"); !ok {
			t.Error("the repaired entry is not used")
		}
	})
}

// TestPushRepairsAPlantedObject: an object planted under its name with
// the right size before the first push (other bytes) is re-hashed by the
// push, which finds it bad and replaces it; readers then use the entry.
func TestPushRepairsAPlantedObject(t *testing.T) {
	eachBackend(t, func(t *testing.T, url string, path func(string) string) {
		ctx := context.Background()
		alice := genKey(t, "alice")
		a := newStore(t)
		e := putTask(t, a, 6, 500)
		w, _ := openRemote(t, url, alice)
		if err := w.r.b.Put(ctx, objectName(e.Outputs[0].Digest), make([]byte, 500)); err != nil {
			t.Fatal(err)
		}
		w.Publish(ctx, a, e.Key, "t")
		if err := w.Err(); err != nil {
			t.Fatal(err)
		}
		if got := w.Stats.ObjectsReplaced.Load(); got != 1 {
			t.Fatalf("%d objects replaced, want 1", got)
		}
		r, log := openRemote(t, url, nil, alice.Public())
		if _, ok := r.Fetch(ctx, newStore(t), e.Key, "run", "t"); !ok {
			t.Fatalf("the entry is not used after the push: %s", log)
		}
	})
}

// TestRejectionsAreCounted: 40 entries signed by a key that is not
// trusted give one warning, and one line with the count and what to do.
func TestRejectionsAreCounted(t *testing.T) {
	ctx := context.Background()
	_, url := fileRemote(t)
	mallory, alice := genKey(t, "mallory"), genKey(t, "alice")
	a := newStore(t)
	var keys []artifacts.Key
	w, _ := openRemote(t, url, mallory)
	for i := range 40 {
		e := putTask(t, a, 100+i, 50)
		w.Publish(ctx, a, e.Key, "t")
		keys = append(keys, e.Key)
	}
	r, log := openRemote(t, url, nil, alice.Public())
	for _, k := range keys {
		r.Fetch(ctx, newStore(t), k, "run", "t")
	}
	if n := strings.Count(log.String(), "level=WARN"); n != 1 {
		t.Fatalf("%d warnings, want 1:\n%s", n, log)
	}
	got := r.Rejections()
	if len(got) != 1 || !strings.HasPrefix(got[0], `40 entries signed by a key that is not trusted (it names itself "mallory")`) || !strings.Contains(got[0], "--trusted-keys") {
		t.Fatalf("rejections %q", got)
	}
}

// TestMissingBucket: a bucket that does not exist is named at once, with
// the fix, after one try (not five with backoff), and the remote is then
// not asked again.
func TestMissingBucket(t *testing.T) {
	srv, _ := s3Remote(t)
	_ = srv
	url := "s3://no-such-bucket/thv"
	lb := &logBuf{}
	slow := Policy{Attempts: 5, Backoff: 2 * time.Second, MaxBackoff: 8 * time.Second, Timeout: time.Minute}
	rm, err := Open(context.Background(), Options{URL: url, SignKey: genKey(t, "k"), Logger: slogTo(lb), Policy: slow})
	if err != nil {
		t.Fatal(err)
	}
	a := newStore(t)
	e := putTask(t, a, 7, 100)
	start := time.Now()
	rm.Fetch(context.Background(), newStore(t), e.Key, "run", "t")
	rm.Publish(context.Background(), a, e.Key, "t")
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("a missing bucket took %v: retried?", d)
	}
	err = rm.Failure()
	var re *RemoteError
	if !errors.Is(err, ErrNoBucket) || !errors.As(err, &re) || re.Attempts != 1 || !strings.Contains(err.Error(), `there is no bucket "no-such-bucket"`) || !strings.Contains(err.Error(), "aws s3 mb s3://no-such-bucket") {
		t.Fatalf("failure %v", err)
	}
}

// TestKeyFilesAreRegularFiles: a key file that is a named pipe (or a link
// to one), a device or a huge file is refused at once, saying what it is,
// never read.
func TestKeyFilesAreRegularFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "ci.key")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.pub")
	if err := os.Symlink(fifo, link); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.pub")
	if err := os.WriteFile(big, make([]byte, 1<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		load func() error
		want string
	}{
		{"named pipe as the signing key", func() error { _, err := LoadPrivateKey(fifo); return err }, "not a regular file (a named pipe)"},
		{"link to a named pipe as trusted", func() error { _, err := LoadTrustedKeys(link); return err }, "not a regular file (a named pipe)"},
		{"/dev/zero as the signing key", func() error { _, err := LoadPrivateKey("/dev/zero"); return err }, "not a regular file (a character device)"},
		{"/dev/zero as trusted", func() error { _, err := LoadTrustedKeys("/dev/zero"); return err }, "not a regular file (a character device)"},
		{"a huge file", func() error { _, err := LoadTrustedKeys(big); return err }, "larger than the limit"},
	} {
		var err error
		within(t, 5*time.Second, c.name, func() { err = c.load() })
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

// TestPackedRemoteRefusesSpecialFiles: the packs and batches a push
// writes are files of the same untrusted directory. A pack that is a named
// pipe or a link outside, a batch that is a named pipe, a pack planted
// under its name with the right size and other bytes: a pull never
// blocks, uses nothing of them (its other entries are pulled), and says
// why; a push with the signing key re-hashes the packs that hold the
// objects of the entries it would skip, packs those objects again and
// pushes their entries again, after which a pull finds every entry, each
// object at the first of its places that checks.
func TestPackedRemoteRefusesSpecialFiles(t *testing.T) {
	ctx := context.Background()
	alice := genKey(t, "alice")
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret")
	if err := os.WriteFile(secret, []byte("outside the remote"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		batch bool // plant it as a batch, else as a pack
		plant func(p string) error
	}{
		{"pack a named pipe", false, func(p string) error { return syscall.Mkfifo(p, 0o644) }},
		{"pack a link outside", false, func(p string) error { return os.Symlink(secret, p) }},
		{"pack of other bytes", false, func(p string) error {
			fi, err := os.Stat(p + ".orig")
			if err != nil {
				return err
			}
			return os.WriteFile(p, make([]byte, fi.Size()), 0o644)
		}},
		{"batch a named pipe", true, func(p string) error { return syscall.Mkfifo(p, 0o644) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			setForTest(t, &remotePackSize, 20_000)
			dir, url := fileRemote(t)
			a := newStore(t)
			items, es := manyTasks(t, a, 30, 1000)
			w, _ := openRemote(t, url, alice)
			if rep := w.Push(ctx, a, items, 4, nil); rep.Failed != 0 {
				t.Fatalf("push: %+v", rep)
			}
			pattern := filepath.Join(dir, "packs", "*.pack")
			if c.batch {
				pattern = filepath.Join(dir, "batches", "*.batch")
			}
			files, _ := filepath.Glob(pattern)
			if len(files) < 3 {
				t.Fatalf("%d files match %s: want several", len(files), pattern)
			}
			victim := files[1]
			if err := os.Rename(victim, victim+".orig"); err != nil {
				t.Fatal(err)
			}
			if err := c.plant(victim); err != nil {
				t.Fatal(err)
			}
			os.Remove(victim + ".orig")

			r, log := openRemote(t, url, nil, alice.Public())
			b := newStore(t)
			var rep SyncReport
			within(t, 10*time.Second, "a pull", func() { rep = r.Pull(ctx, b, items, 4, nil) })
			if rep.Failed == 0 || rep.Done == 0 {
				t.Fatalf("pull: %+v: want the entries of the planted file not used, the others pulled\n%s", rep, log)
			}
			if !c.batch && !strings.Contains(log.String(), "not used") {
				// (A batch that is no regular file is not even listed.)
				t.Errorf("the log does not say what was not used: %s", log)
			}
			if r.Failure() != nil {
				t.Errorf("a refused file gave up on the remote: %v", r.Failure())
			}
			for _, e := range es {
				if _, ok, _ := b.GetEntry(e.Key); !ok {
					continue
				}
				for _, o := range e.Outputs {
					if err := b.Verify(o.Digest); err != nil {
						t.Fatalf("pulled entry %v: %v", e.Key, err)
					}
				}
			}

			w2, _ := openRemote(t, url, alice)
			var prep SyncReport
			within(t, 10*time.Second, "a push", func() { prep = w2.Push(ctx, a, items, 4, nil) })
			if prep.Failed != 0 || prep.Skipped == len(items) {
				t.Fatalf("second push: %+v: want the entries of the planted file pushed again", prep)
			}
			r2, log2 := openRemote(t, url, nil, alice.Public())
			c := newStore(t)
			within(t, 10*time.Second, "a pull", func() { rep = r2.Pull(ctx, c, items, 4, nil) })
			if rep.Failed != 0 || rep.Done != len(items) {
				t.Fatalf("pull after the repairing push: %+v\n%s", rep, log2)
			}
			if got, _ := os.ReadFile(secret); string(got) != "outside the remote" {
				t.Fatalf("the file outside the remote was written: %q", got)
			}
		})
	}
}
