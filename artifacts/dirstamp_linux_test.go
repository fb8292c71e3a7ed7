package artifacts

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// stampedStore returns a store holding objects in several fan-out
// directories, and their digests, with the directories' stamps taken once
// the file system's clock has moved past their last change (a margin of
// 0 trusts any change before the present tick).
func stampedStore(t *testing.T) (*Store, []Digest, *DirStamps) {
	s := openLoose(t)
	ds := putObjects(t, s, 40, 'x')
	setForTest(t, &stampMargin, 0)
	time.Sleep(20 * time.Millisecond) // a tick of the coarse clock that sets ctimes
	st, err := s.StampDirs()
	if err != nil {
		t.Fatal(err)
	}
	if !s.HasAll(ds) {
		t.Fatal("the objects just put are not all present")
	}
	for _, d := range ds {
		if st.Fanout[d[0]] == (DirStamp{}) {
			t.Fatalf("fan-out directory %02x has no stamp", d[0])
		}
	}
	return s, ds, st
}

// TestHasAllSinceSkipsUnchanged: a directory whose stamp is unchanged is
// not read. Shown by what the contract forbids: an object never put, in a
// stamped directory, is taken as present (HasAll, reading, says it is
// not).
func TestHasAllSinceSkipsUnchanged(t *testing.T) {
	setLooseForTest(t) // the loose layout: pack_test.go tests packs
	s, ds, st := stampedStore(t)
	if !s.HasAllSince(ds, st) {
		t.Fatal("HasAllSince: not all present")
	}
	ghost := ds[0]
	ghost[31] ^= 1 // same directory, never put
	if s.HasAll([]Digest{ghost}) {
		t.Fatal("HasAll finds an object never put")
	}
	if !s.HasAllSince([]Digest{ghost}, st) {
		t.Fatal("HasAllSince read a directory whose stamp is unchanged")
	}
	if !s.HasAllSince(ds, nil) || s.HasAllSince([]Digest{ghost}, nil) {
		t.Fatal("HasAllSince without stamps is not HasAll")
	}
}

// TestHasAllSinceSeesChanges: removing an object, or putting a link, a
// directory or another file under its name, changes its directory's stamp:
// the directory is read again and the object found missing. Touching the
// directory's times is a change too (read again, all present).
func TestHasAllSinceSeesChanges(t *testing.T) {
	setLooseForTest(t) // the loose layout: pack_test.go tests packs
	for _, c := range []struct {
		name    string
		change  func(path string) error
		present bool
	}{
		{"removed", os.Remove, false},
		{"link", func(p string) error {
			if err := os.Remove(p); err != nil {
				return err
			}
			return os.Symlink("elsewhere", p)
		}, false},
		{"directory", func(p string) error {
			if err := os.Remove(p); err != nil {
				return err
			}
			return os.Mkdir(p, 0o755)
		}, false},
		{"renamed over", func(p string) error {
			other := p + ".new"
			if err := os.WriteFile(other, []byte("other"), 0o444); err != nil {
				return err
			}
			return os.Rename(other, p) // a regular file again, but the directory changed
		}, true},
		{"times", func(p string) error {
			old := time.Unix(1e9, 0)
			return os.Chtimes(filepath.Dir(p), old, old)
		}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, ds, st := stampedStore(t)
			if err := c.change(s.ObjectPath(ds[3])); err != nil {
				t.Fatal(err)
			}
			if after, _ := s.StampDirs(); after.Fanout[ds[3][0]] == st.Fanout[ds[3][0]] {
				t.Fatal("the change left the directory's stamp as it was")
			}
			if got := s.HasAllSince(ds, st); got != c.present {
				t.Fatalf("HasAllSince after the change: %v, want %v", got, c.present)
			}
		})
	}
}

// TestStampDirsRacy: a directory changed within the margin of the file
// system's present time has no stamp; one older has; a missing one has
// absentStamp.
func TestStampDirsRacy(t *testing.T) {
	setLooseForTest(t) // the loose layout: pack_test.go tests packs
	s := openLoose(t)
	d, err := s.Put([]byte("recent"))
	if err != nil {
		t.Fatal(err)
	}
	st, err := s.StampDirs() // the default margin: seconds
	if err != nil {
		t.Fatal(err)
	}
	if st.Fanout[d[0]] != (DirStamp{}) {
		t.Fatalf("a directory changed just now has a stamp: %+v", st.Fanout[d[0]])
	}
	missing := d[0] + 1
	setForTest(t, &stampMargin, 0)
	time.Sleep(20 * time.Millisecond)
	if st, err = s.StampDirs(); err != nil {
		t.Fatal(err)
	}
	if st.Fanout[d[0]] == (DirStamp{}) {
		t.Fatal("a directory older than the margin has no stamp")
	}
	if _, err := os.Stat(filepath.Join(s.Root(), fanoutRel(missing))); err == nil {
		t.Fatalf("fan-out directory %02x exists in a store holding one object", missing)
	}
	if st.Fanout[missing] != absentStamp {
		t.Fatalf("a missing directory has the stamp %+v, not absentStamp", st.Fanout[missing])
	}
}

// TestHasAllRestamp: a check that reads a directory returns its stamp,
// which a later HasAllSince trusts (shown by an object never put being
// taken as present); a directory it did not read keeps since's stamp; a
// directory changed within the margin gets none; a missing object renews
// nothing.
func TestHasAllRestamp(t *testing.T) {
	setLooseForTest(t) // the loose layout: pack_test.go tests packs
	s := openLoose(t)
	ds := putObjects(t, s, 40, 'x')
	if ok, renewed := s.HasAllRestamp(ds, nil); !ok || renewed.Gained(&DirStamps{Packs: renewed.Packs}) {
		t.Fatalf("directories changed just now: ok %v, stamps %v", ok, renewed != nil)
	}
	setForTest(t, &stampMargin, 0)
	time.Sleep(20 * time.Millisecond)
	var since DirStamps
	other := ds[0][0] + 1
	for slices.ContainsFunc(ds, func(d Digest) bool { return d[0] == other }) {
		other++
	}
	since.Fanout[other] = DirStamp{Dev: 1, Ino: 2, Ctime: 3} // no object of ds there: not read, kept
	ok, renewed := s.HasAllRestamp(ds, &since)
	if !ok {
		t.Fatal("HasAllRestamp: not all present")
	}
	if renewed.Fanout[other] != since.Fanout[other] {
		t.Fatalf("the stamp of a directory not read was not kept: %+v", renewed.Fanout[other])
	}
	fresh, err := s.StampDirs()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range ds {
		if renewed.Fanout[d[0]] == (DirStamp{}) || renewed.Fanout[d[0]] != fresh.Fanout[d[0]] {
			t.Fatalf("directory %02x: renewed %+v, its stamp %+v", d[0], renewed.Fanout[d[0]], fresh.Fanout[d[0]])
		}
	}
	ghost := ds[0]
	ghost[31] ^= 1
	if !s.HasAllSince([]Digest{ghost}, renewed) {
		t.Fatal("HasAllSince read a directory whose renewed stamp is unchanged")
	}
	// Renewed again from renewed: nothing is read, nothing changes.
	if ok, again := s.HasAllRestamp(ds, renewed); !ok || *again != *renewed {
		t.Fatal("a check with every stamp current changed them")
	}
	if ok, none := s.HasAllRestamp(append([]Digest{ghost}, ds...), nil); ok || none != nil {
		t.Fatal("HasAllRestamp with an object missing")
	}
}
