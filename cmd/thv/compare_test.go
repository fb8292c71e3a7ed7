package main

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"thv/artifacts"
	"thv/stages/formats"
)

// quickLocal returns a directory holding a finished local repro of the
// quick profile (2,601 tasks), made once per test process.
func quickLocal(t *testing.T) (bin, dir string) {
	t.Helper()
	bin = buildThv(t, moduleRoot(t))
	quickOnce.Do(func() {
		d, err := os.MkdirTemp("", "thv-quick-")
		if err != nil {
			quickErr = err
			return
		}
		cmd := exec.Command(bin, "repro", "--profile", "quick", "-j", "2")
		cmd.Dir = d
		if out, err := cmd.CombinedOutput(); err != nil {
			quickErr = fmt.Errorf("thv repro --profile quick: %v\n%s", err, out)
		}
		quickDir = d
	})
	if quickErr != nil {
		t.Fatal(quickErr)
	}
	return bin, quickDir
}

var (
	quickOnce sync.Once
	quickDir  string
	quickErr  error
)

// TestCompareQuick: make repro's comparison on the quick profile writes
// results/compare.md and the Parquet tables; --fail-on decides the exit
// status; a reference built from our own results agrees everywhere, and
// one shifted beyond every tolerance differs everywhere.
func TestCompareQuick(t *testing.T) {
	bin, dir := quickLocal(t)
	report, err := os.ReadFile(filepath.Join(dir, "results", "compare.md"))
	if err != nil || !strings.Contains(string(report), "values agree") || !strings.Contains(string(report), "## Claims") {
		t.Fatalf("results/compare.md: %v\n%.500s", err, report)
	}
	for _, f := range []string{"comparison.parquet", "claims.parquet"} {
		if fi, err := os.Stat(filepath.Join(dir, "results", f)); err != nil || fi.Size() == 0 {
			t.Fatalf("results/%s: %v", f, err)
		}
	}
	out := thvOK(t, bin, dir, "compare", "--profile", "quick", "--fail-on", "none")
	if !strings.Contains(out, "published values agree") {
		t.Fatalf("thv compare --fail-on none:\n%s", out)
	}
	// The quick profile (3 seeds, T = 300) is not the paper's protocol:
	// values differ and claims fail, so both gates close.
	for _, gate := range []string{"cells", "claims"} {
		cmd := exec.Command(bin, "compare", "--profile", "quick", "--fail-on", gate)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "(--fail-on "+gate+")") {
			t.Fatalf("--fail-on %s on the quick profile: %v\n%s", gate, err, out)
		}
	}

	// A reference made of our own cells (d2, every algorithm), with CIs
	// of 0: every value agrees under (a), and the gate opens. Shifted
	// beyond our CI and 1% of the value, every value differs.
	cells := quickCells(t, bin, dir, "d2")
	off := func(e formats.Estimate, shifted bool) float64 {
		if !shifted {
			return e.Mean
		}
		return e.Mean + 2*e.HalfWidth + 0.1*math.Abs(e.Mean) + 1
	}
	for _, shifted := range []bool{false, true} {
		var y strings.Builder
		y.WriteString("source: our own quick run\ntolerance: {relative: 0.01, percentile: [0, 100], applies: ci}\ncells:\n")
		for _, c := range cells {
			fmt.Fprintf(&y, "  - {setting: d2, geometry: %s, algorithm: %s, hv_last100: {value: %v, ci: 0}, final_regret: {value: %v, ci: 0}}\n",
				c.Geometry, c.Algo, off(c.HVLast, shifted), off(c.RegretPos, shifted))
		}
		ref := filepath.Join(t.TempDir(), "ours.yaml")
		os.WriteFile(ref, []byte(y.String()), 0o644)
		cmd := exec.Command(bin, "compare", "--profile", "quick", "--reference", ref, "--fail-on", "cells")
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		want := fmt.Sprintf("%d of %d published values agree", 2*len(cells), 2*len(cells))
		if shifted {
			want = fmt.Sprintf("0 of %d published values agree", 2*len(cells))
		}
		if !strings.Contains(string(out), want) || (err == nil) == shifted {
			t.Fatalf("reference (shifted %v): %v, want %q:\n%s", shifted, err, want, out)
		}
	}
	// A malformed reference names its line.
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(bad, []byte("source: x\ntolerance: {relative: 0.05, percentile: [2.5, 97.5], applies: ci}\ncells:\n  - {setting: d2, geometry: linear, algorithm: Nope, hv_last100: {value: 1, ci: 0}}\n"), 0o644)
	cmd := exec.Command(bin, "compare", "--profile", "quick", "--reference", bad)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), `reference line 4: unknown algorithm "Nope"`) {
		t.Fatalf("malformed reference: %v\n%s", err, out)
	}
	// --markdown (for $GITHUB_STEP_SUMMARY) prints results/compare.md on
	// stdout, whole even when the gate closes.
	cmd = exec.Command(bin, "compare", "--profile", "quick", "--fail-on", "claims", "--markdown")
	cmd.Dir = dir
	md, err := cmd.Output()
	if err == nil || string(md) != string(report) {
		t.Fatalf("compare --markdown: %v; stdout is results/compare.md: %v", err, string(md) == string(report))
	}
}

// storeObject reads the object of digest d ("sha256:…") from the store
// .thv in dir.
func storeObject(t *testing.T, dir, d string) ([]byte, error) {
	t.Helper()
	st, err := artifacts.Open(filepath.Join(dir, ".thv"), artifacts.Existing)
	if err != nil {
		return nil, err
	}
	dig, err := artifacts.ParseDigest(d)
	if err != nil {
		return nil, err
	}
	return st.Get(dig)
}

// quickCells reads one setting's cells from the quick store.
func quickCells(t *testing.T, bin, dir, setting string) []formats.Cell {
	t.Helper()
	lock, err := os.ReadFile(filepath.Join(dir, "thv.quick.lock"))
	if err != nil {
		t.Fatal(err)
	}
	d := lockOutput(t, lock, "summarize/"+setting, "cells")
	b, err := storeObject(t, dir, d)
	if err != nil {
		t.Fatal(err)
	}
	cells, err := formats.DecodeCells(b)
	if err != nil || len(cells) == 0 {
		t.Fatalf("cells of %s: %v", setting, err)
	}
	return cells
}
