package protocol

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"thv/pipeline"
	"thv/stages/formats"
	"thv/stages/report"
)

// TestDiffersFromPaper: the paper's protocol differs from itself in
// nothing; the quick profile in exactly what params.yaml's profile sets;
// --set shows; where results go (outputs) is not a value of the protocol.
func TestDiffersFromPaper(t *testing.T) {
	paper, err := LoadConfig(LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d, err := paper.DiffersFromPaper(); err != nil || len(d) != 0 {
		t.Fatalf("the paper differs from itself: %v, %v", d, err)
	}
	quick, err := LoadConfig(LoadOptions{Profile: "quick", Set: []string{"algorithms.THV-UCB.params.delta=0.05", "outputs.results=elsewhere"}})
	if err != nil {
		t.Fatal(err)
	}
	d, err := quick.DiffersFromPaper()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, o := range d {
		got[o.Key] = o.Paper + " → " + o.Ours
	}
	want := map[string]string{
		"algorithms.THV-UCB.params.delta": "0 → 0.05",
		"grid_seeds":                      "[0 … 9] (10 values) → [0, 1, 2]",
		"seeds":                           "[0 … 9] (10 values) → [0, 1, 2]",
		"settings.d2.T":                   "2000 → 300", "settings.d3.T": "3000 → 300", "settings.d4.T": "5000 → 300", "settings.d5.T": "5000 → 300",
	}
	if len(got) != len(want) {
		t.Errorf("differences %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %q, want %q", k, got[k], v)
		}
	}
	if paper.ValuesDigest() == quick.ValuesDigest() {
		t.Error("the quick profile has the paper's digest")
	}
	again, _ := LoadConfig(LoadOptions{})
	again.Outputs.Results = "/tmp/elsewhere"
	if paper.ValuesDigest() != again.ValuesDigest() {
		t.Error("where results go changes the protocol's digest")
	}
}

// TestExportWritesThePage: the export writes results/index.html from the
// stored outputs; a second export writes nothing (its memo); an edit
// outside the run block is rewritten to the same bytes; another
// directory's export is the same page (SameResult); the run block follows
// Project.Run; a readings table left in results/ adds its summary.
func TestExportWritesThePage(t *testing.T) {
	dir := t.TempDir()
	p := tiny(t, dir, nil)
	p.Run = report.Run{Executor: "local", Thv: "thv test"}
	rep := repro(t, p, pipeline.Options{})
	path := filepath.Join(dir, "results", ReportName)
	page, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<h1>THV reproduction (profile paper): a modified protocol: ", `<p class="verdict"><strong>Verdict:</strong> A modified protocol: `, `id="plot"`, `id="regret-d2"`, `id="comparison"`, `<img src="figures/d2.png"`, `<td>local</td>`, "<!-- sources "} {
		if !bytes.Contains(page, []byte(want)) {
			t.Errorf("the page has no %q", want)
		}
	}
	if written, err := p.ExportResults(rep); err != nil || len(written) != 0 {
		t.Errorf("a second export wrote %v (%v)", written, err)
	}
	// thv report after thv repro: a run block with empty fields keeps the
	// page's, so the page is current, and stays so for the next repro;
	// another executor is another page.
	for _, run := range []struct {
		run     report.Run
		written int
	}{{report.Run{}, 0}, {report.Run{Executor: "local", Thv: "thv test"}, 0}, {report.Run{Executor: "process"}, 1}, {report.Run{Executor: "local", Thv: "thv test"}, 1}} {
		p.Run = run.run
		if written, err := p.ExportResults(rep); err != nil || len(written) != run.written {
			t.Errorf("run %+v: the export wrote %v (%v), want %d files", run.run, written, err, run.written)
		}
	}
	if again, _ := os.ReadFile(path); !bytes.Equal(again, page) {
		t.Error("the page of the same run block differs from the first")
	}
	edited := bytes.Replace(page, []byte(`<td class="n">0.`), []byte(`<td class="n">9.`), 1)
	os.WriteFile(path, edited, 0o644)
	if written, err := p.ExportResults(rep); err != nil || len(written) != 1 {
		t.Errorf("the export after an edit wrote %v (%v)", written, err)
	}
	if again, _ := os.ReadFile(path); !bytes.Equal(again, page) {
		t.Error("the rewritten page differs from the first")
	}

	other := t.TempDir()
	p.Config.Outputs.Results = other
	p.Run = report.Run{}
	if _, err := p.ExportResults(rep); err != nil {
		t.Fatal(err)
	}
	fresh, _ := os.ReadFile(filepath.Join(other, ReportName))
	if note, err := SameResult(ReportName, fresh, page); err != nil || !strings.Contains(note, `executor "local"`) {
		t.Errorf("SameResult of the two exports' pages: %q, %v", note, err)
	}
	if _, err := SameResult(ReportName, fresh, edited); err == nil {
		t.Error("SameResult accepts an edited page")
	}

	p.Run = report.Run{Executor: "process"}
	rows, err := formats.EncodeReadings([]formats.ReadingRow{{Reading: "default", Set: "", Values: 10, Agree: 7}})
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(other, "readings.parquet"), rows, 0o644)
	if written, err := p.ExportResults(rep); err != nil || len(written) != 1 {
		t.Fatalf("the export after thv readings wrote %v (%v)", written, err)
	}
	withReadings, _ := os.ReadFile(filepath.Join(other, ReportName))
	for _, want := range []string{`id="readings"`, `<th scope="row">default</th>`, `7/10`, `<td>process</td>`} {
		if !bytes.Contains(withReadings, []byte(want)) {
			t.Errorf("the page after thv readings has no %q", want)
		}
	}
}

// TestPageFromCertifiedPass: a pass that the no-op certificate serves
// (pipeline/noop.go: no plan, the results are the sealed lock's records,
// without dependencies) writes the same page as the full pass did: the
// tables' inputs are found by the digests the lock records.
func TestPageFromCertifiedPass(t *testing.T) {
	dir := t.TempDir()
	repro(t, tiny(t, dir, nil), pipeline.Options{}) // computes, seals
	repro(t, tiny(t, dir, nil), pipeline.Options{}) // a full pass of nothing: certifies
	path := filepath.Join(dir, "results", ReportName)
	page, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	p := tiny(t, dir, nil)
	rep := repro(t, p, pipeline.Options{})
	if p.Plan != nil {
		t.Fatal("the third pass was not served by the certificate (it built a plan): this test tests nothing")
	}
	for _, r := range rep.Results {
		if len(r.Task.Deps) != 0 {
			t.Fatalf("a certified pass's result %s has dependencies", r.Task.ID)
		}
	}
	again, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the certified pass wrote no page: %v", err)
	}
	if _, err := SameResult(ReportName, again, page); err != nil {
		t.Errorf("the certified pass's page is not the full pass's: %v", err)
	}
}
