package artifacts

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// The tests of packs (pack.go): the store's default layout for small
// objects and index entries. The loose layout's tests (store_test.go and
// the others) run with setLooseForTest.

// packFiles lists the files of packs/.
func packFiles(t *testing.T, s *Store) []string {
	t.Helper()
	return listFiles(t, filepath.Join(s.Root(), "packs"))
}

// onlyPack returns the path of the store's one pack.
func onlyPack(t *testing.T, s *Store) string {
	t.Helper()
	var packs []string
	for _, f := range packFiles(t, s) {
		if strings.HasSuffix(f, packExt) {
			packs = append(packs, f)
		}
	}
	if len(packs) != 1 {
		t.Fatalf("packs/ holds %v, want one pack", packFiles(t, s))
	}
	return filepath.Join(s.Root(), "packs", packs[0])
}

// TestPackRoundTrip: small objects and entries go into one pack, read back
// verified; nothing is loose; the same object again adds nothing; the
// barrier writes the pack's index, which a new handle reads.
func TestPackRoundTrip(t *testing.T) {
	s := openTemp(t)
	data := bytes.Repeat([]byte("a small table "), 20)
	d, err := s.Put(data)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := s.Get(d); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("Get = %q, %v", got, err)
	}
	if !s.Has(d) || s.Verify(d) != nil {
		t.Fatal("Has or Verify of a packed object")
	}
	loc, ok := s.Locate(d)
	if !ok || !loc.Packed || !loc.Compressed {
		t.Fatalf("Locate = %+v, %v: want a compressed packed record", loc, ok)
	}
	if files := listFiles(t, filepath.Join(s.Root(), "objects")); len(files) != 0 {
		t.Fatalf("objects/ holds %v", files)
	}
	e := Entry{Key: Key(sha256.Sum256([]byte("task"))), Kind: "k", Outputs: []Output{{Name: "out", Digest: d, Size: int64(len(data))}}, Meta: map[string]string{"preimage": "thv task"}}
	if err := s.PutEntry(e); err != nil {
		t.Fatal(err)
	}
	if got, ok, err := s.GetEntry(e.Key); err != nil || !ok || got.Outputs[0] != e.Outputs[0] || got.Meta["preimage"] != "thv task" {
		t.Fatalf("GetEntry = %+v, %v, %v", got, ok, err)
	}
	if files := listFiles(t, filepath.Join(s.Root(), "index")); len(files) != 0 {
		t.Fatalf("index/ holds %v", files)
	}
	size := func() int64 {
		fi, err := os.Stat(onlyPack(t, s))
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	before := size()
	if _, err := s.Put(slices.Clone(data)); err != nil {
		t.Fatal(err)
	}
	if err := s.PutEntry(e); err != nil {
		t.Fatal(err)
	}
	if size() != before {
		t.Fatal("the same object and entry again grew the pack")
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	if files := packFiles(t, s); len(files) != 2 {
		t.Fatalf("packs/ after the barrier: %v, want the pack and its index", files)
	}
	s2, err := Open(s.Root(), Existing)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := s2.Get(d); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("another handle's Get: %v", err)
	}
	// The other handle read the index, not the pack: its view of the
	// pack has nothing scanned beyond it.
	for _, pf := range s2.pv.packs {
		if pf.idx == nil || len(pf.tail) != 0 {
			t.Fatalf("the new handle scanned the pack (index %v, %d records scanned)", pf.idx != nil, len(pf.tail))
		}
	}
	// Large objects stay loose.
	setForTest(t, &looseLimit, 100)
	big, err := s.Put(bytes.Repeat([]byte{7}, 100))
	if err != nil {
		t.Fatal(err)
	}
	if loc, ok := s.Locate(big); !ok || loc.Packed || loc.Path != s.ObjectPath(big) {
		t.Fatalf("an object at the loose limit: %+v", loc)
	}
}

