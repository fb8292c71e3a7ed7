//go:build linux

package artifacts

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"thv/internal/testenv"
)

// mountOrSkip runs mount and registers its unmount. Where mounting is
// impossible (not root, no CAP_SYS_ADMIN, a restricted container) the test
// is skipped, except in CI (CI=true), where a skipped fault test would hide
// a gap: there it fails.
func mountOrSkip(t *testing.T, what string, target string, mount func() error) {
	t.Helper()
	if err := mount(); err != nil {
		testenv.Missing(t, "cannot mount %s at %s: %v (the fault tests need root or CAP_SYS_ADMIN)", what, target, err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(target, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", target, err)
		}
	})
}

// fillStore writes a store with two objects and an entry and returns them.
func fillStore(t *testing.T, dir string) (*Store, []Digest, Key) {
	t.Helper()
	s, err := Open(dir, Create)
	if err != nil {
		t.Fatal(err)
	}
	var ds []Digest
	var outs []Output
	for _, b := range []string{"first output", "second output"} {
		d, err := s.Put([]byte(b))
		if err != nil {
			t.Fatal(err)
		}
		ds = append(ds, d)
		outs = append(outs, Output{Name: b[:5], Digest: d, Size: int64(len(b))})
	}
	k := Key(sha256.Sum256([]byte("read-only")))
	if err := s.PutEntry(Entry{Key: k, Kind: "run", Outputs: outs}); err != nil {
		t.Fatal(err)
	}
	return s, ds, k
}

// checkReadOnlyStore opens the store at dir, which cannot be written, and
// checks that every read works and every write fails clearly, changing
// nothing.
func checkReadOnlyStore(t *testing.T, dir string, ds []Digest, k Key) {
	t.Helper()
	before := tree(t, dir)
	for name, mode := range map[string]Mode{"Existing": Existing, "Create": Create} {
		s, err := Open(dir, mode)
		if err != nil {
			t.Fatalf("%s of a read-only store: %v", name, err)
		}
		for _, d := range ds {
			if _, err := s.Get(d); err != nil {
				t.Errorf("%s: Get: %v", name, err)
			}
			if !s.Has(d) {
				t.Errorf("%s: Has = false", name)
			}
			if err := s.Verify(d); err != nil {
				t.Errorf("%s: Verify: %v", name, err)
			}
		}
		if e, ok, err := s.GetEntry(k); !ok || err != nil || len(e.Outputs) != 2 {
			t.Errorf("%s: GetEntry = %v, %v", name, ok, err)
		}
		if objs, err := s.Objects(); err != nil || len(objs) != 2 {
			t.Errorf("%s: Objects = %v, %v", name, objs, err)
		}
		if st, err := s.GCDryRun(nil, nil); err != nil || st.ObjectsRemoved != 2 || st.EntriesRemoved != 1 {
			t.Errorf("%s: GCDryRun = %+v, %v", name, st, err)
		}
		unlock, err := s.LockShared()
		if err != nil {
			t.Errorf("%s: LockShared on a read-only store: %v", name, err)
		} else {
			unlock()
		}

		_, err = s.Put([]byte("a new object"))
		if !errors.Is(err, ErrReadOnly) || !strings.Contains(err.Error(), s.Root()) || !strings.Contains(err.Error(), "read-only") {
			t.Errorf("%s: Put = %v, want ErrReadOnly naming the store", name, err)
		}
		e := Entry{Key: Key(sha256.Sum256([]byte("new"))), Kind: "run", Outputs: []Output{{"first", ds[0], 12}}}
		if err := s.PutEntry(e); !errors.Is(err, ErrReadOnly) {
			t.Errorf("%s: PutEntry = %v, want ErrReadOnly", name, err)
		}
		if st, err := s.GC(nil, nil); !errors.Is(err, ErrReadOnly) || st.ObjectsRemoved+st.EntriesRemoved != 0 {
			t.Errorf("%s: GC = %+v, %v; want ErrReadOnly and nothing removed", name, st, err)
		}
	}
	if after := tree(t, dir); !slices.Equal(before, after) {
		t.Errorf("the read-only store changed:\nbefore %v\nafter  %v", before, after)
	}
}

// TestReadOnlyMount: a store seen through a read-only bind mount (what a
// container or a shared read-only volume gives) can be read and fails every
// write with ErrReadOnly. A corrupt object there is reported as corrupt
// even though it cannot be moved aside.
func TestReadOnlyMount(t *testing.T) {
	eachLayout(t, readOnlyMount)
}

