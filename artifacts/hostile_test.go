package artifacts

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"thv/artifacts/storetest"
)

// The tests in this file build a hostile layout in a store (symbolic links
// in corrupt/, tmp/, objects/, index/ or a fan-out directory, pointing out
// of the store) and check that the store neither reads through it nor
// creates, moves, changes or removes anything outside its directory.

// forEachDirFS runs f once per dirFS implementation this system has: on
// Linux openat2 (beneathDir) and the os.Root fallback (rootDir) that a
// kernel without openat2 gets.
func forEachDirFS(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	impls := []bool{false}
	if runtime.GOOS == "linux" {
		impls = append(impls, true)
	}
	for _, root := range impls {
		t.Run(map[bool]string{false: "default", true: "os.Root"}[root], func(t *testing.T) {
			old := forceRootDir
			forceRootDir = root
			defer func() { forceRootDir = old }()
			f(t)
		})
	}
}

// outsideDir is a directory outside the store with files in it that a
// store operation following a link could touch: temp-like names, object
// and entry names, a victim file.
func outsideDir(t *testing.T, names ...string) string {
	t.Helper()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "victim"), "do not touch")
	for _, n := range names {
		writeFile(t, filepath.Join(dir, n), "outside: "+n)
	}
	return dir
}

// TestQuarantineNeverFollowsLink: with corrupt/ a symbolic link (out of the
// store, to a directory inside it, or relative), a corrupted object or
// entry is reported by every read, Check and Put, with a MoveErr naming the
// link; nothing is moved (the bad file stays in place, and is never
// returned), nothing outside changes.
func TestQuarantineNeverFollowsLink(t *testing.T) {
	setLooseForTest(t) // the loose layout: pack_test.go tests packs
	forEachDirFS(t, func(t *testing.T) {
		for _, tc := range []struct {
			name   string
			target func(s *Store, outside string) string
		}{
			{"to an outside directory", func(s *Store, outside string) string { return outside }},
			{"relative, out of the store", func(s *Store, outside string) string {
				rel, _ := filepath.Rel(s.Root(), outside)
				return rel
			}},
			{"to a directory inside the store", func(s *Store, outside string) string { return "tmp" }},
			{"dangling", func(s *Store, outside string) string { return filepath.Join(outside, "none") }},
		} {
			t.Run(tc.name, func(t *testing.T) {
				s := openTemp(t)
				data := []byte("the object")
				d, _ := s.Put(data)
				k := Key(sha256.Sum256([]byte("entry")))
				if err := s.PutEntry(Entry{Key: k, Kind: "x", Outputs: []Output{{"o", d, int64(len(data))}}}); err != nil {
					t.Fatal(err)
				}
				bad := flipByte(t, s.ObjectPath(d), 0)
				badEntry := []byte(`{"key": "garbage"}`)
				os.Remove(s.entryPath(k))
				writeFile(t, s.entryPath(k), string(badEntry))
				outside := outsideDir(t, "x")
				storetest.Symlink(t, tc.target(s, outside), filepath.Join(s.Root(), "corrupt"))
				before, tmpBefore := storetest.Tree(t, outside), storetest.Tree(t, filepath.Join(s.Root(), "tmp"))

				wantStuck := func(op string, err error) {
					t.Helper()
					var ce *CorruptError
					if !errors.As(err, &ce) || ce.MovedTo != "" || ce.MoveErr == nil || !errors.Is(ce.MoveErr, errSymlink) ||
						!strings.Contains(err.Error(), filepath.Join(s.Root(), "corrupt")) {
						t.Errorf("%s = %v, want a *CorruptError whose MoveErr names the link corrupt", op, err)
					}
				}
				for range 2 { // the second time finds it again: nothing was moved
					b, err := s.Get(d)
					if b != nil {
						t.Errorf("Get returned %q", b)
					}
					wantStuck("Get", err)
					wantStuck("Verify", s.Verify(d))
					_, err = s.Put(data)
					if !strings.Contains(fmt.Sprint(err), "cannot replace it") {
						t.Errorf("Put over the stuck copy = %v, want it refused", err)
					}
					wantStuck("Put", errors.Unwrap(err))
					_, ok, err := s.GetEntry(k)
					if ok {
						t.Error("GetEntry returned the corrupt entry")
					}
					wantStuck("GetEntry", err)
					rep, err := s.Check(context.Background(), 2, nil)
					if err != nil || len(rep.Problems) != 2 {
						t.Fatalf("Check = %+v, %v; want both problems", rep, err)
					}
					for _, p := range rep.Problems {
						wantStuck("Check "+p.What, p.Err)
					}
				}
				if b, err := os.ReadFile(s.ObjectPath(d)); err != nil || !bytes.Equal(b, bad) {
					t.Errorf("the corrupt object left its place: %q, %v", b, err)
				}
				if b, err := os.ReadFile(s.entryPath(k)); err != nil || !bytes.Equal(b, badEntry) {
					t.Errorf("the corrupt entry left its place: %q, %v", b, err)
				}
				storetest.Unchanged(t, "quarantine", outside, before)
				storetest.Unchanged(t, "quarantine", filepath.Join(s.Root(), "tmp"), tmpBefore)
			})
		}
	})
}

