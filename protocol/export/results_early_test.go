package export

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"thv/artifacts/damage"
	"thv/pipeline"
	"thv/protocol"
	"thv/protocol/config"
)

// tinyEarly is tiny opened as thv repro opens it: results/ read while the
// lock is parsed.
func tinyEarly(t *testing.T, dir string) *Project {
	t.Helper()
	p, err := Open(protocol.Options{
		LoadOptions:    config.LoadOptions{ParamsFile: "../testdata/tiny.yaml"},
		Dir:            dir,
		StoreDir:       filepath.Join(dir, "store"),
		EarlyNoopCheck: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.DropNoopCheck)
	if p.seen == nil {
		t.Fatal("results/ is not read early")
	}
	return p
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

// TestExportJudgesResultsSeenEarly: after a pass that executed nothing,
// the export judges results/ on what was read early; a table and a PNG
// edited before the pass are found edited and restored, nothing else is
// written.
func TestExportJudgesResultsSeenEarly(t *testing.T) {
	dir := t.TempDir()
	repro(t, tiny(t, dir, nil), pipeline.Options{})
	table := editResult(t, dir, filepath.Join("tables", "all.tex"))
	drawn := editResult(t, dir, filepath.Join("figures", "d2.png"))
	p := tinyEarly(t, dir)
	rep := repro(t, p, pipeline.Options{})
	if rep.Executed != 0 {
		t.Fatalf("%d executed, want 0", rep.Executed)
	}
	if p.seen != nil {
		t.Error("what was seen early is kept after the export")
	}
	requireResult(t, dir, filepath.Join("tables", "all.tex"), table)
	requireResult(t, dir, filepath.Join("figures", "d2.png"), drawn)
	p = tinyEarly(t, dir)
	if written, err := p.ExportResults(repro(t, p, pipeline.Options{})); err != nil || len(written) != 0 {
		t.Errorf("an export after the restoring one wrote %v (%v)", written, err)
	}
}

// TestExportAfterWorkRereadsResults: after a pass that executed a task,
// what was seen before it is not used: a file edited after it was seen,
// during the pass, is found edited.
func TestExportAfterWorkRereadsResults(t *testing.T) {
	dir := t.TempDir()
	before := tiny(t, dir, nil)
	for _, r := range repro(t, before, pipeline.Options{}).Results {
		if r.Task.ID == "figures/d2" {
			pdf, _ := r.Outputs.Get("d2.pdf")
			damage.Remove(t, before.Store, pdf)
		}
	}
	p := tinyEarly(t, dir)
	p.seen.file("", "README.md") // wait until results/ has been read
	table := editResult(t, dir, filepath.Join("tables", "all.tex"))
	if rep := repro(t, p, pipeline.Options{}); rep.Executed == 0 {
		t.Fatal("nothing executed after an output was removed")
	}
	requireResult(t, dir, filepath.Join("tables", "all.tex"), table)
}
