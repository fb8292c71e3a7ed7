// Package damage damages a store's objects for tests, wherever they lie (a
// loose file, a record of a pack), as a failing disk, a forger or a user
// deleting files would: a test of what reads the store then shows that
// the damage is found and the object recomputed.
package damage

import (
	"os"
	"testing"

	"thv/artifacts"
)

// Flip changes one byte of the stored bytes of object d in st, in place:
// the object then fails verification when read.
func Flip(t testing.TB, st *artifacts.Store, d artifacts.Digest) {
	t.Helper()
	loc, ok := st.Locate(d)
	if !ok {
		t.Fatalf("flip a byte of %v: not in the store", d)
	}
	flip(t, loc)
}

// FlipEntry is Flip of the index entry for k: it then no longer decodes
// (or decodes to something else, which its key does not match).
func FlipEntry(t testing.TB, st *artifacts.Store, k artifacts.Key) {
	t.Helper()
	loc, ok := st.LocateEntry(k)
	if !ok {
		t.Fatalf("flip a byte of the entry %v: not in the store", k)
	}
	flip(t, loc)
}

func flip(t testing.TB, loc artifacts.Location) {
	t.Helper()
	f, err := os.OpenFile(loc.Path, os.O_RDWR, 0)
	if err != nil {
		if err := os.Chmod(loc.Path, 0o644); err != nil {
			t.Fatal(err)
		}
		defer os.Chmod(loc.Path, 0o444)
		if f, err = os.OpenFile(loc.Path, os.O_RDWR, 0); err != nil {
			t.Fatal(err)
		}
	}
	defer f.Close()
	at := loc.Offset + loc.Length/2
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, at); err != nil {
		t.Fatal(err)
	}
	b[0] ^= 0x20
	if _, err := f.WriteAt(b, at); err != nil {
		t.Fatal(err)
	}
}

// Remove makes object d absent from st (Store.Remove), as deleting its
// file did in a store of loose files.
func Remove(t testing.TB, st *artifacts.Store, d artifacts.Digest) {
	t.Helper()
	if err := st.Remove(d); err != nil {
		t.Fatal(err)
	}
}