// TestPackedCorruptIsSetAside: a flipped byte in a packed object is found
// when read; the record is copied to corrupt/ and killed (a miss after);
// a Put of the right bytes restores it; the store checks clean.
func TestPackedCorruptIsSetAside(t *testing.T) {
	s := openTemp(t)
	data := bytes.Repeat([]byte("pareto front "), 100)
	d, _ := s.Put(data)
	other, _ := s.Put([]byte("another object, not damaged"))
	loc, _ := s.Locate(d)
	flipAt(t, loc.Path, loc.Offset+loc.Length/2)

	_, err := s.Get(d)
	var ce *CorruptError
	if !errors.As(err, &ce) || errors.Is(err, ErrNotFound) {
		t.Fatalf("Get of a damaged record: %v", err)
	}
	if !strings.Contains(err.Error(), d.String()) || !strings.Contains(ce.Path, loc.Path) || filepath.Dir(ce.MovedTo) != filepath.Join(s.Root(), "corrupt") {
		t.Fatalf("the error does not name the object, its pack and the evidence: %v", err)
	}
	if ev, err := os.ReadFile(ce.MovedTo); err != nil || len(ev) != recHeaderSize+int(loc.Length) {
		t.Fatalf("evidence of %d bytes (%v), want the record's %d", len(ev), err, recHeaderSize+loc.Length)
	}
	if s.Has(d) {
		t.Fatal("Has after the record was set aside")
	}
	if _, err := s.Get(d); !errors.Is(err, ErrNotFound) {
		t.Fatalf("second Get: %v, want a miss", err)
	}
	// Another handle (another process) sees the kill.
	s2, err := Open(s.Root(), Existing)
	if err != nil {
		t.Fatal(err)
	}
	if s2.Has(d) || !s2.Has(other) {
		t.Fatal("another handle does not see the kill, or lost the other object")
	}
	if d2, err := s.Put(data); err != nil || d2 != d {
		t.Fatal(err)
	}
	if got, err := s2.Get(d); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("the restored object: %v", err)
	}
	if rep, err := s.Check(context.Background(), 2, nil); err != nil || len(rep.Problems) != 0 {
		t.Fatalf("check after the restore: %v %v", rep.Problems, err)
	}
}

func flipAt(t *testing.T, p string, at int64) {
	t.Helper()
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		os.Chmod(p, 0o644)
		if f, err = os.OpenFile(p, os.O_RDWR, 0); err != nil {
			t.Fatal(err)
		}
	}
	defer f.Close()
	b := []byte{0}
	f.ReadAt(b, at)
	b[0] ^= 0x01
	if _, err := f.WriteAt(b, at); err != nil {
		t.Fatal(err)
	}
}

// forgeIdx rewrites the index of the pack at packPath through edit, with
// its checksum made right again (as a forger would).
func forgeIdx(t *testing.T, packPath string, edit func(b []byte)) {
	t.Helper()
	p := strings.TrimSuffix(packPath, packExt) + idxExt
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	edit(b)
	binary.LittleEndian.PutUint32(b[len(b)-idxTrailerLen:], crc32.Checksum(b[:len(b)-idxTrailerLen], castagnoli))
	os.Chmod(p, 0o644)
	if err := os.WriteFile(p, b, 0o444); err != nil {
		t.Fatal(err)
	}
}

