package export

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"thv/pipeline"
)

// TestNoopReproRestoresEditedResults: a pass that executes nothing still
// judges every file of results/: a table and a PNG edited since the last
// export are found edited and restored, and the export after that writes
// nothing.
func TestNoopReproRestoresEditedResults(t *testing.T) {
	dir := t.TempDir()
	repro(t, tiny(t, dir, nil), pipeline.Options{})
	table := editResult(t, dir, filepath.Join("tables", "all.tex"))
	drawn := editResult(t, dir, filepath.Join("figures", "d2.png"))
	p := tiny(t, dir, nil)
	if rep := repro(t, p, pipeline.Options{}); rep.Executed != 0 {
		t.Fatalf("%d executed, want 0", rep.Executed)
	}
	requireResult(t, dir, filepath.Join("tables", "all.tex"), table)
	requireResult(t, dir, filepath.Join("figures", "d2.png"), drawn)
	p = tiny(t, dir, nil)
	if written, err := p.ExportResults(repro(t, p, pipeline.Options{})); err != nil || len(written) != 0 {
		t.Errorf("an export after the restoring one wrote %v (%v)", written, err)
	}
}

// editResult flips a byte in the middle of results/<rel> and returns the
// file's bytes before.
func editResult(t *testing.T, dir, rel string) []byte {
	t.Helper()
	path := filepath.Join(dir, "results", rel)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	edited := bytes.Clone(b)
	edited[len(edited)/2] ^= 1
	if err := os.WriteFile(path, edited, 0o644); err != nil {
		t.Fatal(err)
	}
	return b
}

func requireResult(t *testing.T, dir, rel string, want []byte) {
	t.Helper()
	if got, _ := os.ReadFile(filepath.Join(dir, "results", rel)); !bytes.Equal(got, want) {
		t.Errorf("results/%s was not restored", rel)
	}
}