// TestLinkInAnObjectsPlaceWithCorruptLinked: a symbolic link in an
// object's place is corrupt, and with corrupt/ a link too it stays where it
// is: neither the link nor what it points to moves.
func TestLinkInAnObjectsPlaceWithCorruptLinked(t *testing.T) {
	setLooseForTest(t) // the loose layout: pack_test.go tests packs
	forEachDirFS(t, func(t *testing.T) {
		s := openTemp(t)
		data := []byte("the object")
		d := Sum(data)
		outside := outsideDir(t, d.Hex())
		os.WriteFile(filepath.Join(outside, d.Hex()), data, 0o644) // bytes that verify
		os.MkdirAll(filepath.Dir(s.ObjectPath(d)), 0o777)
		storetest.Symlink(t, filepath.Join(outside, d.Hex()), s.ObjectPath(d))
		storetest.Symlink(t, outside, filepath.Join(s.Root(), "corrupt"))
		before := storetest.Tree(t, outside)
		_, err := s.Get(d)
		var ce *CorruptError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), "a symbolic link") || ce.MoveErr == nil {
			t.Errorf("Get = %v, want a link reported corrupt and not moved", err)
		}
		if fi, err := os.Lstat(s.ObjectPath(d)); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			t.Errorf("the link left its place: %v", err)
		}
		storetest.Unchanged(t, "Get", outside, before)
	})
}

// TestTmpLinkedOut: with tmp/ a symbolic link to a directory holding files
// with the store's temp-file names, Open refuses the store (naming the
// link), GC of an open store leaves the link alone, and Put fails without
// creating its temp file there; nothing outside changes.
func TestTmpLinkedOut(t *testing.T) {
	setLooseForTest(t) // the loose layout: pack_test.go tests packs
	forEachDirFS(t, func(t *testing.T) {
		h := strings.Repeat("5e", 32)
		outside := outsideDir(t, tempName(h), tempName(h+".json"), tempName("VERSION"))
		s := openTemp(t)
		garbage, _ := s.Put([]byte("unreferenced"))
		storetest.Symlink(t, outside, filepath.Join(s.Root(), "tmp"))
		before := storetest.Tree(t, outside)

		_, err := Open(s.Root(), Create)
		if err == nil || !strings.Contains(err.Error(), filepath.Join(s.Root(), "tmp")+" is a symbolic link") {
			t.Errorf("Open = %v, want the link tmp named", err)
		}
		storetest.Unchanged(t, "Open", outside, before)
		if _, err := Open(s.Root(), Scratch); err == nil {
			t.Error("Open(Scratch) accepted a store whose tmp/ is a link")
		}

		st, err := s.GC(nil, nil)
		if err != nil || st.Symlinks != 1 || st.TmpRemoved != 0 || st.ObjectsRemoved != 1 || s.Has(garbage) {
			t.Errorf("GC = %+v, %v; want the link left alone, the garbage object removed", st, err)
		}
		storetest.Unchanged(t, "GC", outside, before)

		_, err = s.Put([]byte("new object"))
		if !errors.Is(err, errSymlink) || !strings.Contains(err.Error(), filepath.Join(s.Root(), "tmp")) {
			t.Errorf("Put = %v, want it refused, naming the link tmp", err)
		}
		storetest.Unchanged(t, "Put", outside, before)
	})
}