// TestForgedPacks: a pack whose object bytes, offsets or index were edited
// (the index's checksum recomputed) is caught when read or checked: the
// object is never served wrong, the record set aside, and a Put (the
// task recomputed) restores it.
func TestForgedPacks(t *testing.T) {
	for _, tc := range []struct {
		name  string
		forge func(t *testing.T, s *Store, d, other Digest)
	}{
		{"object bytes", func(t *testing.T, s *Store, d, _ Digest) {
			loc, _ := s.Locate(d)
			flipAt(t, loc.Path, loc.Offset)
		}},
		{"offset into another record", func(t *testing.T, s *Store, d, other Digest) {
			dl, _ := s.Locate(d)
			ol, _ := s.Locate(other)
			forgeIdx(t, dl.Path, func(b []byte) { setIdxOffset(t, b, d, ol.Offset-recHeaderSize) })
		}},
		{"offset into a payload", func(t *testing.T, s *Store, d, _ Digest) {
			dl, _ := s.Locate(d)
			forgeIdx(t, dl.Path, func(b []byte) { setIdxOffset(t, b, d, dl.Offset+3) })
		}},
		{"index entry renamed", func(t *testing.T, s *Store, d, other Digest) {
			// The index says other lies where d does.
			dl, _ := s.Locate(d)
			forgeIdx(t, dl.Path, func(b []byte) {
				i := idxRecordOf(t, b, other)
				j := idxRecordOf(t, b, d)
				copy(b[i+32:i+idxRecSize], b[j+32:j+idxRecSize])
			})
		}},
		{"index garbled", func(t *testing.T, s *Store, d, _ Digest) {
			dl, _ := s.Locate(d)
			p := strings.TrimSuffix(dl.Path, packExt) + idxExt
			flipAt(t, p, idxRecordsAt+5) // the checksum now fails: the pack is scanned
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := openTemp(t)
			data := bytes.Repeat([]byte("the object to forge "), 30)
			otherData := bytes.Repeat([]byte("a neighbour "), 30)
			d, _ := s.Put(data)
			other, _ := s.Put(otherData)
			if err := s.Sync(); err != nil {
				t.Fatal(err)
			}
			tc.forge(t, s, d, other)
			// A reader that opens the store afresh (another process).
			r, err := Open(s.Root(), Create)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				d    Digest
				data []byte
			}{{d, data}, {other, otherData}} {
				got, err := r.Get(c.d)
				if err == nil && !bytes.Equal(got, c.data) {
					t.Fatalf("Get served wrong bytes for %v", c.d)
				}
				if err != nil {
					// Corrupt, or missing (an index entry lying beyond its
					// pack is no record): either way recomputed.
					if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrNotFound) {
						t.Fatalf("Get: %v", err)
					}
					t.Logf("caught: %v", err)
					// The task is recomputed: its bytes are put again.
					if _, err := r.Put(c.data); err != nil {
						t.Fatal(err)
					}
				}
			}
			if _, err := r.Check(context.Background(), 2, nil); err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				d    Digest
				data []byte
			}{{d, data}, {other, otherData}} {
				if got, err := r.Get(c.d); err != nil || !bytes.Equal(got, c.data) {
					t.Fatalf("after the recomputation and the check: %v", err)
				}
			}
			if rep, err := r.Check(context.Background(), 2, nil); err != nil || len(rep.Problems) != 0 {
				t.Fatalf("a second check: %v %v", rep.Problems, err)
			}
		})
	}
}

// idxRecordOf returns where the index bytes b list the record of id.
func idxRecordOf(t *testing.T, b []byte, id Digest) int {
	t.Helper()
	n := int(binary.LittleEndian.Uint32(b[24:]))
	for i := range n {
		at := idxRecordsAt + i*idxRecSize
		if bytes.Equal(b[at:at+32], id[:]) {
			return at
		}
	}
	t.Fatalf("%v is not in the index", id)
	return 0
}

func setIdxOffset(t *testing.T, b []byte, id Digest, off int64) {
	binary.LittleEndian.PutUint64(b[idxRecordOf(t, b, id)+32:], uint64(off))
}

