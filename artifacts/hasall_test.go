package artifacts

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestHasAll: HasAll agrees with Has on every object, whatever replaced a
// file or a fan-out directory; links are never followed. On Linux, both
// when it reads fan-out directories whole and when it looks names up.
func TestHasAll(t *testing.T) {
	setLooseForTest(t) // the loose layout: pack_test.go tests packs
	for _, factor := range []int64{0, 1 << 40} {
		t.Run(fmt.Sprintf("factor=%d", factor), func(t *testing.T) {
			setHasAllListFactor(t, factor)
			testHasAll(t)
		})
	}
}

func testHasAll(t *testing.T) {
	s := openTemp(t)
	var ds []Digest
	for i := range 600 { // enough to fill many fan-out directories
		d, err := s.Put([]byte{byte(i), byte(i >> 8), 'x'})
		if err != nil {
			t.Fatal(err)
		}
		ds = append(ds, d)
	}
	if !s.HasAll(ds) || !s.HasAll(nil) || !s.HasAll(append(ds, ds[0])) {
		t.Fatal("HasAll: a present object reported missing")
	}
	absent := Sum([]byte("never stored"))
	if s.HasAll(append(ds[:10:10], absent)) {
		t.Fatal("HasAll: an absent object reported present")
	}
	outside := t.TempDir()
	for _, tc := range []struct {
		name   string
		damage func(d Digest)
	}{
		{"removed", func(d Digest) { os.Remove(s.ObjectPath(d)) }},
		{"a directory", func(d Digest) {
			os.Remove(s.ObjectPath(d))
			os.Mkdir(s.ObjectPath(d), 0o755)
		}},
		{"a link to an intact copy", func(d Digest) {
			b, _ := os.ReadFile(s.ObjectPath(d))
			copyPath := filepath.Join(outside, d.Hex())
			os.WriteFile(copyPath, b, 0o444)
			os.Remove(s.ObjectPath(d))
			if err := os.Symlink(copyPath, s.ObjectPath(d)); err != nil {
				t.Fatal(err)
			}
		}},
		{"its fan-out directory a link", func(d Digest) {
			dir := filepath.Dir(s.ObjectPath(d))
			copyDir := filepath.Join(outside, "fan-"+d.Hex()[:2])
			if err := os.Rename(dir, copyDir); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(copyDir, dir); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := ds[0]
			ds = ds[1:]
			tc.damage(d)
			if s.Has(d) {
				t.Fatal("Has reports the damaged object present")
			}
			if s.HasAll(append([]Digest{ds[0]}, d)) {
				t.Fatal("HasAll reports the damaged object present")
			}
			// The other objects of its fan-out directory, and the rest,
			// still agree with Has.
			var others []Digest
			for _, o := range ds {
				if s.Has(o) {
					others = append(others, o)
				}
			}
			if !s.HasAll(others) {
				t.Fatal("HasAll: the objects Has finds reported missing")
			}
		})
	}
}

// TestVerifyAll: VerifyAll holds exactly when Verify holds for each
// object, and sets a corrupt one aside as Verify does.
func TestVerifyAll(t *testing.T) {
	setLooseForTest(t) // the loose layout: pack_test.go tests packs
	s := openTemp(t)
	ds := putObjects(t, s, 5, 'v')
	if !s.VerifyAll(ds) || !s.VerifyAll(nil) {
		t.Fatal("VerifyAll: intact objects refused")
	}
	if s.VerifyAll(append(ds[:2:2], Sum([]byte("never stored")))) {
		t.Fatal("VerifyAll: an absent object accepted")
	}
	path := s.ObjectPath(ds[3])
	os.Chmod(path, 0o644)
	if err := os.WriteFile(path, []byte("garbled"), 0o444); err != nil {
		t.Fatal(err)
	}
	if s.VerifyAll(ds) {
		t.Fatal("VerifyAll: a corrupt object accepted")
	}
	if s.Has(ds[3]) {
		t.Fatal("the corrupt object was not set aside")
	}
}
