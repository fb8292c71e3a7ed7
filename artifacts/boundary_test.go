package artifacts

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// tree lists every path below dir (directories with a trailing slash,
// symbolic links with their target), to show that something changed
// nothing.
func tree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p == dir {
				return nil
			}
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			rel += " -> " + target
		case d.IsDir():
			rel += "/"
		}
		out = append(out, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func writeFile(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// tempName is a name the store itself gives its temp files.
func tempName(base string) string { return base + ".1f2e3d4c.tmp" }

// TestOpenRefusesForeignDirectory: Open creates a store in a missing or
// empty directory, or in the remains of an Open killed halfway, and refuses
// any other directory without VERSION, writing nothing there.
func TestOpenRefusesForeignDirectory(t *testing.T) {
	setLooseForTest(t) // the loose layout: pack_test.go tests packs
	hexName := strings.Repeat("ab", 32)
	for _, tc := range []struct {
		name   string
		setup  func(t *testing.T, dir string)
		refuse string // "" if Open must create the store; else what the error names
	}{
		{"missing", func(*testing.T, string) {}, ""},
		{"empty", func(t *testing.T, dir string) { os.Mkdir(dir, 0o777) }, ""},
		{"interrupted creation", func(t *testing.T, dir string) {
			for _, d := range []string{"objects", "index", "tmp"} {
				os.MkdirAll(filepath.Join(dir, d), 0o777)
			}
			writeFile(t, filepath.Join(dir, "tmp", tempName("VERSION")), "thv-st")
		}, ""},
		{"a document", func(t *testing.T, dir string) { writeFile(t, filepath.Join(dir, "draft.txt"), "mine") }, "draft.txt"},
		{"tmp/draft.txt", func(t *testing.T, dir string) { writeFile(t, filepath.Join(dir, "tmp", "draft.txt"), "mine") }, "tmp/draft.txt"},
		{"hidden file", func(t *testing.T, dir string) { writeFile(t, filepath.Join(dir, ".keep"), "") }, ".keep"},
		{"objects without VERSION", func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "objects", hexName[:2], hexName), "x")
		}, "objects/"},
		{"index without VERSION", func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "index", hexName[:2], hexName+".json"), "{}")
		}, "index/"},
		{"tmp is a symlink", func(t *testing.T, dir string) {
			os.Mkdir(dir, 0o777)
			os.Symlink(t.TempDir(), filepath.Join(dir, "tmp"))
		}, "tmp"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "dir")
			tc.setup(t, dir)
			before := tree(t, dir)
			s, err := Open(dir, Create)
			if tc.refuse == "" {
				if err != nil {
					t.Fatal(err)
				}
				if v, err := os.ReadFile(filepath.Join(dir, "VERSION")); err != nil || string(v) != layoutVersion+"\n" {
					t.Errorf("VERSION = %q, %v", v, err)
				}
				if left := listFiles(t, filepath.Join(dir, "tmp")); len(left) != 0 {
					t.Errorf("tmp/ holds %v after Open", left)
				}
				if _, err := s.Put([]byte("works")); err != nil {
					t.Error(err)
				}
				return
			}
			if err == nil {
				t.Fatal("Open adopted a directory that is not a store")
			}
			if !errors.Is(err, ErrNotStore) {
				t.Errorf("error %v does not wrap ErrNotStore", err)
			}
			abs, _ := filepath.Abs(dir)
			for _, want := range []string{abs, tc.refuse, "new or empty directory"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not mention %q", err, want)
				}
			}
			if after := tree(t, dir); !slices.Equal(before, after) {
				t.Errorf("refused Open changed the directory:\nbefore %v\nafter  %v", before, after)
			}
		})
	}
}