// TestPackedEntries: a packed entry replaced by PutEntry is killed (one
// live entry per key); a loose entry (PutEntryLoose) is read before the
// packed ones; SetAsideEntry sets every entry of the key aside.
func TestPackedEntries(t *testing.T) {
	s := openTemp(t)
	d1, _ := s.Put([]byte("first result"))
	d2, _ := s.Put([]byte("second result"))
	k := Key(sha256.Sum256([]byte("the task")))
	e1 := Entry{Key: k, Kind: "k", Outputs: []Output{{Name: "o", Digest: d1, Size: 12}}}
	e2 := Entry{Key: k, Kind: "k", Outputs: []Output{{Name: "o", Digest: d2, Size: 13}}}
	if err := s.PutEntry(e1); err != nil {
		t.Fatal(err)
	}
	if err := s.PutEntry(e2); err != nil {
		t.Fatal(err)
	}
	if locs := s.findPacked(k, recEntry); len(locs) != 1 {
		t.Fatalf("%d live entries for the key, want 1", len(locs))
	}
	s2, _ := Open(s.Root(), Existing)
	if got, ok, err := s2.GetEntry(k); err != nil || !ok || got.Outputs[0].Digest != d2 {
		t.Fatalf("another handle reads %+v, %v, %v: want the replacement", got, ok, err)
	}
	// A loose entry comes first.
	if err := s.PutEntryLoose(e1); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := s2.GetEntry(k); got.Outputs[0].Digest != d1 {
		t.Fatal("the loose entry is not read first")
	}
	// PutEntry (packed) replaces the loose one too.
	if err := s.PutEntry(e2); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := s2.GetEntry(k); got.Outputs[0].Digest != d2 {
		t.Fatal("a packed entry put after a loose one is not what is read")
	}
	if err := s.SetAsideEntry(k, "disputed"); err != nil {
		t.Fatal(err)
	}
	s2, _ = Open(s.Root(), Existing) // a reader that comes after
	if _, ok, err := s2.GetEntry(k); ok || err != nil {
		t.Fatalf("the entry after SetAsideEntry: %v %v", ok, err)
	}
	if files := listFiles(t, filepath.Join(s.Root(), "corrupt")); len(files) != 1 || !strings.HasPrefix(files[0], "index-entry-") {
		t.Fatalf("corrupt/ = %v, want the set-aside entry", files)
	}
	// A damaged packed entry is set aside when read.
	if err := s.PutEntry(e1); err != nil {
		t.Fatal(err)
	}
	l := s.findPacked(k, recEntry)[0]
	flipAt(t, filepath.Join(s.Root(), packRel(l.pf.name)), l.rec.off+recHeaderSize+2)
	if _, ok, err := s2.GetEntry(k); ok || !errors.Is(err, ErrCorrupt) {
		t.Fatalf("a damaged entry: %v %v", ok, err)
	}
	if _, ok, err := s.GetEntry(k); ok || err != nil {
		t.Fatalf("the damaged entry after it was set aside: %v %v", ok, err)
	}
}

// TestTornPackTail: a writer killed in the middle of a record leaves a
// torn tail; the next Open that may write sets it aside (in corrupt/) and
// cuts it off, and writes the pack's index; the records before it are
// whole; only the record that was torn is missing.
func TestTornPackTail(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".thv")
	s, err := Open(dir, Create)
	if err != nil {
		t.Fatal(err)
	}
	var ds []Digest
	for i := range 5 {
		d, _ := s.Put([]byte(fmt.Sprintf("record %d of a writer that is killed", i)))
		ds = append(ds, d)
	}
	p := onlyPack(t, s)
	fi, _ := os.Stat(p)
	whole := fi.Size()
	// The last record half written, and the writer gone (its lock with it).
	last, _ := s.Put(bytes.Repeat([]byte("the record being written "), 10))
	fi, _ = os.Stat(p)
	if err := os.Truncate(p, whole+(fi.Size()-whole)/2); err != nil {
		t.Fatal(err)
	}
	s.pw.f.Close()
	s.dur.marker.Close()

	r, err := Open(dir, Create)
	if err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(p); fi.Size() != whole {
		t.Fatalf("pack of %d bytes after the repair, want %d", fi.Size(), whole)
	}
	corrupt := listFiles(t, filepath.Join(dir, "corrupt"))
	if len(corrupt) != 1 || !strings.HasPrefix(corrupt[0], "pack-tail-") {
		t.Fatalf("corrupt/ = %v, want the torn tail", corrupt)
	}
	if _, err := os.Stat(strings.TrimSuffix(p, packExt) + idxExt); err != nil {
		t.Fatal("no index written for the repaired pack")
	}
	for _, d := range ds {
		if err := r.Verify(d); err != nil {
			t.Fatal(err)
		}
	}
	if r.Has(last) {
		t.Fatal("the torn record is served")
	}
	if rep, err := r.Check(context.Background(), 2, nil); err != nil || len(rep.Problems) != 0 {
		t.Fatalf("check: %v %v", rep.Problems, err)
	}
}

