package artifacts

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

func openTemp(t testing.TB) *Store {
	t.Helper()
	s, err := Open(filepath.Join(t.TempDir(), ".thv"), Create)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// openLoose is openTemp for a test of the loose layout: every object a
// loose file (as an object of looseLimit bytes or more is), every entry a
// loose file (as an old store's are).
func openLoose(t testing.TB) *Store {
	t.Helper()
	setLooseForTest(t)
	return openTemp(t)
}

// setLooseForTest makes the stores of the test write loose files only.
func setLooseForTest(t testing.TB) {
	setForTest(t, &looseLimit, 0)
	setForTest(t, &packEntries, false)
}

// putObjects puts n two-byte objects, (i, tag), into s.
func putObjects(t testing.TB, s *Store, n int, tag byte) []Digest {
	t.Helper()
	ds := make([]Digest, n)
	for i := range ds {
		d, err := s.Put([]byte{byte(i), tag})
		if err != nil {
			t.Fatal(err)
		}
		ds[i] = d
	}
	return ds
}

// setForTest sets *p to v for the rest of the test.
func setForTest[T any](t testing.TB, p *T, v T) {
	old := *p
	*p = v
	t.Cleanup(func() { *p = old })
}

// listFiles returns the paths, relative to dir, of the regular files below it.
func listFiles(t testing.TB, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.Type().IsRegular() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
		return nil
	})
	if err != nil {
		t.Error(err) // not Fatal: also called from helper goroutines
	}
	return out
}

func TestParseDigest(t *testing.T) {
	h := strings.Repeat("0123456789abcdef", 4)
	good := "sha256:" + h
	d, err := ParseDigest(good)
	if err != nil {
		t.Fatalf("ParseDigest(%q): %v", good, err)
	}
	if d.String() != good || d.Hex() != h {
		t.Errorf("round trip: got %q / %q", d.String(), d.Hex())
	}
	if k, err := ParseKey(good); err != nil || k.String() != good {
		t.Errorf("ParseKey(%q) = %v, %v", good, k, err)
	}
	bad := []struct{ in, want string }{
		{"", "does not start with"},
		{h, "lacks the"},
		{"sha1:" + h, "does not start with"},
		{"sha256:" + h[:63], "63 hex digits"},
		{"sha256:" + h + "0", "65 hex digits"},
		{"sha256:" + strings.ToUpper(h), "lowercase"},
		{"sha256:" + h[:63] + "g", "lowercase hex"},
		{" sha256:" + h, "does not start with"},
	}
	for _, tc := range bad {
		_, err := ParseDigest(tc.in)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseDigest(%q) error = %v, want it to mention %q", tc.in, err, tc.want)
		}
	}
	if got := Sum([]byte("abc")); got != Digest(sha256.Sum256([]byte("abc"))) {
		t.Errorf("Sum(abc) = %v", got)
	}
	// JSON uses the printed form.
	b, err := json.Marshal(struct{ D Digest }{d})
	if err != nil || string(b) != `{"D":"`+good+`"}` {
		t.Errorf("json = %s, %v", b, err)
	}
	var back struct{ D Digest }
	if err := json.Unmarshal(b, &back); err != nil || back.D != d {
		t.Errorf("json back = %v, %v", back.D, err)
	}
	if err := json.Unmarshal([]byte(`{"D":"sha256:zz"}`), &back); err == nil {
		t.Error("json accepted a bad digest")
	}
}

