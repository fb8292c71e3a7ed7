package bundle

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestManifestProtocol: the protocol file and the lock are found at the
// top of the bundle, one of each; files below the top do not count.
func TestManifestProtocol(t *testing.T) {
	m := func(paths ...string) Manifest {
		out := Manifest{}
		for _, p := range paths {
			out[p] = sha256.Sum256([]byte(p))
		}
		return out
	}
	for _, tc := range []struct {
		name         string
		m            Manifest
		params, lock string
		err          string
	}{
		{"paper", m("params.yaml", "thv.lock", "source/params.yaml", "store/x.lock", CrateName), "params.yaml", "thv.lock", ""},
		{"yml", m("quick.yml", "thv.quick.lock"), "quick.yml", "thv.quick.lock", ""},
		{"no lock", m("params.yaml", "source/thv.lock"), "", "", "this one 1 and 0"},
		{"two protocols", m("a.yaml", "b.yml", "thv.lock"), "", "", "this one 2 and 1"},
		{"empty", m(), "", "", "this one 0 and 0"},
	} {
		params, lock, err := tc.m.Protocol()
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: got %v, want an error containing %q", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil || params != tc.params || lock != tc.lock {
			t.Errorf("%s: got %q, %q, %v; want %q, %q", tc.name, params, lock, err, tc.params, tc.lock)
		}
	}
}

// TestCheckResults: the bundle's results/ must hold exactly the fresh
// export's files, each accepted by the comparison, whose notes are
// returned in path order.
func TestCheckResults(t *testing.T) {
	files := map[string]string{"README.md": "# Results", "tables/all.tex": "tex", "figures/d2.png": "png"}
	setup := func(t *testing.T, edit func(bundled map[string]string)) (dir, fresh string) {
		dir, fresh = t.TempDir(), t.TempDir()
		bundled := map[string]string{}
		for p, c := range files {
			bundled[p] = c
			write(t, filepath.Join(fresh, p), c)
		}
		edit(bundled)
		for p, c := range bundled {
			write(t, filepath.Join(dir, ResultsDir, p), c)
		}
		return dir, fresh
	}
	// same accepts equal bytes, and a PNG with a note.
	same := func(p string, a, b []byte) (string, error) {
		switch {
		case bytes.Equal(a, b):
			return "", nil
		case strings.HasSuffix(p, ".png"):
			return p + " drawn elsewhere", nil
		}
		return "", fmt.Errorf("%s differs", p)
	}
	for _, tc := range []struct {
		name  string
		edit  func(map[string]string)
		notes []string
		err   string
	}{
		{"same", func(map[string]string) {}, nil, ""},
		{"png drawn elsewhere", func(m map[string]string) { m["figures/d2.png"] = "other pixels" }, []string{"figures/d2.png drawn elsewhere"}, ""},
		{"differs", func(m map[string]string) { m["tables/all.tex"] = "forged" }, nil, "tables/all.tex differs"},
		{"missing", func(m map[string]string) { delete(m, "tables/all.tex") }, nil, "results/tables/all.tex is missing"},
		{"extra", func(m map[string]string) { m["tables/extra.tex"] = "x" }, nil, "results/tables/extra.tex is no output of the bundle's tasks"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, fresh := setup(t, tc.edit)
			notes, err := CheckResults(dir, fresh, same)
			if tc.err == "" {
				if err != nil || !slices.Equal(notes, tc.notes) {
					t.Errorf("got %q, %v; want %q", notes, err, tc.notes)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("got %v, want an error containing %q", err, tc.err)
			}
		})
	}
	// A bundle without results/ misses the first file.
	fresh := t.TempDir()
	write(t, filepath.Join(fresh, "README.md"), "x")
	if _, err := CheckResults(t.TempDir(), fresh, same); err == nil || !strings.Contains(err.Error(), "results/README.md is missing") {
		t.Errorf("no results/: got %v", err)
	}
}

func write(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