// eachLayout runs test on the packed layout and on the loose one.
func eachLayout(t *testing.T, test func(t *testing.T)) {
	t.Run("packed", test)
	t.Run("loose", func(t *testing.T) {
		setLooseForTest(t)
		test(t)
	})
}

func readOnlyMount(t *testing.T) {
	src := filepath.Join(t.TempDir(), "store")
	s, ds, k := fillStore(t, src)
	if err := s.Sync(); err != nil { // its packs' indexes written
		t.Fatal(err)
	}
	ro := t.TempDir()
	mountOrSkip(t, "a read-only bind mount", ro, func() error {
		if err := syscall.Mount(src, ro, "", syscall.MS_BIND, ""); err != nil {
			return err
		}
		err := syscall.Mount("", ro, "", syscall.MS_BIND|syscall.MS_REMOUNT|syscall.MS_RDONLY, "")
		if err != nil {
			syscall.Unmount(ro, syscall.MNT_DETACH)
		}
		return err
	})
	if err := os.WriteFile(filepath.Join(ro, "probe"), nil, 0o644); !errors.Is(err, syscall.EROFS) {
		t.Fatalf("the bind mount is writable: %v", err)
	}
	checkReadOnlyStore(t, ro, ds, k)

	// Corrupt an object through the writable path; the read-only view
	// reports it, cannot move it, and says so.
	loc, _ := s.Locate(ds[0])
	flipAt(t, loc.Path, loc.Offset)
	r, err := Open(ro, Existing)
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Get(ds[0])
	var ce *CorruptError
	if !errors.As(err, &ce) || ce.MoveErr == nil || !strings.Contains(err.Error(), "could not move it aside") {
		t.Errorf("Get of a corrupt object on a read-only mount: %v", err)
	}
	if _, err := os.Stat(loc.Path); err != nil {
		t.Errorf("the corrupt object is gone from the read-only store: %v", err)
	}
	if _, err := r.Get(ds[0]); !errors.As(err, &ce) {
		t.Errorf("a second Get of the corrupt object on a read-only mount: %v", err)
	}
}

// TestReadOnlyPermissions: the same with the store's directories made
// read-only by chmod. Root ignores permission bits, so as root (CI) this
// test cannot make the store unwritable by chmod and checks only that the
// store still works after the chmod; TestReadOnlyMount covers the
// read-only case for root.
func TestReadOnlyPermissions(t *testing.T) {
	setLooseForTest(t) // the loose layout: pack_test.go tests packs
	src := filepath.Join(t.TempDir(), "store")
	s, ds, k := fillStore(t, src)
	// The LOCK file exists, as in any store that a pass has used.
	unlock, err := s.LockShared()
	if err != nil {
		t.Fatal(err)
	}
	unlock()
	var dirs []string
	filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dirs = append(dirs, p)
		}
		return err
	})
	for _, d := range dirs {
		if err := os.Chmod(d, 0o555); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		for _, d := range dirs {
			os.Chmod(d, 0o777)
		}
	})
	if os.Geteuid() == 0 {
		t.Log("running as root: chmod does not stop root's writes; TestReadOnlyMount covers the read-only store")
		r, err := Open(src, Existing)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok, err := r.GetEntry(k); !ok || err != nil {
			t.Errorf("GetEntry = %v, %v", ok, err)
		}
		return
	}
	checkReadOnlyStore(t, src, ds, k)
}

// TestFullDisk: a store on a 1 MiB tmpfs. A Put too large for the space
// left fails with an error that says the file system is full and names the
// store, leaves no temp file and no object; so does a PutEntry when the
// disk is full; everything stored before still verifies, and writes work
// again once there is space.
func TestFullDisk(t *testing.T) {
	eachLayout(t, fullDisk)
}