func TestOpenLayoutAndVersion(t *testing.T) {
	setLooseForTest(t) // the loose layout: pack_test.go tests packs
	dir := filepath.Join(t.TempDir(), "store")
	s, err := Open(dir, Create)
	if err != nil {
		t.Fatal(err)
	}
	if !filepath.IsAbs(s.Root()) {
		t.Errorf("Root() = %q, want absolute", s.Root())
	}
	for _, d := range []string{"objects", "index", "tmp"} {
		if fi, err := os.Stat(filepath.Join(dir, d)); err != nil || !fi.IsDir() {
			t.Errorf("%s/ not created: %v", d, err)
		}
	}
	v, err := os.ReadFile(filepath.Join(dir, "VERSION"))
	if err != nil || string(v) != layoutVersion+"\n" {
		t.Errorf("VERSION = %q, %v", v, err)
	}
	if _, err := Open(dir, Create); err != nil {
		t.Errorf("reopen: %v", err)
	}

	os.Chmod(filepath.Join(dir, "VERSION"), 0o644)
	if err := os.WriteFile(filepath.Join(dir, "VERSION"), []byte("thv-store 99\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Open(dir, Create)
	if err == nil || !strings.Contains(err.Error(), `"thv-store 99"`) || !strings.Contains(err.Error(), layoutVersion) {
		t.Errorf("Open of unknown version: err = %v", err)
	}

	file := filepath.Join(t.TempDir(), "plainfile")
	os.WriteFile(file, nil, 0o644)
	if _, err := Open(file, Create); err == nil {
		t.Error("Open of a plain file succeeded")
	}
}

func TestPutGetRoundTrip(t *testing.T) {
	setLooseForTest(t) // the loose layout: pack_test.go tests packs
	s := openTemp(t)
	data := []byte("hello, artifacts")
	d, err := s.Put(data)
	if err != nil {
		t.Fatal(err)
	}
	if d != Digest(sha256.Sum256(data)) {
		t.Fatalf("digest = %v", d)
	}
	if want := filepath.Join(s.Root(), "objects", d.Hex()[:2], d.Hex()); s.ObjectPath(d) != want {
		t.Errorf("ObjectPath = %s, want %s", s.ObjectPath(d), want)
	}
	got, err := s.Get(d)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("Get = %q, %v", got, err)
	}
	if !s.Has(d) {
		t.Error("Has = false after Put")
	}
	if err := s.Verify(d); err != nil {
		t.Errorf("Verify: %v", err)
	}
	fi1, _ := os.Stat(s.ObjectPath(d))
	if fi1.Mode().Perm() != 0o444 {
		t.Errorf("object mode %v, want read-only", fi1.Mode())
	}

	// The same data again: same digest, one file, not rewritten.
	d2, err := s.Put(slices.Clone(data))
	if err != nil || d2 != d {
		t.Fatalf("second Put = %v, %v", d2, err)
	}
	fi2, _ := os.Stat(s.ObjectPath(d))
	if !os.SameFile(fi1, fi2) {
		t.Error("second Put of the same data rewrote the object")
	}
	if files := listFiles(t, filepath.Join(s.Root(), "objects")); len(files) != 1 {
		t.Errorf("objects/ holds %v, want one file", files)
	}
	if files := listFiles(t, filepath.Join(s.Root(), "tmp")); len(files) != 0 {
		t.Errorf("tmp/ holds %v after Puts", files)
	}

	// Empty data is a valid object.
	de, err := s.Put(nil)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := s.Get(de); err != nil || len(b) != 0 {
		t.Errorf("Get(empty) = %q, %v", b, err)
	}
}

func TestGetMissing(t *testing.T) {
	setLooseForTest(t) // the loose layout: pack_test.go tests packs
	s := openTemp(t)
	d := Sum([]byte("never stored"))
	_, err := s.Get(d)
	if !errors.Is(err, ErrNotFound) || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Get of missing: %v, want ErrNotFound and fs.ErrNotExist", err)
	}
	if errors.Is(err, ErrCorrupt) {
		t.Errorf("missing object reported as corrupt: %v", err)
	}
	if !strings.Contains(err.Error(), d.String()) {
		t.Errorf("error %q does not name the digest", err)
	}
	if s.Has(d) {
		t.Error("Has of missing = true")
	}
	if err := s.Verify(d); !errors.Is(err, ErrNotFound) {
		t.Errorf("Verify of missing: %v", err)
	}
}

// flipByte corrupts the file at p in place, as a disk or a careless user would.
func flipByte(t *testing.T, p string, i int) []byte {
	t.Helper()
	os.Chmod(p, 0o644)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	b[i] ^= 0x01
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return b
}