// TestPackGC: GC rewrites the packs that hold anything it does not keep,
// keeping each kept object once, dropping killed records and replaced
// entries, and removes them; the store checks clean and holds only what
// is kept.
func TestPackGC(t *testing.T) {
	s := openTemp(t)
	keep := map[Digest]bool{}
	var gone []Digest
	for i := range 20 {
		d, err := s.Put([]byte(fmt.Sprintf("object %d", i)))
		if err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			keep[d] = true
		} else {
			gone = append(gone, d)
		}
	}
	k := Key(sha256.Sum256([]byte("kept task")))
	var kd Digest
	for d := range keep {
		kd = d
		break
	}
	e := Entry{Key: k, Kind: "k", Outputs: []Output{{Name: "o", Digest: kd, Size: int64(len("object 0"))}}}
	if _, err := s.Get(kd); err != nil {
		t.Fatal(err)
	}
	data, _ := s.Get(kd)
	e.Outputs[0].Size = int64(len(data))
	if err := s.PutEntry(e); err != nil {
		t.Fatal(err)
	}
	e2 := e
	e2.Meta = map[string]string{"again": "yes"}
	if err := s.PutEntry(e2); err != nil { // replaces e: a kill and a dead entry
		t.Fatal(err)
	}
	// A second writer, another pack.
	s2, _ := Open(s.Root(), Create)
	s2.noAdopt = true
	extra, _ := s2.Put([]byte("in the second pack"))
	keep[extra] = true
	s.Sync()
	s2.Sync()
	s2.pwMu.Lock()
	s2.dropPackWriter()
	s2.pwMu.Unlock()

	dry, err := s.GCDryRun(keep, map[Key]bool{k: true})
	if err != nil {
		t.Fatal(err)
	}
	st, err := s.GC(keep, map[Key]bool{k: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("dry run %v; gc %v", dry, st)
	if st.ObjectsKept != len(keep) || st.ObjectsRemoved != len(gone) || st.EntriesKept != 1 || st.PacksWritten != 1 || st.PacksRemoved != 2 || st.BytesFreed <= 0 {
		t.Fatalf("GC = %+v", st)
	}
	if dry.ObjectsKept != st.ObjectsKept || dry.ObjectsRemoved != st.ObjectsRemoved || dry.PacksRemoved != st.PacksRemoved {
		t.Fatalf("the dry run said %+v", dry)
	}
	if n := len(packFiles(t, s)); n != 2 {
		t.Fatalf("packs/ holds %v after GC, want one pack and its index", packFiles(t, s))
	}
	r, _ := Open(s.Root(), Existing)
	for d := range keep {
		if err := r.Verify(d); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range gone {
		if r.Has(d) {
			t.Fatalf("%v survived GC", d)
		}
	}
	if got, ok, err := r.GetEntry(k); !ok || err != nil || got.Meta["again"] != "yes" {
		t.Fatalf("the kept entry: %+v %v %v", got, ok, err)
	}
	var entries, kills int
	for _, pf := range r.view().packs {
		pf.idx.all(func(r packRec) {
			if r.typ == recEntry {
				entries++
			}
		})
		kills += len(pf.kills)
	}
	if entries != 1 || kills != 0 {
		t.Fatalf("after GC: %d entry records, %d kills; want 1 and 0", entries, kills)
	}
	if rep, err := r.Check(context.Background(), 2, nil); err != nil || len(rep.Problems) != 0 {
		t.Fatalf("check: %v %v", rep.Problems, err)
	}
	// Nothing more to do: a second GC rewrites nothing.
	if st, err := s.GC(keep, map[Key]bool{k: true}); err != nil || st.PacksRemoved != 0 || st.PacksWritten != 0 {
		t.Fatalf("a second GC: %+v %v", st, err)
	}
}

// TestGCLeavesHeldPacks: a pack a writer holds (another handle, another
// process) is not rewritten nor removed by GC.
func TestGCLeavesHeldPacks(t *testing.T) {
	s := openTemp(t)
	s2, _ := Open(s.Root(), Create)
	held, _ := s2.Put([]byte("a pack its writer holds"))
	st, err := s.GC(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if st.PacksRemoved != 0 || !s2.Has(held) {
		t.Fatalf("GC rewrote a held pack: %+v", st)
	}
	if err := s2.Verify(held); err != nil {
		t.Fatal(err)
	}
}

// TestLooseStoreMigrates: a store of the loose layout (version 1) is read
// as it is; the first Open that writes makes it version 2; GC packs its
// small loose objects and entries, and every one reads back the same.
func TestLooseStoreMigrates(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".thv")
	var objs []Digest
	var keys []Key
	func() {
		setLooseForTest(t)
		s, err := Open(dir, Create)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 30 {
			d, _ := s.Put([]byte(fmt.Sprintf("old object %d", i)))
			objs = append(objs, d)
			k := Key(sha256.Sum256([]byte{byte(i)}))
			if err := s.PutEntry(Entry{Key: k, Kind: "old", Outputs: []Output{{Name: "o", Digest: d, Size: int64(len(fmt.Sprintf("old object %d", i)))}}}); err != nil {
				t.Fatal(err)
			}
			keys = append(keys, k)
		}
		os.Chmod(filepath.Join(dir, "VERSION"), 0o644)
		os.WriteFile(filepath.Join(dir, "VERSION"), []byte(looseLayoutVersion+"\n"), 0o444)
		os.RemoveAll(filepath.Join(dir, "packs"))
		looseLimit, packEntries = 1<<20, true
	}()
	ro, err := Open(dir, Existing)
	if err != nil {
		t.Fatal(err)
	}
	if err := ro.Verify(objs[3]); err != nil {
		t.Fatal(err)
	}
	if v, _ := os.ReadFile(filepath.Join(dir, "VERSION")); string(v) != looseLayoutVersion+"\n" {
		t.Fatalf("a read-only open changed VERSION to %q", v)
	}
	s, err := Open(dir, Create)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := os.ReadFile(filepath.Join(dir, "VERSION")); string(v) != looseLayoutVersion+"\n" {
		t.Fatalf("VERSION after a writing open that packed nothing: %q", v)
	}
	keep, keepKeys := map[Digest]bool{}, map[Key]bool{}
	for i := range objs {
		keep[objs[i]], keepKeys[keys[i]] = true, true
	}
	st, err := s.GC(keep, keepKeys)
	if err != nil {
		t.Fatal(err)
	}
	t.Log(st)
	if v, _ := os.ReadFile(filepath.Join(dir, "VERSION")); string(v) != layoutVersion+"\n" {
		t.Fatalf("VERSION after the first pack was made: %q", v)
	}
	if n := len(listFiles(t, filepath.Join(dir, "objects"))) + len(listFiles(t, filepath.Join(dir, "index"))); n != 0 {
		t.Fatalf("%d loose files left after GC", n)
	}
	if st.ObjectsKept != len(objs) || st.EntriesKept != len(keys) || st.ObjectsRemoved+st.EntriesRemoved != 0 {
		t.Fatalf("GC = %+v", st)
	}
	r, _ := Open(dir, Existing)
	for i := range objs {
		e, ok, err := r.GetEntry(keys[i])
		if !ok || err != nil || e.Outputs[0].Digest != objs[i] {
			t.Fatalf("entry %d after the migration: %v %v", i, ok, err)
		}
		if err := r.Verify(objs[i]); err != nil {
			t.Fatal(err)
		}
	}
}

// TestPackStamps: the packs' stamp holds while nothing is appended to a
// pack and no pack appears or goes; HasAllSince then does not look the
// objects up (shown by an object never put being taken as present), and
// sees a removal (a kill) once the stamp changed.
func TestPackStamps(t *testing.T) {
	s := openTemp(t)
	ds := putObjects(t, s, 40, 'p')
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	setForTest(t, &stampMargin, 0)
	time.Sleep(20 * time.Millisecond)
	st, err := s.StampDirs()
	if err != nil {
		t.Fatal(err)
	}
	if !s.HasAll(ds) {
		t.Fatal("not all present")
	}
	ghost := ds[0]
	ghost[31] ^= 1
	if s.HasAll([]Digest{ghost}) {
		t.Fatal("HasAll finds an object never put")
	}
	if !s.HasAllSince([]Digest{ghost}, st) {
		t.Fatal("the objects were looked up although the stamps hold")
	}
	// A reader (another handle) changes nothing.
	r, _ := Open(s.Root(), Existing)
	r.Get(ds[1])
	if !s.HasAllSince([]Digest{ghost}, st) {
		t.Fatal("reading changed the stamps")
	}
	if err := s.Remove(ds[3]); err != nil {
		t.Fatal(err)
	}
	if s.HasAllSince(ds, st) {
		t.Fatal("a removed object is taken as present")
	}
	ok, renewed := s.HasAllRestamp(ds[4:], st)
	if !ok || renewed.Packs == st.Packs || renewed.Packs != s.stampPacks() {
		t.Fatalf("HasAllRestamp: %v, packs' stamp not renewed", ok)
	}
	ghost = ds[4] // in a directory the renewal stamped
	ghost[31] ^= 1
	if !s.HasAllSince([]Digest{ghost}, renewed) {
		t.Fatal("the renewed stamps do not hold")
	}
	// A new pack (another writer) changes the stamp.
	s2, _ := Open(s.Root(), Create)
	s2.noAdopt = true
	s2.Put([]byte("elsewhere"))
	if s.HasAllSince([]Digest{ghost}, renewed) {
		t.Fatal("a new pack left the stamp as it was")
	}
}

// TestLazyIndexFind: a lazily read index finds what the whole one finds,
// for ids present (some several times, of both types) and absent, in
// indexes of a few records to tens of thousands.
func TestLazyIndexFind(t *testing.T) {
	for _, n := range []int{0, 1, 5, 40, 600, 30000} {
		name := newPackName()
		var recs []packRec
		for i := range n {
			id := sha256.Sum256([]byte(fmt.Sprint(n, i)))
			recs = append(recs, packRec{id: id, off: int64(packHeaderSize + 100*i), stored: 10, size: 10, typ: recObject})
			if i%7 == 0 { // a second copy, and an entry of the same id
				recs = append(recs, packRec{id: id, off: int64(packHeaderSize + 100*i + 50), stored: 10, size: 10, typ: recObject})
				recs = append(recs, packRec{id: id, off: int64(packHeaderSize + 100*i + 60), stored: 10, size: 10, typ: recEntry})
			}
		}
		covered := int64(packHeaderSize + 100*n + 100)
		b := encodeIdx(name, covered, recs, nil)
		whole, err := parseIdx(b, name, covered)
		if err != nil {
			t.Fatal(err)
		}
		lazy, err := readIdxLazy(bytes.NewReader(b), name, covered, int64(len(b)))
		if err != nil {
			t.Fatal(err)
		}
		if n > 0 && !lazy.lazy() {
			t.Fatal("not lazy")
		}
		probe := func(id [32]byte) {
			for _, typ := range []byte{recObject, recEntry} {
				w := whole.find(&id, typ, nil)
				l := lazy.find(&id, typ, nil)
				if !slices.Equal(w, l) {
					t.Fatalf("n=%d id %x type %c: whole finds %v, lazy %v", n, id[:4], typ, w, l)
				}
			}
		}
		for i := range n {
			probe(sha256.Sum256([]byte(fmt.Sprint(n, i))))
			probe(sha256.Sum256([]byte(fmt.Sprint("absent", n, i))))
		}
		probe([32]byte{})
		probe([32]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
		if n > 0 {
			again, err := lazy.loadWhole(name, covered)
			if err != nil || again.lazy() || again.n != whole.n {
				t.Fatalf("loadWhole: %v", err)
			}
		}
	}
}

// readCounter counts the reads made through it.
type readCounter struct {
	r     io.ReaderAt
	reads int
}

func (c *readCounter) ReadAt(b []byte, off int64) (int, error) {
	c.reads++
	return c.r.ReadAt(b, off)
}

// TestLazyIndexFindReads: a lookup in a lazily read index of a pack as
// large as the paper's takes one read of its file nearly always (the
// first window read holds the id's place), whether the id is there or not.
func TestLazyIndexFindReads(t *testing.T) {
	const n, probes = 200000, 2000
	name := newPackName()
	recs := make([]packRec, n)
	for i := range recs {
		recs[i] = packRec{id: sha256.Sum256([]byte(fmt.Sprint(i))), off: int64(packHeaderSize + 100*i), stored: 10, size: 10, typ: recObject}
	}
	covered := int64(packHeaderSize + 100*n)
	b := encodeIdx(name, covered, recs, nil)
	file := &readCounter{r: bytes.NewReader(b)}
	lazy, err := readIdxLazy(file, name, covered, int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	for _, present := range []bool{true, false} {
		file.reads = 0
		for i := range probes {
			id := sha256.Sum256([]byte(fmt.Sprint(i * (n / probes))))
			if !present {
				id = sha256.Sum256([]byte(fmt.Sprint("absent", i)))
			}
			if got := len(lazy.find(&id, recObject, nil)); got != map[bool]int{true: 1, false: 0}[present] {
				t.Fatalf("present %v: %d records found", present, got)
			}
		}
		if mean := float64(file.reads) / probes; mean > 1.1 {
			t.Errorf("present %v: %.2f reads per lookup, want at most 1.1", present, mean)
		}
	}
}

// TestGetLooksUpPacksInOrder: reading an object looks the packs up in the
// order of their names and stops at the first that holds a good copy: the
// indexes of the packs after it are not read.
func TestGetLooksUpPacksInOrder(t *testing.T) {
	s := openTemp(t)
	var ds []Digest
	for i := range 3 {
		w, err := Open(s.Root(), Existing)
		if err != nil {
			t.Fatal(err)
		}
		w.noAdopt = true // a pack of its own
		d, err := w.Put([]byte(fmt.Sprint("object ", i)))
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Sync(); err != nil {
			t.Fatal(err)
		}
		ds = append(ds, d)
	}
	r, err := Open(s.Root(), Existing)
	if err != nil {
		t.Fatal(err)
	}
	packs := r.view().packsInOrder(false)
	if len(packs) != 3 {
		t.Fatalf("%d packs, want 3", len(packs))
	}
	for _, pf := range packs {
		if pf.idx == nil || !pf.idx.lazy() {
			t.Fatal("a pack's index is not read lazily")
		}
	}
	// The object of the first pack by name.
	first := -1
	for i, d := range ds {
		if len(r.view().findIn(packs[0], d, recObject, false)) > 0 {
			first = i
		}
	}
	packs[0].idx.lookups.Store(0)
	if _, err := r.Get(ds[first]); err != nil {
		t.Fatal(err)
	}
	for _, pf := range packs[1:] {
		if n := pf.idx.lookups.Load(); n != 0 {
			t.Errorf("pack %x looked up %d times after the first pack had the object", pf.name, n)
		}
	}
}

// TestPacksDirRemoved: a handle keeps packs/ open between looks; packs/
// removed and made again (by hand: a store emptied under a running
// process) is opened again, and the packs written since are seen.
func TestPacksDirRemoved(t *testing.T) {
	s := openTemp(t)
	d1, err := s.Put([]byte("first"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	reader, err := Open(s.Root(), Existing)
	if err != nil {
		t.Fatal(err)
	}
	if !reader.Has(d1) {
		t.Fatal("the reader does not see the first object")
	}
	if err := os.RemoveAll(filepath.Join(s.Root(), "packs")); err != nil {
		t.Fatal(err)
	}
	writer, err := Open(s.Root(), Existing)
	if err != nil {
		t.Fatal(err)
	}
	d2, err := writer.Put([]byte("second"))
	if err != nil {
		t.Fatal(err)
	}
	if err := writer.Sync(); err != nil {
		t.Fatal(err)
	}
	if !reader.Has(d2) {
		t.Fatal("the reader does not see the pack written into the new packs/")
	}
	if got, err := reader.Get(d2); err != nil || string(got) != "second" {
		t.Fatalf("Get = %q, %v", got, err)
	}
}