// TestFanOutLinkedOut: a fan-out directory (objects/ab, index/ab) or
// objects/, index/ themselves linked out of the store: Put and PutEntry
// fail naming the link and write nothing outside, Has is false, and Get
// refuses even a file there whose bytes verify.
func TestFanOutLinkedOut(t *testing.T) {
	setLooseForTest(t) // the loose layout: pack_test.go tests packs
	data := []byte("the object")
	d := Sum(data)
	k := Key(sha256.Sum256([]byte("the entry")))
	for _, tc := range []struct {
		name, link string // link relative to the store
	}{
		{"objects fan-out", filepath.Join("objects", d.Hex()[:2])},
		{"index fan-out", filepath.Join("index", k.Hex()[:2])},
		{"objects", "objects"},
		{"index", "index"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			forEachDirFS(t, func(t *testing.T) {
				s := openTemp(t)
				outside := outsideDir(t)
				// What the store would find, or write, through the link.
				writeFile(t, filepath.Join(outside, d.Hex()), string(data))
				writeFile(t, filepath.Join(outside, d.Hex()[:2], d.Hex()), string(data))
				writeFile(t, filepath.Join(outside, k.Hex()+".json"), "{}")
				storetest.Symlink(t, outside, filepath.Join(s.Root(), tc.link))
				before := storetest.Tree(t, outside)
				linkPath := filepath.Join(s.Root(), tc.link)

				isObjects := strings.HasPrefix(tc.link, "objects")
				if isObjects {
					if s.Has(d) {
						t.Error("Has = true through a link")
					}
					if b, err := s.Get(d); b != nil || !errors.Is(err, errSymlink) || !strings.Contains(err.Error(), linkPath) {
						t.Errorf("Get = %q, %v; want it refused, naming %s", b, err, linkPath)
					}
					if _, err := s.Put(data); !errors.Is(err, errSymlink) || !strings.Contains(err.Error(), linkPath) {
						t.Errorf("Put = %v, want it refused, naming %s", err, linkPath)
					}
					if objs, err := s.Objects(); len(objs) != 0 {
						t.Errorf("Objects = %v, %v; want nothing listed through a link", objs, err)
					}
				} else {
					if _, err := s.Put(data); err != nil {
						t.Fatal(err)
					}
					if _, ok, err := s.GetEntry(k); ok || !errors.Is(err, errSymlink) {
						t.Errorf("GetEntry = %v, %v; want it refused", ok, err)
					}
					err := s.PutEntry(Entry{Key: k, Kind: "x", Outputs: []Output{{"o", d, int64(len(data))}}})
					if !errors.Is(err, errSymlink) || !strings.Contains(err.Error(), linkPath) {
						t.Errorf("PutEntry = %v, want it refused, naming %s", err, linkPath)
					}
				}
				if _, err := s.GC(nil, nil); err != nil {
					t.Errorf("GC: %v", err)
				}
				storetest.Unchanged(t, "the store", outside, before)
				if files := listFiles(t, filepath.Join(s.Root(), "tmp")); len(files) != 0 {
					t.Errorf("temp files left behind: %v", files)
				}
			})
		})
	}
}

// scratchWith makes a scratch store holding one object and an entry naming
// it, as a worker would leave it.
func scratchWith(t *testing.T, data []byte) (*Store, Digest, Key) {
	t.Helper()
	s, err := Open(filepath.Join(t.TempDir(), "out"), Scratch)
	if err != nil {
		t.Fatal(err)
	}
	d, err := s.Put(data)
	if err != nil {
		t.Fatal(err)
	}
	k := Key(sha256.Sum256([]byte("scratch entry")))
	if err := s.PutEntry(Entry{Key: k, Kind: "x", Outputs: []Output{{"o", d, int64(len(data))}}}); err != nil {
		t.Fatal(err)
	}
	return s, d, k
}