func TestGetCorruptMovesAsideAndPutRestores(t *testing.T) {
	setLooseForTest(t) // the loose layout: pack_test.go tests packs
	s := openTemp(t)
	data := bytes.Repeat([]byte("pareto front "), 100)
	d, err := s.Put(data)
	if err != nil {
		t.Fatal(err)
	}
	p := s.ObjectPath(d)
	bad := flipByte(t, p, 7)

	got, err := s.Get(d)
	if got != nil {
		t.Error("Get returned bytes of a corrupt object")
	}
	var ce *CorruptError
	if !errors.Is(err, ErrCorrupt) || !errors.As(err, &ce) {
		t.Fatalf("Get of corrupt object: %v, want *CorruptError wrapping ErrCorrupt", err)
	}
	if errors.Is(err, ErrNotFound) {
		t.Error("corrupt error also matches ErrNotFound")
	}
	if ce.Name != d.String() || ce.Path != p || !strings.Contains(err.Error(), d.String()) || !strings.Contains(err.Error(), p) {
		t.Errorf("error does not name digest and path: %v (%+v)", err, ce)
	}
	if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("corrupt object still at %s", p)
	}
	if filepath.Dir(ce.MovedTo) != filepath.Join(s.Root(), "corrupt") {
		t.Errorf("MovedTo = %q, want a file in corrupt/", ce.MovedTo)
	}
	if moved, err := os.ReadFile(ce.MovedTo); err != nil || !bytes.Equal(moved, bad) {
		t.Errorf("corrupt/ copy differs from the corrupt bytes: %v", err)
	}
	if s.Has(d) {
		t.Error("Has = true after the object was moved aside")
	}
	if _, err := s.Get(d); !errors.Is(err, ErrNotFound) {
		t.Errorf("second Get: %v, want ErrNotFound", err)
	}

	if d2, err := s.Put(data); err != nil || d2 != d {
		t.Fatalf("restoring Put = %v, %v", d2, err)
	}
	if got, err := s.Get(d); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("Get after restore: %v", err)
	}

	// A second corruption of the same object keeps the first evidence.
	flipByte(t, p, 3)
	if err := s.Verify(d); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Verify: %v", err)
	}
	if files := listFiles(t, filepath.Join(s.Root(), "corrupt")); len(files) != 2 {
		t.Errorf("corrupt/ holds %v, want both corrupt copies", files)
	}
}

func TestPutReplacesCorruptCopy(t *testing.T) {
	setLooseForTest(t) // the loose layout: pack_test.go tests packs
	for _, tc := range []struct {
		name    string
		corrupt func(t *testing.T, p string)
	}{
		{"flipped", func(t *testing.T, p string) { flipByte(t, p, 0) }},
		{"truncated", func(t *testing.T, p string) { os.Chmod(p, 0o644); os.Truncate(p, 5) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := openTemp(t)
			data := []byte("0123456789abcdef")
			d, _ := s.Put(data)
			tc.corrupt(t, s.ObjectPath(d))
			if _, err := s.Put(data); err != nil {
				t.Fatal(err)
			}
			if err := s.Verify(d); err != nil {
				t.Errorf("after Put: %v", err)
			}
			if files := listFiles(t, filepath.Join(s.Root(), "corrupt")); len(files) != 1 {
				t.Errorf("corrupt/ = %v, want the bad copy kept", files)
			}
		})
	}
}

