package bundle

import (
	"bytes"
	"context"
	"crypto/sha256"
	"os"
	"path/filepath"
	"testing"
)

// TestArchiveIsDeterministic: the same items in any order give the same
// bytes, with the manifest first, and Extract reads them back.
func TestArchiveIsDeterministic(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, order []int) []byte {
		files := []struct{ path, data string }{{"b/z", "zz"}, {"a", "aa"}, {"store/objects/00/00", "obj"}}
		b := &builder{}
		m := Manifest{}
		for _, i := range order {
			f := files[i]
			if err := b.addData(f.path, []byte(f.data), 0o644); err != nil {
				t.Fatal(err)
			}
			m[f.path] = sha256.Sum256([]byte(f.data))
		}
		b.addData(ManifestName, m.Encode(), 0o644)
		out := filepath.Join(dir, name)
		if _, _, err := b.writeArchive(context.Background(), out, nil); err != nil {
			t.Fatal(err)
		}
		data, _ := os.ReadFile(out)
		return data
	}
	x, y := write("x.tar.gz", []int{0, 1, 2}), write("y.tar.gz", []int{2, 1, 0})
	if !bytes.Equal(x, y) {
		t.Fatal("the same files in another order gave other bytes")
	}
	if _, err := Extract(bytes.NewReader(x), filepath.Join(dir, "out"), Limits{}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "out", "b", "z")); string(b) != "zz" {
		t.Fatalf("read back %q", b)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 3 {
		t.Fatalf("temp files left: %v", ents)
	}
}