// TestUntrustedView: through Untrusted, a corrupt object or entry, a link
// or hard link in a file's place are errors naming the file, left in place
// (no corrupt/ is created); a fan-out link is refused even when the bytes
// behind it verify; writes, GC and the exclusive lock fail with
// ErrReadOnly; an intact store reads normally.
func TestUntrustedView(t *testing.T) {
	setLooseForTest(t) // the loose layout: pack_test.go tests packs
	data := []byte("worker output")
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, s *Store, d Digest, k Key, outside string)
		want   string // in the error of Get (or GetEntry)
		entry  bool   // the entry is what is damaged
	}{
		{"intact", func(*testing.T, *Store, Digest, Key, string) {}, "", false},
		{"corrupt object", func(t *testing.T, s *Store, d Digest, _ Key, outside string) {
			flipByte(t, s.ObjectPath(d), 0)
			storetest.Symlink(t, outside, filepath.Join(s.Root(), "corrupt"))
		}, "left in place: a scratch store is never quarantined into", false},
		{"object is a link to bytes that verify", func(t *testing.T, s *Store, d Digest, _ Key, outside string) {
			writeFile(t, filepath.Join(outside, "copy"), string(data))
			storetest.Symlink(t, filepath.Join(outside, "copy"), s.ObjectPath(d))
		}, "a symbolic link, not a regular file (left in place", false},
		{"object is a hard link", func(t *testing.T, s *Store, d Digest, _ Key, outside string) {
			if err := os.Link(s.ObjectPath(d), filepath.Join(outside, "hardlink")); err != nil {
				t.Skip("no hard links here:", err)
			}
		}, "2 hard links", false},
		{"fan-out is a link to bytes that verify", func(t *testing.T, s *Store, d Digest, _ Key, outside string) {
			writeFile(t, filepath.Join(outside, d.Hex()), string(data))
			storetest.Symlink(t, outside, filepath.Dir(s.ObjectPath(d)))
		}, "is a symbolic link, which the store never follows", false},
		{"corrupt entry", func(t *testing.T, s *Store, _ Digest, k Key, outside string) {
			os.Remove(s.entryPath(k))
			writeFile(t, s.entryPath(k), "{")
		}, "left in place: a scratch store is never quarantined into", true},
		{"index fan-out is a link", func(t *testing.T, s *Store, _ Digest, k Key, outside string) {
			b, _ := os.ReadFile(s.entryPath(k))
			writeFile(t, filepath.Join(outside, filepath.Base(s.entryPath(k))), string(b))
			storetest.Symlink(t, outside, filepath.Dir(s.entryPath(k)))
		}, "is a symbolic link, which the store never follows", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			forEachDirFS(t, func(t *testing.T) {
				s, d, k := scratchWith(t, data)
				outside := outsideDir(t)
				tc.damage(t, s, d, k, outside)
				u := s.Untrusted()
				before, storeBefore := storetest.Tree(t, outside), storetest.Tree(t, s.Root())

				b, err := u.Get(d)
				_, ok, eerr := u.GetEntry(k)
				verr := u.Verify(d)
				switch {
				case tc.want == "":
					if err != nil || !bytes.Equal(b, data) || !ok || eerr != nil || verr != nil {
						t.Errorf("intact store: Get %q, %v; GetEntry %v, %v; Verify %v", b, err, ok, eerr, verr)
					}
				case tc.entry:
					if ok || eerr == nil || !strings.Contains(eerr.Error(), tc.want) {
						t.Errorf("GetEntry = %v, %v; want %q", ok, eerr, tc.want)
					}
				default:
					if b != nil || err == nil || !strings.Contains(err.Error(), tc.want) {
						t.Errorf("Get = %q, %v; want %q", b, err, tc.want)
					}
					if verr == nil || !strings.Contains(verr.Error(), tc.want) {
						t.Errorf("Verify = %v; want %q", verr, tc.want)
					}
				}
				if _, err := u.Check(context.Background(), 1, nil); err != nil {
					t.Errorf("Check: %v", err)
				}
				if _, err := u.Put([]byte("x")); !errors.Is(err, ErrReadOnly) {
					t.Errorf("Put through the view = %v, want ErrReadOnly", err)
				}
				if err := u.PutEntry(Entry{Key: k, Kind: "x", Outputs: []Output{{"o", d, int64(len(data))}}}); !errors.Is(err, ErrReadOnly) {
					t.Errorf("PutEntry through the view = %v, want ErrReadOnly", err)
				}
				if _, err := u.GC(nil, nil); !errors.Is(err, ErrReadOnly) {
					t.Errorf("GC through the view = %v, want ErrReadOnly", err)
				}
				if _, err := u.LockExclusive(); !errors.Is(err, ErrReadOnly) {
					t.Errorf("LockExclusive through the view = %v, want ErrReadOnly", err)
				}
				unlock, err := u.LockShared()
				if err != nil {
					t.Errorf("LockShared through the view: %v", err)
				} else {
					unlock()
				}
				storetest.Unchanged(t, "reading through the view", outside, before)
				storetest.Unchanged(t, "reading through the view", s.Root(), storeBefore)
			})
		})
	}
}

// TestHardLinkInTrustedStore: the project store accepts an object with a
// second hard link (a backup made with cp -l, say): only the untrusted
// view refuses them.
func TestHardLinkInTrustedStore(t *testing.T) {
	setLooseForTest(t) // the loose layout: pack_test.go tests packs
	s, d, _ := scratchWith(t, []byte("linked"))
	if err := os.Link(s.ObjectPath(d), filepath.Join(t.TempDir(), "backup")); err != nil {
		t.Skip("no hard links here:", err)
	}
	if _, err := s.Get(d); err != nil {
		t.Errorf("Get of a hard-linked object in the store itself: %v", err)
	}
}