func TestEntryRoundTrip(t *testing.T) {
	setLooseForTest(t) // the loose layout: pack_test.go tests packs
	s := openTemp(t)
	da, _ := s.Put([]byte("summary parquet"))
	db, _ := s.Put([]byte("trajectory parquet"))
	k := Key(sha256.Sum256([]byte("run thvucb d=2 seed=3")))
	e := Entry{
		Key:  k,
		Kind: "run",
		Outputs: []Output{
			{Name: "trajectory", Digest: db, Size: 18},
			{Name: "summary", Digest: da, Size: 15},
		},
		Meta: map[string]string{"preimage": "kind run\nparams {...}\n", "a": "first"},
	}
	orig := slices.Clone(e.Outputs)
	if err := s.PutEntry(e); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(e.Outputs, orig) {
		t.Error("PutEntry modified the caller's Outputs")
	}
	got, ok, err := s.GetEntry(k)
	if err != nil || !ok {
		t.Fatalf("GetEntry = %v, %v", ok, err)
	}
	if got.Key != k || got.Kind != "run" || len(got.Outputs) != 2 ||
		got.Outputs[0].Name != "summary" || got.Outputs[0].Digest != da || got.Outputs[0].Size != 15 ||
		got.Outputs[1].Name != "trajectory" || got.Outputs[1].Digest != db {
		t.Errorf("GetEntry = %+v", got)
	}
	if o, ok := got.Output("trajectory"); !ok || o.Digest != db {
		t.Errorf("Output(trajectory) = %v, %v", o, ok)
	}
	if _, ok := got.Output("nope"); ok {
		t.Error("Output(nope) found")
	}
	if got.Meta["preimage"] != e.Meta["preimage"] || len(got.Meta) != 2 {
		t.Errorf("Meta = %v", got.Meta)
	}

	// Deterministic bytes: the same entry with outputs in another order.
	p := s.entryPath(k)
	if want := filepath.Join(s.Root(), "index", k.Hex()[:2], k.Hex()+".json"); p != want {
		t.Errorf("entry path %s, want %s", p, want)
	}
	b1, _ := os.ReadFile(p)
	e.Outputs = []Output{orig[1], orig[0]}
	other := openTemp(t)
	other.Put([]byte("summary parquet"))
	other.Put([]byte("trajectory parquet"))
	if err := other.PutEntry(e); err != nil {
		t.Fatal(err)
	}
	b2, _ := os.ReadFile(other.entryPath(k))
	if !bytes.Equal(b1, b2) {
		t.Errorf("entry bytes differ:\n%s\n%s", b1, b2)
	}
	// Field order is fixed: key, kind, outputs, meta.
	str := string(b1)
	if !(strings.Index(str, `"key"`) < strings.Index(str, `"kind"`) &&
		strings.Index(str, `"kind"`) < strings.Index(str, `"outputs"`) &&
		strings.Index(str, `"outputs"`) < strings.Index(str, `"meta"`) &&
		strings.Index(str, `"a"`) < strings.Index(str, `"preimage"`)) {
		t.Errorf("unexpected field order:\n%s", b1)
	}

	// Missing entry: a plain miss.
	if _, ok, err := s.GetEntry(Key(sha256.Sum256([]byte("other")))); ok || err != nil {
		t.Errorf("GetEntry of missing = %v, %v", ok, err)
	}
}

func TestPutEntryValidates(t *testing.T) {
	setLooseForTest(t) // the loose layout: pack_test.go tests packs
	s := openTemp(t)
	d, _ := s.Put([]byte("xyz"))
	k := Key(sha256.Sum256([]byte("k")))
	absent := Sum([]byte("absent"))
	for _, tc := range []struct {
		name string
		e    Entry
		want string
	}{
		{"zero key", Entry{Kind: "run"}, "zero key"},
		{"no kind", Entry{Key: k}, "empty kind"},
		{"dup output", Entry{Key: k, Kind: "run", Outputs: []Output{{"a", d, 3}, {"a", d, 3}}}, "duplicate"},
		{"empty name", Entry{Key: k, Kind: "run", Outputs: []Output{{"", d, 3}}}, "empty name"},
		{"zero digest", Entry{Key: k, Kind: "run", Outputs: []Output{{"a", Digest{}, 3}}}, "zero digest"},
		{"absent object", Entry{Key: k, Kind: "run", Outputs: []Output{{"a", absent, 6}}}, "Put outputs before"},
		{"wrong size", Entry{Key: k, Kind: "run", Outputs: []Output{{"a", d, 4}}}, "has 3 bytes"},
		{"bad utf8 meta", Entry{Key: k, Kind: "run", Meta: map[string]string{"x": "\xff"}}, "UTF-8"},
	} {
		err := s.PutEntry(tc.e)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
	}
	if files := listFiles(t, filepath.Join(s.Root(), "index")); len(files) != 0 {
		t.Errorf("invalid entries were written: %v", files)
	}
}