func fullDisk(t *testing.T) {
	mnt := t.TempDir()
	mountOrSkip(t, "a 1 MiB tmpfs", mnt, func() error {
		return syscall.Mount("tmpfs", mnt, "tmpfs", 0, "size=1m")
	})
	s, ds, _ := fillStore(t, filepath.Join(mnt, "store"))

	big := bytes.Repeat([]byte("0123456789abcdef"), 128<<10) // 2 MiB
	d, err := s.Put(big)
	if err == nil {
		t.Fatal("Put of 2 MiB on a 1 MiB file system succeeded")
	}
	if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "is full") || !strings.Contains(err.Error(), s.Root()) || !strings.Contains(err.Error(), Sum(big).String()) {
		t.Errorf("Put error %q: want ENOSPC, saying the file system is full, naming the store and the digest", err)
	}
	if !d.IsZero() || s.Has(Sum(big)) {
		t.Error("the failed Put left an object")
	}
	if files := listFiles(t, filepath.Join(s.Root(), "tmp")); len(files) != 0 {
		t.Errorf("tmp/ after the failed Put: %v", files)
	}

	// Fill what is left, then an entry cannot be written either.
	filler, err := os.Create(filepath.Join(mnt, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 4096)
	for {
		if _, err := filler.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			break
		}
	}
	filler.Close()
	if looseLimit > 0 {
		// A pack's last page may still have room: fill it with objects
		// that do not compress until one does not fit; its error says
		// the disk is full, and the pack keeps whole records only.
		r := rand.New(rand.NewPCG(3, 4))
		for _, size := range []int{2048, 256, 64} {
			for i := 0; ; i++ {
				b := make([]byte, size)
				for j := range b {
					b[j] = byte(r.Uint32())
				}
				if _, err := s.Put(b); err != nil {
					if !strings.Contains(err.Error(), "is full") {
						t.Fatalf("Put on a full disk: %v", err)
					}
					break
				}
				if i > 100 {
					t.Fatal("Puts go on succeeding on a full disk")
				}
			}
		}
		for _, f := range listFiles(t, filepath.Join(s.Root(), "packs")) {
			if strings.HasSuffix(f, packExt) && !packEndsWithRecord(t, filepath.Join(s.Root(), "packs", f)) {
				t.Errorf("pack %s does not end with a whole record after a failed append", f)
			}
		}
	}
	k := Key(sha256.Sum256([]byte("on a full disk")))
	err = s.PutEntry(Entry{Key: k, Kind: "run", Outputs: []Output{{"first", ds[0], 12}}})
	if err == nil || !strings.Contains(err.Error(), "is full") {
		t.Errorf("PutEntry on a full disk = %v", err)
	}
	if _, ok, err := s.GetEntry(k); ok || err != nil {
		t.Errorf("GetEntry after the failed PutEntry = %v, %v; want a plain miss", ok, err)
	}
	if _, err := s.Put(bytes.Repeat([]byte("x"), 8192)); err == nil && looseLimit == 0 {
		t.Error("Put of 8 KiB on a full disk succeeded")
	}
	if files := listFiles(t, filepath.Join(s.Root(), "tmp")); len(files) != 0 {
		t.Errorf("tmp/ on a full disk: %v", files)
	}
	for _, d := range ds {
		if err := s.Verify(d); err != nil {
			t.Errorf("an earlier object after the disk filled: %v", err)
		}
	}

	os.Remove(filepath.Join(mnt, "filler"))
	if err := s.PutEntry(Entry{Key: k, Kind: "run", Outputs: []Output{{"first", ds[0], 12}}}); err != nil {
		t.Errorf("PutEntry once there is space: %v", err)
	}
	if files := listFiles(t, filepath.Join(s.Root(), "corrupt")); len(files) != 0 {
		t.Errorf("corrupt/ = %v", files)
	}
}

// TestFIFOInPlaceOfStoreFiles: a named pipe where an object or an entry
// belongs would block a plain open(2) forever; the store reports it as
// corrupt at once, moves it aside, and a rerun replaces it.
func TestFIFOInPlaceOfStoreFiles(t *testing.T) {
	setLooseForTest(t) // the loose layout: pack_test.go tests packs
	s := openTemp(t)
	data := []byte("object")
	d, _ := s.Put(data)
	k := Key(sha256.Sum256([]byte("fifo")))
	e := Entry{Key: k, Kind: "x", Outputs: []Output{{"o", d, int64(len(data))}}}
	if err := s.PutEntry(e); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{s.ObjectPath(d), s.entryPath(k)} {
		os.Remove(p)
		if err := syscall.Mkfifo(p, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if _, err := s.Get(d); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("Get of a FIFO = %v", err)
		}
		if _, ok, err := s.GetEntry(k); ok || !errors.Is(err, ErrCorrupt) {
			t.Errorf("GetEntry of a FIFO = %v, %v", ok, err)
		}
		if _, err := s.Put(data); err != nil {
			t.Errorf("rerun Put: %v", err)
		}
		if err := s.PutEntry(e); err != nil {
			t.Errorf("rerun PutEntry: %v", err)
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("reading a FIFO in the store blocked")
	}
	if b, err := s.Get(d); err != nil || !bytes.Equal(b, data) {
		t.Errorf("Get after rerun = %q, %v", b, err)
	}
}
