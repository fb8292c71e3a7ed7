package artifacts

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDigestSet: the set holds exactly what it was built from, the zero
// digest and digests that collide on the bytes it indexes by included.
func TestDigestSet(t *testing.T) {
	var in, out []Digest
	for i := range 3000 {
		d := Sum(binary.LittleEndian.AppendUint32(nil, uint32(i)))
		if i%3 == 0 {
			out = append(out, d)
			continue
		}
		in = append(in, d)
	}
	// Same index bytes, other digests.
	a, b := in[0], in[0]
	a[0]++
	b[31]++
	in = append(in, a, Digest{}, in[1]) // in[1] twice
	out = append(out, b)
	s := NewDigestSet(in)
	if s.Len() != len(in)-1 {
		t.Fatalf("Len %d, want %d", s.Len(), len(in)-1)
	}
	for _, d := range in {
		if !s.Has(d) {
			t.Fatalf("%v: missing", d)
		}
	}
	for _, d := range out {
		if s.Has(d) {
			t.Fatalf("%v: present", d)
		}
	}
	if NewDigestSet(nil).Has(Digest{}) || (*DigestSet)(nil).Has(in[0]) {
		t.Fatal("an empty set holds something")
	}
}

// TestFindName: a directory's table finds a digest by its file name
// exactly when the name is that digest's 64 lowercase hex digits, also
// when another digest of the directory shares the bytes it indexes by.
func TestFindName(t *testing.T) {
	var ds []Digest
	for i := range 300 {
		d := Sum(binary.LittleEndian.AppendUint32(nil, uint32(i)))
		d[0] = 7 // one fan-out directory
		ds = append(ds, d)
	}
	twin := ds[5]
	twin[31]++ // same index bytes (8:16) as ds[5]
	ds = append(ds, twin, ds[9])
	absent := ds[6]
	absent[20]++
	dir := newDigestDir(ds)
	if len(dir.ds) != len(ds)-1 {
		t.Fatalf("%d digests kept, want %d (one repeat)", len(dir.ds), len(ds)-1)
	}
	for _, d := range ds {
		i, ok := dir.findName([]byte(d.Hex()))
		if !ok || dir.ds[i] != d {
			t.Fatalf("%s: not found (%d, %v)", d.Hex(), i, ok)
		}
	}
	name := ds[5].Hex()
	for _, bad := range []string{
		absent.Hex(),
		name[:63],
		name + "0",
		strings.ToUpper(name),
		name[:40] + "G" + name[41:], // outside the index digits
		name[:20] + "g" + name[21:], // inside them
		"",
	} {
		if i, ok := dir.findName([]byte(bad)); ok {
			t.Errorf("%q found as %s", bad, dir.ds[i].Hex())
		}
	}
	var empty digestDir
	if _, ok := empty.findName([]byte(name)); ok {
		t.Error("an empty table finds a name")
	}
}

// TestObjectSet: ObjectSet lists what Objects lists (regular files named
// by a digest; not links, directories or other names), whether or not the
// file system reports entry types.
func TestObjectSet(t *testing.T) {
	setLooseForTest(t) // the loose layout: pack_test.go tests packs
	s := openTemp(t)
	var ds []Digest
	for i := range 300 {
		d, err := s.Put([]byte{byte(i), byte(i >> 8), 's'})
		if err != nil {
			t.Fatal(err)
		}
		ds = append(ds, d)
	}
	// A link, a directory and a stray name among the objects.
	os.Remove(s.ObjectPath(ds[0]))
	if err := os.Symlink(s.ObjectPath(ds[1]), s.ObjectPath(ds[0])); err != nil {
		t.Fatal(err)
	}
	os.Remove(s.ObjectPath(ds[2]))
	if err := os.Mkdir(s.ObjectPath(ds[2]), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(filepath.Dir(s.ObjectPath(ds[3])), "stray"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// An object's file moved into another fan-out directory: not at its
	// path, so not present.
	misplaced := ds[4]
	other := filepath.Join(filepath.Dir(filepath.Dir(s.ObjectPath(misplaced))), fmt.Sprintf("%02x", misplaced[0]^1))
	os.MkdirAll(other, 0o755)
	if err := os.Rename(s.ObjectPath(misplaced), filepath.Join(other, misplaced.Hex())); err != nil {
		t.Fatal(err)
	}
	want, err := s.Objects()
	if err != nil {
		t.Fatal(err)
	}
	if len(want) != len(ds)-3 || want[ds[0]] || want[ds[2]] || want[misplaced] {
		t.Fatalf("Objects: %d objects", len(want))
	}
	oldBuf, oldTypes := hasAllBuf, hasAllNoTypes
	t.Cleanup(func() { hasAllBuf, hasAllNoTypes = oldBuf, oldTypes })
	for _, noTypes := range []bool{false, true} {
		hasAllNoTypes = noTypes
		if hasAllBuf > 0 {
			hasAllBuf = 200 // several getdents(2) calls per directory
		}
		got, err := s.ObjectSet()
		if err != nil {
			t.Fatal(err)
		}
		if got.Len() != len(want) || got.Has(misplaced) {
			t.Fatalf("noTypes %v: %d objects, want %d", noTypes, got.Len(), len(want))
		}
		for d := range want {
			if !got.Has(d) {
				t.Fatalf("noTypes %v: %v missing", noTypes, d)
			}
		}
	}
}