func TestGetEntryCorrupt(t *testing.T) {
	setLooseForTest(t) // the loose layout: pack_test.go tests packs
	k := Key(sha256.Sum256([]byte("task")))
	otherKey := Key(sha256.Sum256([]byte("other task")))
	for _, tc := range []struct {
		name    string
		content func(valid []byte) []byte
	}{
		{"truncated", func(v []byte) []byte { return v[:len(v)/2] }},
		{"empty", func([]byte) []byte { return nil }},
		{"garbage", func([]byte) []byte { return []byte{0x00, 0xff, 0x13, 0x37} }},
		{"trailing data", func(v []byte) []byte { return append(slices.Clone(v), []byte("{}")...) }},
		{"wrong key", func(v []byte) []byte {
			return bytes.Replace(v, []byte(k.String()), []byte(otherKey.String()), 1)
		}},
		{"unknown field", func(v []byte) []byte { return bytes.Replace(v, []byte(`"kind"`), []byte(`"kynd"`), 1) }},
		{"bad digest", func(v []byte) []byte { return bytes.Replace(v, []byte(`"sha256:`), []byte(`"md5:`), 2) }},
		{"null outputs", func([]byte) []byte { return []byte(`{"key":"` + k.String() + `","kind":"run","outputs":null}`) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := openTemp(t)
			d, _ := s.Put([]byte("out"))
			if err := s.PutEntry(Entry{Key: k, Kind: "run", Outputs: []Output{{"o", d, 3}}}); err != nil {
				t.Fatal(err)
			}
			p := s.entryPath(k)
			valid, _ := os.ReadFile(p)
			bad := tc.content(valid)
			os.Chmod(p, 0o644)
			if err := os.WriteFile(p, bad, 0o644); err != nil {
				t.Fatal(err)
			}

			e, ok, err := s.GetEntry(k)
			if ok || e.Kind != "" {
				t.Fatalf("GetEntry of a %s file returned an entry: %+v", tc.name, e)
			}
			var ce *CorruptError
			if !errors.Is(err, ErrCorrupt) || !errors.As(err, &ce) || ce.Name != k.String() {
				t.Fatalf("err = %v, want *CorruptError for %v", err, k)
			}
			if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
				t.Error("corrupt entry left in index/")
			}
			if moved, err := os.ReadFile(ce.MovedTo); err != nil || !bytes.Equal(moved, bad) {
				t.Errorf("corrupt/ copy: %v", err)
			}
			if _, ok, err := s.GetEntry(k); ok || err != nil {
				t.Errorf("second GetEntry = %v, %v, want a plain miss", ok, err)
			}
		})
	}
}

