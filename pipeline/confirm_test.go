package pipeline

import (
	"crypto/sha256"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"thv/artifacts"
	"thv/artifacts/storetest"
)

// TestImportOutputsFromHostileScratch: a worker's scratch store arranged
// against the host (corrupt/ a link to a host directory and a corrupted
// object, so that quarantine would move the worker's files there) makes ImportOutputs fail with an error naming the
// file, and nothing outside the scratch store, nor in it, is created,
// moved or removed; the project store gets neither the object nor the
// entry. A link to a host file whose bytes verify is refused too.
func TestImportOutputsFromHostileScratch(t *testing.T) {
	data := []byte("worker output\n")
	d := artifacts.Sum(data)
	key := artifacts.Key(sha256.Sum256([]byte("task")))
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, scratch *artifacts.Store, host string)
		want   string
	}{
		{"intact", func(*testing.T, *artifacts.Store, string) {}, ""},
		{"corrupt object, corrupt/ linked to the host", func(t *testing.T, s *artifacts.Store, host string) {
			p := s.ObjectPath(d)
			os.Chmod(p, 0o644)
			if err := os.WriteFile(p, []byte("worker-chosen bytes\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			storetest.Symlink(t, host, filepath.Join(s.Root(), "corrupt"))
		}, "left in place: a scratch store is never quarantined into"},
		{"corrupt object", func(t *testing.T, s *artifacts.Store, host string) {
			p := s.ObjectPath(d)
			os.Chmod(p, 0o644)
			os.WriteFile(p, []byte("worker-chosen bytes\n"), 0o644)
		}, "left in place: a scratch store is never quarantined into"},
		{"corrupt entry, corrupt/ linked to the host", func(t *testing.T, s *artifacts.Store, host string) {
			p := filepath.Join(s.Root(), "index", key.Hex()[:2], key.Hex()+".json")
			os.Remove(p)
			os.WriteFile(p, []byte("{}"), 0o644)
			storetest.Symlink(t, host, filepath.Join(s.Root(), "corrupt"))
		}, "left in place: a scratch store is never quarantined into"},
		{"fan-out linked to a host directory whose file verifies", func(t *testing.T, s *artifacts.Store, host string) {
			if err := os.WriteFile(filepath.Join(host, d.Hex()), data, 0o644); err != nil {
				t.Fatal(err)
			}
			storetest.Symlink(t, host, filepath.Dir(s.ObjectPath(d)))
		}, "is a symbolic link, which the store never follows"},
		{"object linked to a host file that verifies", func(t *testing.T, s *artifacts.Store, host string) {
			if err := os.WriteFile(filepath.Join(host, "copy"), data, 0o644); err != nil {
				t.Fatal(err)
			}
			storetest.Symlink(t, filepath.Join(host, "copy"), s.ObjectPath(d))
		}, "a symbolic link, not a regular file (left in place"},
		{"objects/ linked to the host", func(t *testing.T, s *artifacts.Store, host string) {
			os.MkdirAll(filepath.Join(host, d.Hex()[:2]), 0o777)
			os.WriteFile(filepath.Join(host, d.Hex()[:2], d.Hex()), data, 0o644)
			storetest.Symlink(t, host, filepath.Join(s.Root(), "objects"))
		}, "is a symbolic link, which the store never follows"},
		{"index fan-out linked to the host", func(t *testing.T, s *artifacts.Store, host string) {
			p := filepath.Join(s.Root(), "index", key.Hex()[:2])
			b, _ := os.ReadFile(filepath.Join(p, key.Hex()+".json"))
			os.WriteFile(filepath.Join(host, key.Hex()+".json"), b, 0o644)
			storetest.Symlink(t, host, p)
		}, "is a symbolic link, which the store never follows"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			scratch, err := artifacts.Open(filepath.Join(t.TempDir(), "out"), artifacts.Scratch)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := scratch.Put(data); err != nil {
				t.Fatal(err)
			}
			e := artifacts.Entry{Key: key, Kind: "gen", Outputs: []artifacts.Output{{Name: "x", Digest: d, Size: int64(len(data))}}}
			if err := scratch.PutEntry(e); err != nil {
				t.Fatal(err)
			}
			host := t.TempDir()
			os.WriteFile(filepath.Join(host, "victim"), []byte("host file"), 0o600)
			tc.damage(t, scratch, host)
			dst, err := artifacts.Open(filepath.Join(t.TempDir(), ".thv"), artifacts.Create)
			if err != nil {
				t.Fatal(err)
			}
			hostBefore, scratchBefore := storetest.Tree(t, host), storetest.Tree(t, scratch.Root())

			err = ImportOutputs(dst, scratch, key, "gen", map[string]artifacts.Digest{"x": d})
			if tc.want == "" {
				if err != nil {
					t.Fatalf("ImportOutputs of an intact scratch store: %v", err)
				}
				if b, err := dst.Get(d); err != nil || string(b) != string(data) {
					t.Errorf("imported object: %q, %v", b, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("ImportOutputs = %v, want an error saying %q", err, tc.want)
			}
			if after := storetest.Tree(t, host); !slices.Equal(hostBefore, after) {
				t.Errorf("the import changed the host directory:\nbefore %q\nafter  %q", hostBefore, after)
			}
			if after := storetest.Tree(t, scratch.Root()); !slices.Equal(scratchBefore, after) {
				t.Errorf("the import changed the scratch store:\nbefore %q\nafter  %q", scratchBefore, after)
			}
			if _, ok, err := dst.GetEntry(key); ok || err != nil {
				t.Errorf("the project store got the entry: %v, %v", ok, err)
			}
			if dst.Has(d) && tc.name != "corrupt entry, corrupt/ linked to the host" {
				t.Error("the project store got the object")
			}
		})
	}
}