// TestOpenExistingCreatesNothing: Open in mode Existing fails clearly
// where there is no store, and on a store changes nothing, not even a
// removed subdirectory or an abandoned temp file.
func TestOpenExistingCreatesNothing(t *testing.T) {
	setLooseForTest(t) // the loose layout: pack_test.go tests packs
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, dir string)
		want  []string // in the error
	}{
		{"missing", func(*testing.T, string) {}, []string{"does not exist"}},
		{"empty", func(t *testing.T, dir string) { os.Mkdir(dir, 0o777) }, []string{"empty"}},
		{"foreign", func(t *testing.T, dir string) { writeFile(t, filepath.Join(dir, "notes.txt"), "x") }, []string{"no VERSION"}},
		{"file", func(t *testing.T, dir string) { writeFile(t, dir, "x") }, []string{"not a directory"}},
		{"other layout", func(t *testing.T, dir string) { writeFile(t, filepath.Join(dir, "VERSION"), "thv-store 99\n") }, []string{`"thv-store 99"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "store")
			tc.setup(t, dir)
			before := tree(t, dir)
			_, err := Open(dir, Existing)
			if err == nil {
				t.Fatal("Open(Existing) succeeded")
			}
			abs, _ := filepath.Abs(dir)
			for _, w := range append(tc.want, abs) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
			if tc.name != "other layout" && !errors.Is(err, ErrNotStore) {
				t.Errorf("error %v does not wrap ErrNotStore", err)
			}
			if tc.name == "missing" && !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("error %v does not wrap fs.ErrNotExist", err)
			}
			if after := tree(t, dir); !slices.Equal(before, after) {
				t.Errorf("Open(Existing) changed %s:\nbefore %v\nafter  %v", dir, before, after)
			}
		})
	}

	t.Run("store", func(t *testing.T) {
		s := openTemp(t)
		d, _ := s.Put([]byte("object"))
		k := Key(sha256.Sum256([]byte("k")))
		if err := s.PutEntry(Entry{Key: k, Kind: "x", Outputs: []Output{{"o", d, 6}}}); err != nil {
			t.Fatal(err)
		}
		os.Remove(filepath.Join(s.Root(), "tmp"))
		os.Mkdir(filepath.Join(s.Root(), "tmp"), 0o777)
		writeFile(t, filepath.Join(s.Root(), "tmp", tempName(d.Hex())), "abandoned")
		os.RemoveAll(filepath.Join(s.Root(), "index"))
		before := tree(t, s.Root())

		r, err := Open(s.Root(), Existing)
		if err != nil {
			t.Fatal(err)
		}
		if b, err := r.Get(d); err != nil || string(b) != "object" {
			t.Errorf("Get = %q, %v", b, err)
		}
		if _, ok, err := r.GetEntry(k); ok || err != nil {
			t.Errorf("GetEntry with index/ removed = %v, %v, want a miss", ok, err)
		}
		if objs, err := r.Objects(); err != nil || len(objs) != 1 {
			t.Errorf("Objects = %v, %v", objs, err)
		}
		st, err := r.GCDryRun(nil, nil)
		if err != nil || st.ObjectsRemoved != 1 || st.TmpRemoved != 1 {
			t.Errorf("GCDryRun = %+v, %v", st, err)
		}
		if after := tree(t, s.Root()); !slices.Equal(before, after) {
			t.Errorf("Open(Existing) and reads changed the store:\nbefore %v\nafter  %v", before, after)
		}
	})
}

// TestOpenCleansAbandonedTemp: Open removes the store's own temp files
// whose writer is gone, and nothing else in tmp/: not a live writer's, not
// a foreign file, not a symbolic link (nor its target).
func TestOpenCleansAbandonedTemp(t *testing.T) {
	setLooseForTest(t) // the loose layout: pack_test.go tests packs
	if !flockSupported {
		t.Skip("no flock: abandoned temp files are recognised by age (an hour) instead")
	}
	s := openTemp(t)
	tdir := filepath.Join(s.Root(), "tmp")
	hexName := strings.Repeat("0f", 32)
	abandoned := []string{tempName(hexName), tempName(hexName + ".json"), tempName("VERSION"), hexName + ".4242424242.tmp"}
	for _, n := range abandoned {
		writeFile(t, filepath.Join(tdir, n), "partial")
	}
	foreign := []string{"draft.txt", "dead.123.tmp", hexName + ".tmp", hexName + ".xyz.tmp", "VERSION.tmp", tempName(hexName[:63])}
	for _, n := range foreign {
		writeFile(t, filepath.Join(tdir, n), "someone's")
	}
	outside := filepath.Join(t.TempDir(), "precious")
	writeFile(t, outside, "do not touch")
	link := filepath.Join(tdir, tempName(strings.Repeat("1e", 32)))
	if err := os.Symlink(outside, link); err != nil {
		t.Fatal(err)
	}
	live, _, err := s.atomic().createTemp(strings.Repeat("2d", 32))
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	if err := lockTemp(live); err != nil {
		t.Fatal(err)
	}

	if _, err := Open(s.Root(), Create); err != nil {
		t.Fatal(err)
	}
	got := listFiles(t, tdir)
	want := append(slices.Clone(foreign), filepath.Base(live.Name()))
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("tmp/ after Open = %v, want %v", got, want)
	}
	if _, err := os.Lstat(link); err != nil {
		t.Errorf("Open removed a symlink in tmp/: %v", err)
	}
	if b, err := os.ReadFile(outside); err != nil || string(b) != "do not touch" {
		t.Errorf("symlink target: %q, %v", b, err)
	}
}

// TestTempNames: every temp file the store writes has a name isTempName
// recognises, and the pattern is exact.
func TestTempNames(t *testing.T) {
	setLooseForTest(t) // the loose layout: pack_test.go tests packs
	s := openTemp(t)
	h := strings.Repeat("9a", 32)
	for _, base := range []string{h, h + ".json", "VERSION"} {
		for range 20 {
			f, _, err := s.atomic().createTemp(base)
			if err != nil {
				t.Fatal(err)
			}
			f.Close()
			if !isTempName(filepath.Base(f.Name())) {
				t.Errorf("createTemp made %q, which isTempName rejects", f.Name())
			}
		}
	}
	for name, want := range map[string]bool{
		h + ".0.tmp": true, h + ".json.ffffffffffffffff.tmp": true, "VERSION.123.tmp": true,
		h + ".tmp": false, h + "..tmp": false, h + ".12.tmp.x": false, h + ".12.TMP": false,
		strings.ToUpper(h) + ".12.tmp": false, h + ".12345678901234567890a.tmp": false,
		"VERSION.json.1.tmp": false, "LOCK.1.tmp": false, h + ".g.tmp": false, "../" + h + ".1.tmp": false,
	} {
		if got := isTempName(name); got != want {
			t.Errorf("isTempName(%q) = %v, want %v", name, got, want)
		}
	}
}

// TestGCLeavesWhatItDidNotCreate: GC removes only regular files with store
// names; it never enters or follows a symbolic link (tmp/, index/, a
// fan-out directory, a file), never removes a foreign file or a directory,
// and reports each in its stats. GCDryRun reports the same and removes
// nothing.
func TestGCLeavesWhatItDidNotCreate(t *testing.T) {
	setLooseForTest(t) // the loose layout: pack_test.go tests packs
	hexA, hexB := strings.Repeat("a1", 32), strings.Repeat("b2", 32)
	for _, tc := range []struct {
		name              string
		setup             func(t *testing.T, s *Store, outside string)
		foreign, symlinks int
		first             string // FirstLeft, relative to the store
	}{
		{"tmp is a symlink", func(t *testing.T, s *Store, outside string) {
			os.RemoveAll(filepath.Join(s.Root(), "tmp"))
			os.Symlink(outside, filepath.Join(s.Root(), "tmp"))
		}, 0, 1, "tmp"},
		{"index is a symlink", func(t *testing.T, s *Store, outside string) {
			writeFile(t, filepath.Join(outside, hexA[:2], hexA+".json"), "{}")
			os.RemoveAll(filepath.Join(s.Root(), "index"))
			os.Symlink(outside, filepath.Join(s.Root(), "index"))
		}, 0, 1, "index"},
		{"fan-out directory is a symlink", func(t *testing.T, s *Store, outside string) {
			writeFile(t, filepath.Join(outside, hexA), "x")
			os.Symlink(outside, filepath.Join(s.Root(), "objects", hexA[:2]))
		}, 0, 1, "objects/" + hexA[:2]},
		{"object is a symlink", func(t *testing.T, s *Store, outside string) {
			os.MkdirAll(filepath.Join(s.Root(), "objects", hexA[:2]), 0o777)
			os.Symlink(filepath.Join(outside, "victim"), filepath.Join(s.Root(), "objects", hexA[:2], hexA))
		}, 0, 1, "objects/" + hexA[:2] + "/" + hexA},
		{"temp file is a symlink", func(t *testing.T, s *Store, outside string) {
			os.Symlink(filepath.Join(outside, "victim"), filepath.Join(s.Root(), "tmp", tempName(hexA)))
		}, 0, 1, "tmp/" + tempName(hexA)},
		{"foreign files", func(t *testing.T, s *Store, outside string) {
			writeFile(t, filepath.Join(s.Root(), "tmp", "draft.txt"), "mine")
			writeFile(t, filepath.Join(s.Root(), "objects", "notes"), "mine")
			writeFile(t, filepath.Join(s.Root(), "objects", hexA[:2], hexA+".bak"), "mine")
			writeFile(t, filepath.Join(s.Root(), "objects", hexA[:2], hexB), "wrong fan-out")
			writeFile(t, filepath.Join(s.Root(), "index", hexA[:2], hexA), "no .json")
		}, 5, 0, "tmp/draft.txt"},
		{"directory in an object's place", func(t *testing.T, s *Store, outside string) {
			writeFile(t, filepath.Join(s.Root(), "objects", hexA[:2], hexA, "inside"), "mine")
		}, 1, 0, "objects/" + hexA[:2] + "/" + hexA},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := openTemp(t)
			garbage, _ := s.Put([]byte("unreferenced"))
			outside := t.TempDir()
			writeFile(t, filepath.Join(outside, "victim"), "do not touch")
			writeFile(t, filepath.Join(outside, tempName(hexB)), "looks like a temp file")
			tc.setup(t, s, outside)
			outBefore, storeBefore := tree(t, outside), tree(t, s.Root())

			dry, err := s.GCDryRun(nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if after := tree(t, s.Root()); !slices.Equal(storeBefore, after) {
				t.Errorf("GCDryRun changed the store:\nbefore %v\nafter  %v", storeBefore, after)
			}
			st, err := s.GC(nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if dry != st {
				t.Errorf("GCDryRun said %+v, GC did %+v", dry, st)
			}
			if st.Foreign != tc.foreign || st.Symlinks != tc.symlinks || st.FirstLeft != filepath.Join(s.Root(), tc.first) {
				t.Errorf("Foreign %d, Symlinks %d, FirstLeft %q; want %d, %d, %q",
					st.Foreign, st.Symlinks, st.FirstLeft, tc.foreign, tc.symlinks, filepath.Join(s.Root(), tc.first))
			}
			if st.ObjectsRemoved != 1 || s.Has(garbage) {
				t.Errorf("the store's own garbage was not removed: %+v", st)
			}
			if !strings.Contains(st.String(), "left alone") || !strings.Contains(st.String(), st.FirstLeft) {
				t.Errorf("report %q does not say what was left alone", st)
			}
			if after := tree(t, outside); !slices.Equal(outBefore, after) {
				t.Errorf("GC changed a directory outside the store:\nbefore %v\nafter  %v", outBefore, after)
			}
			storeAfter := tree(t, s.Root())
			for _, p := range storeBefore {
				if !slices.Contains(storeAfter, p) && !strings.Contains(p, garbage.Hex()) {
					t.Errorf("GC removed %s", p)
				}
			}
		})
	}
}

func TestGCStatsString(t *testing.T) {
	for _, tc := range []struct {
		st   GCStats
		want string
	}{
		{GCStats{}, "removed 0 objects, 0 index entries and 0 abandoned temp files (0.0 MB); kept 0 objects and 0 index entries"},
		{GCStats{ObjectsRemoved: 1, EntriesRemoved: 1, TmpRemoved: 1, BytesFreed: 2_500_000, ObjectsKept: 1, EntriesKept: 2},
			"removed 1 object, 1 index entry and 1 abandoned temp file (2.5 MB); kept 1 object and 2 index entries"},
		{GCStats{TmpLive: 2, Foreign: 1, Symlinks: 2, FirstLeft: "/s/tmp/draft.txt", Corrupt: 3},
			"removed 0 objects, 0 index entries and 0 abandoned temp files (0.0 MB); kept 0 objects and 0 index entries; " +
				"2 temp files still being written; left alone 1 file the store did not create and 2 symbolic links (e.g. /s/tmp/draft.txt); 3 files in corrupt/ to inspect"},
	} {
		if got := tc.st.String(); got != tc.want {
			t.Errorf("String() =\n%s\nwant\n%s", got, tc.want)
		}
	}
}

// unsafeNames are output names that must never reach a file path.
var unsafeNames = []struct{ name, want string }{
	{"", "empty"},
	{".", "not a file name"},
	{"..", "not a file name"},
	{"../../../victim.txt", `contains '/'`},
	{"/etc/passwd", `contains '/'`},
	{"a/b", `contains '/'`},
	{`..\..\victim.txt`, `contains '\\'`},
	{"C:victim", `contains ':'`},
	{"a\x00b", "U+0000"},
	{"a\nb", "U+000A"},
	{"tab\there", "U+0009"},
	{"del\x7f", "U+007F"},
	{"c1\u0085", "U+0085"},
	{"gpj.\u202eexe", "U+202E"},
	{"zero\u200bwidth", "U+200B"},
	{"bad\xffutf8", "UTF-8"},
	{strings.Repeat("n", 256), "more than 255"},
}

var safeNames = []string{"summary", "d2.png", "summary_d2.tex", "eta=0.1", "seed=3", "résumé", "..a", "a..b", ".hidden", "with space", strings.Repeat("n", 255)}

func TestCheckName(t *testing.T) {
	for _, tc := range unsafeNames {
		err := CheckName(tc.name)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("CheckName(%q) = %v, want an error mentioning %q", tc.name, err, tc.want)
		}
	}
	for _, n := range safeNames {
		if err := CheckName(n); err != nil {
			t.Errorf("CheckName(%q) = %v", n, err)
		}
	}
}

// TestEntriesWithUnsafeNames: PutEntry refuses an unsafe output name and
// writes nothing; an index file on disk holding one (written by hand, an
// old build or an attacker) is corrupt: moved to corrupt/, a plain miss
// after.
func TestEntriesWithUnsafeNames(t *testing.T) {
	setLooseForTest(t) // the loose layout: pack_test.go tests packs
	k := Key(sha256.Sum256([]byte("k")))
	for _, tc := range unsafeNames {
		if tc.name == "" {
			continue // "no name": covered by TestPutEntryValidates
		}
		t.Run(strings.ToValidUTF8(tc.name[:min(len(tc.name), 20)], "?"), func(t *testing.T) {
			s := openTemp(t)
			d, _ := s.Put([]byte("out"))
			err := s.PutEntry(Entry{Key: k, Kind: "run", Outputs: []Output{{tc.name, d, 3}}})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("PutEntry = %v, want an error mentioning %q", err, tc.want)
			}
			if files := listFiles(t, filepath.Join(s.Root(), "index")); len(files) != 0 {
				t.Errorf("index/ = %v", files)
			}

			// The same entry written by hand, as JSON would encode it
			// (invalid UTF-8 goes in raw: encoding/json would replace it).
			good := Entry{Key: k, Kind: "run", Outputs: []Output{{"placeholder", d, 3}}}
			data, _ := encodeEntry(good)
			name, _ := jsonString(tc.name)
			if !utf8Valid(tc.name) {
				name = `"` + tc.name + `"`
			}
			data = bytes.Replace(data, []byte(`"placeholder"`), []byte(name), 1)
			p := s.entryPath(k)
			writeFile(t, p, string(data))
			e, ok, err := s.GetEntry(k)
			var ce *CorruptError
			if ok || !errors.As(err, &ce) {
				t.Fatalf("GetEntry = %+v, %v, %v; want a *CorruptError", e, ok, err)
			}
			if ce.MovedTo == "" {
				t.Errorf("not moved aside: %v", ce)
			}
			if _, ok, err := s.GetEntry(k); ok || err != nil {
				t.Errorf("second GetEntry = %v, %v, want a miss", ok, err)
			}
		})
	}
	// Safe names round-trip.
	s := openTemp(t)
	d, _ := s.Put([]byte("out"))
	var outs []Output
	for _, n := range safeNames {
		outs = append(outs, Output{n, d, 3})
	}
	if err := s.PutEntry(Entry{Key: k, Kind: "run", Outputs: outs}); err != nil {
		t.Fatal(err)
	}
	if e, ok, err := s.GetEntry(k); !ok || err != nil || len(e.Outputs) != len(safeNames) {
		t.Errorf("GetEntry = %v, %v", ok, err)
	}
}

// TestNonRegularFilesInThePlaceOfStoreFiles: an object or entry replaced by
// a directory or a symbolic link is reported as corrupt (naming what it
// is), moved aside to corrupt/ with its contents, never followed, and a
// rerun's Put or PutEntry replaces it, with or without a read first.
func TestNonRegularFilesInThePlaceOfStoreFiles(t *testing.T) {
	setLooseForTest(t) // the loose layout: pack_test.go tests packs
	data := []byte("the object")
	k := Key(sha256.Sum256([]byte("entry")))
	toDir := func(t *testing.T, p string) {
		os.Remove(p)
		writeFile(t, filepath.Join(p, "inside"), "x")
	}
	outside := filepath.Join(t.TempDir(), "outside")
	toLink := func(t *testing.T, p string) {
		writeFile(t, outside, "outside the store")
		os.Remove(p)
		if err := os.Symlink(outside, p); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name    string
		replace func(t *testing.T, p string)
		what    string
	}{
		{"directory", toDir, "a directory"},
		{"symlink", toLink, "a symbolic link"},
	} {
		for _, readFirst := range []bool{true, false} {
			t.Run(tc.name+map[bool]string{true: "/read first", false: "/rewrite at once"}[readFirst], func(t *testing.T) {
				s := openTemp(t)
				d, _ := s.Put(data)
				if err := s.PutEntry(Entry{Key: k, Kind: "x", Outputs: []Output{{"o", d, int64(len(data))}}}); err != nil {
					t.Fatal(err)
				}
				entryBytes, _ := os.ReadFile(s.entryPath(k))
				tc.replace(t, s.ObjectPath(d))
				if s.Has(d) && tc.name == "directory" {
					t.Error("Has = true for a directory")
				}
				if readFirst {
					_, err := s.Get(d)
					var ce *CorruptError
					if !errors.As(err, &ce) || !strings.Contains(err.Error(), tc.what) || ce.MovedTo == "" {
						t.Fatalf("Get = %v, want a *CorruptError saying %q, moved aside", err, tc.what)
					}
					if fi, err := os.Lstat(ce.MovedTo); err != nil || (tc.name == "directory") != fi.IsDir() {
						t.Errorf("corrupt/ copy: %v", err)
					}
				}
				if d2, err := s.Put(data); err != nil || d2 != d {
					t.Fatalf("rerun Put = %v, %v", d2, err)
				}
				if b, err := s.Get(d); err != nil || !bytes.Equal(b, data) {
					t.Errorf("Get after rerun = %q, %v", b, err)
				}

				tc.replace(t, s.entryPath(k))
				if readFirst {
					_, ok, err := s.GetEntry(k)
					if ok || !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), tc.what) {
						t.Fatalf("GetEntry = %v, %v, want corrupt (%s)", ok, err, tc.what)
					}
				}
				if err := s.PutEntry(Entry{Key: k, Kind: "x", Outputs: []Output{{"o", d, int64(len(data))}}}); err != nil {
					t.Fatalf("rerun PutEntry: %v", err)
				}
				if b, _ := os.ReadFile(s.entryPath(k)); !bytes.Equal(b, entryBytes) {
					t.Errorf("entry after rerun:\n%s\nwant\n%s", b, entryBytes)
				}
				if b, err := os.ReadFile(outside); tc.name == "symlink" && (err != nil || string(b) != "outside the store") {
					t.Errorf("symlink target changed: %q, %v", b, err)
				}
				if n := len(listFiles(t, filepath.Join(s.Root(), "corrupt"))); n != 2 && tc.name == "directory" {
					t.Errorf("corrupt/ holds %d files, want both directories' contents", n)
				}
			})
		}
	}

	t.Run("PutEntry of an output that is a directory", func(t *testing.T) {
		s := openTemp(t)
		d, _ := s.Put(data)
		toDir(t, s.ObjectPath(d))
		err := s.PutEntry(Entry{Key: k, Kind: "x", Outputs: []Output{{"o", d, int64(len(data))}}})
		if err == nil || !strings.Contains(err.Error(), "a directory") {
			t.Errorf("PutEntry = %v", err)
		}
	})
}

func jsonString(s string) (string, error) {
	b, err := json.Marshal(s)
	return string(b), err
}

func utf8Valid(s string) bool { return utf8.ValidString(s) }

// TestOpenExistingOrMissing: a store that does not exist reads as empty
// and is not created; an existing foreign directory is still refused.
func TestOpenExistingOrMissing(t *testing.T) {
	setLooseForTest(t) // the loose layout: pack_test.go tests packs
	dir := filepath.Join(t.TempDir(), "none")
	s, err := Open(dir, ExistingOrMissing)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.GetEntry(Key(Sum([]byte("k")))); ok || err != nil {
		t.Fatalf("GetEntry on an absent store: %v %v", ok, err)
	}
	if objs, err := s.Objects(); err != nil || len(objs) != 0 {
		t.Fatalf("Objects on an absent store: %v %v", objs, err)
	}
	if s.Has(Sum([]byte("x"))) {
		t.Fatal("Has on an absent store")
	}
	if _, err := os.Lstat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("reading created the store: %v", err)
	}
	foreign := t.TempDir()
	os.WriteFile(filepath.Join(foreign, "draft.txt"), []byte("x"), 0o644)
	if _, err := Open(foreign, ExistingOrMissing); !errors.Is(err, ErrNotStore) {
		t.Fatalf("foreign directory: %v", err)
	}
}

// TestOpenUnknownMode: a mode that is none of the constants is an error
// naming it, and creates nothing.
func TestOpenUnknownMode(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "none")
	_, err := Open(dir, Mode(9))
	if err == nil || !strings.Contains(err.Error(), "unknown mode Mode(9)") {
		t.Fatalf("Open with Mode(9): %v", err)
	}
	if _, err := os.Lstat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("an unknown mode created the directory: %v", err)
	}
	for m, want := range map[Mode]string{Create: "Create", Scratch: "Scratch", Existing: "Existing", ExistingOrMissing: "ExistingOrMissing"} {
		if m.String() != want {
			t.Errorf("%d.String() = %q, want %q", int(m), m.String(), want)
		}
	}
}