func TestConcurrentPuts(t *testing.T) {
	setLooseForTest(t) // the loose layout: pack_test.go tests packs
	s := openTemp(t)
	shared := bytes.Repeat([]byte("shared "), 10000)
	const workers, rounds = 8, 20
	var wg sync.WaitGroup
	errs := make(chan error, workers*rounds*2)
	for w := range workers {
		wg.Go(func() {
			own := fmt.Appendf(nil, "worker %d ", w)
			own = bytes.Repeat(own, 5000)
			for range rounds {
				if d, err := s.Put(shared); err != nil || d != Sum(shared) {
					errs <- fmt.Errorf("shared put: %v %v", d, err)
				}
				if d, err := s.Put(own); err != nil || d != Sum(own) {
					errs <- fmt.Errorf("own put: %v %v", d, err)
				}
				if b, err := s.Get(Sum(shared)); err != nil || !bytes.Equal(b, shared) {
					errs <- fmt.Errorf("get shared: %v", err)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	objs := listFiles(t, filepath.Join(s.Root(), "objects"))
	if len(objs) != workers+1 {
		t.Errorf("objects/ holds %d files, want %d", len(objs), workers+1)
	}
	for _, rel := range objs {
		d, err := ParseDigest("sha256:" + filepath.Base(rel))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Verify(d); err != nil {
			t.Error(err)
		}
	}
	if files := listFiles(t, filepath.Join(s.Root(), "tmp")); len(files) != 0 {
		t.Errorf("tmp/ holds %v", files)
	}
	if files := listFiles(t, filepath.Join(s.Root(), "corrupt")); len(files) != 0 {
		t.Errorf("corrupt/ holds %v", files)
	}
}

func TestConcurrentOpenAndPutEntry(t *testing.T) {
	setLooseForTest(t) // the loose layout: pack_test.go tests packs
	dir := filepath.Join(t.TempDir(), ".thv")
	var wg sync.WaitGroup
	k := Key(sha256.Sum256([]byte("k")))
	for range 8 {
		wg.Go(func() {
			s, err := Open(dir, Create)
			if err != nil {
				t.Error(err)
				return
			}
			d, err := s.Put([]byte("v"))
			if err != nil {
				t.Error(err)
				return
			}
			if err := s.PutEntry(Entry{Key: k, Kind: "k", Outputs: []Output{{"v", d, 1}}}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	s, err := Open(dir, Create)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.GetEntry(k); !ok || err != nil {
		t.Errorf("GetEntry = %v, %v", ok, err)
	}
}

func TestGC(t *testing.T) {
	setLooseForTest(t) // the loose layout: pack_test.go tests packs
	s := openTemp(t)
	put := func(b string) Digest {
		d, err := s.Put([]byte(b))
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	a, b, c := put("aaaa"), put("bbbbbb"), put("cccccccc")
	k1, k2 := Key(sha256.Sum256([]byte("k1"))), Key(sha256.Sum256([]byte("k2")))
	if err := s.PutEntry(Entry{Key: k1, Kind: "x", Outputs: []Output{{"o", a, 4}}}); err != nil {
		t.Fatal(err)
	}
	if err := s.PutEntry(Entry{Key: k2, Kind: "x", Outputs: []Output{{"o", b, 6}}}); err != nil {
		t.Fatal(err)
	}
	k2size := fileSize(t, s.entryPath(k2))

	// Files GC must not touch: a foreign file among the objects, and corrupt/.
	foreign := filepath.Join(s.Root(), "objects", a.Hex()[:2], "README")
	os.WriteFile(foreign, []byte("not mine"), 0o644)
	os.MkdirAll(filepath.Join(s.Root(), "corrupt"), 0o777)
	os.WriteFile(filepath.Join(s.Root(), "corrupt", "object-x"), []byte("evidence"), 0o644)
	// An abandoned temp file (its writer died) and one being written, both
	// with the store's temp names; and a file in tmp/ that merely looks
	// like a temp file, which is not the store's.
	os.WriteFile(filepath.Join(s.Root(), "tmp", c.Hex()+".123.tmp"), []byte("partial"), 0o644)
	notOurs := filepath.Join(s.Root(), "tmp", "dead.123.tmp")
	os.WriteFile(notOurs, []byte("someone's"), 0o644)
	live, err := os.Create(filepath.Join(s.Root(), "tmp", k1.Hex()+".json.456.tmp"))
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	if err := lockTemp(live); err != nil {
		t.Fatal(err)
	}

	st, err := s.GC(map[Digest]bool{a: true}, map[Key]bool{k1: true})
	if err != nil {
		t.Fatal(err)
	}
	want := GCStats{
		ObjectsKept: 1, ObjectsRemoved: 2,
		EntriesKept: 1, EntriesRemoved: 1,
		TmpRemoved: 1, TmpLive: 1,
		BytesFreed: 6 + 8 + k2size + int64(len("partial")),
		Corrupt:    1,
		Foreign:    2, FirstLeft: notOurs,
	}
	if st != want {
		t.Errorf("GC stats = %+v, want %+v", st, want)
	}
	if !s.Has(a) || s.Has(b) || s.Has(c) {
		t.Errorf("after GC: Has(a,b,c) = %v %v %v, want true false false", s.Has(a), s.Has(b), s.Has(c))
	}
	if _, ok, _ := s.GetEntry(k1); !ok {
		t.Error("kept entry removed")
	}
	if _, ok, _ := s.GetEntry(k2); ok {
		t.Error("unkept entry survived")
	}
	for _, p := range []string{foreign, notOurs, filepath.Join(s.Root(), "corrupt", "object-x"), live.Name()} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("GC removed %s", p)
		}
	}
	// A second GC with the same sets finds nothing more to do.
	st, err = s.GC(map[Digest]bool{a: true}, map[Key]bool{k1: true})
	if err != nil || st.ObjectsRemoved+st.EntriesRemoved+st.TmpRemoved != 0 || st.BytesFreed != 0 {
		t.Errorf("second GC = %+v, %v", st, err)
	}
	// nil sets keep nothing.
	st, err = s.GC(nil, nil)
	if err != nil || st.ObjectsRemoved != 1 || st.EntriesRemoved != 1 || s.Has(a) {
		t.Errorf("GC(nil, nil) = %+v, %v", st, err)
	}
}

func fileSize(t *testing.T, p string) int64 {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

func TestObjectsListsWhatIsStored(t *testing.T) {
	setLooseForTest(t) // the loose layout: pack_test.go tests packs
	s, err := Open(t.TempDir(), Create)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := s.Objects(); err != nil || len(got) != 0 {
		t.Fatalf("empty store lists %v, %v", got, err)
	}
	want := map[Digest]bool{}
	for i := 0; i < 50; i++ {
		d, err := s.Put([]byte{byte(i), 1, 2})
		if err != nil {
			t.Fatal(err)
		}
		want[d] = true
	}
	got, err := s.Objects()
	if err != nil || len(got) != len(want) {
		t.Fatalf("listed %d objects (%v), want %d", len(got), err, len(want))
	}
	for d := range want {
		if !got[d] {
			t.Fatalf("%v not listed", d)
		}
	}
}

// TestDecodeLowerHex agrees with encoding/hex on lowercase input and
// rejects every other byte, in strings and byte slices: every byte value
// at every position of a 5-byte decoding, and bad bytes at each of a
// digest's 64 digits.
func TestDecodeLowerHex(t *testing.T) {
	check := func(s string, got, want []byte) {
		t.Helper()
		_, err := hex.Decode(want, []byte(s))
		lower := err == nil && s == strings.ToLower(s)
		if ok := decodeLowerHex(got, s); ok != lower || ok && !bytes.Equal(got, want) {
			t.Errorf("%q: ok %v (%x), encoding/hex %v (%x)", s, ok, got, lower, want)
		}
		if ok := decodeLowerHex(got, []byte(s)); ok != lower || ok && !bytes.Equal(got, want) {
			t.Errorf("%q as bytes: ok %v (%x)", s, ok, got)
		}
	}
	base := "0a91f9ffe7"
	for pos := range base {
		for c := 0; c < 256; c++ {
			s := base[:pos] + string([]byte{byte(c)}) + base[pos+1:]
			check(s, make([]byte, 5), make([]byte, 5))
		}
	}
	digest := Sum([]byte("x")).Hex()
	for pos := range digest {
		for _, c := range []byte{'/', ':', '`', 'g', 'o', 'A', 'F', 0, 0x80, 0xe1, 0xff} {
			s := digest[:pos] + string([]byte{c}) + digest[pos+1:]
			check(s, make([]byte, 32), make([]byte, 32))
		}
	}
	check(digest, make([]byte, 32), make([]byte, 32))
	var got [4]byte
	if decodeLowerHex(got[:], "0a0b0c") {
		t.Error("short input accepted")
	}
}

// TestScratchStore: a scratch store refuses foreign directories like Open,
// and what it stores reads back verified (only the fsyncs are skipped).
func TestScratchStore(t *testing.T) {
	setLooseForTest(t) // the loose layout: pack_test.go tests packs
	foreign := t.TempDir()
	os.WriteFile(filepath.Join(foreign, "notes.txt"), []byte("mine"), 0o644)
	if _, err := Open(foreign, Scratch); !errors.Is(err, ErrNotStore) {
		t.Fatalf("Open(Scratch) on a foreign directory: %v", err)
	}
	s, err := Open(t.TempDir(), Scratch)
	if err != nil {
		t.Fatal(err)
	}
	d, err := s.Put([]byte("scratch"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.PutEntry(Entry{Key: Key(d), Kind: "k", Outputs: []Output{{Name: "o", Digest: d, Size: 7}}}); err != nil {
		t.Fatal(err)
	}
	if b, err := s.Get(d); err != nil || string(b) != "scratch" {
		t.Fatalf("Get: %q, %v", b, err)
	}
	if e, ok, err := s.GetEntry(Key(d)); err != nil || !ok || e.Outputs[0].Digest != d {
		t.Fatalf("GetEntry: %+v %v %v", e, ok, err)
	}
}

// TestFanoutRel: the fan-out directory of each first byte is the one
// objectRel puts its objects in.
func TestFanoutRel(t *testing.T) {
	for b := range 256 {
		if d := (Digest{byte(b)}); filepath.Dir(objectRel(d)) != fanoutRel(byte(b)) {
			t.Fatalf("byte %#x: fanoutRel %q, objectRel %q", b, fanoutRel(byte(b)), objectRel(d))
		}
	}
}
