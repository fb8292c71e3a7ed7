package main

import (
	"encoding/json"
	"errors"
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
	if err != nil || !strings.Contains(string(report), "## Claims") {
		t.Fatalf("results/compare.md: %v\n%.500s", err, report)
	}
	for _, f := range []string{"comparison.parquet", "claims.parquet"} {
		if fi, err := os.Stat(filepath.Join(dir, "results", f)); err != nil || fi.Size() == 0 {
			t.Fatalf("results/%s: %v", f, err)
		}
	}
	// The quick profile (3 seeds, T = 300) is not the paper's protocol,
	// and no published value (T = 2000–5000) is comparable with it: the
	// report names it and counts no agreement, and both gates say "not
	// checked" (3).
	for _, want := range []string{"**A modified protocol: grid\\_seeds 3 (paper 10), seeds 3 (paper 10), settings.d2.T 300 (paper 2000)",
		"224 of the 224 published values are not comparable with this protocol", "no agreement is counted", "| not comparable: T 300 vs 2000 |"} {
		if !strings.Contains(string(report), want) {
			t.Errorf("compare.md has no %q", want)
		}
	}
	if strings.Contains(string(report), "values agree") {
		t.Error("compare.md counts agreements of values that are not comparable")
	}
	out := thvOK(t, bin, dir, "compare", "--profile", "quick", "--fail-on", "none")
	if !strings.Contains(out, "protocol: a modified protocol: grid_seeds 3 (paper 10)") || !strings.Contains(out, "\nverdict: A modified protocol") || strings.Contains(out, "values agree") {
		t.Fatalf("thv compare --fail-on none:\n%s", out)
	}
	for _, gate := range []string{"values", "claims"} {
		cmd := exec.Command(bin, "compare", "--profile", "quick", "--fail-on", gate)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if code := exitCode(err); code != exitNotChecked || !strings.Contains(string(out), "(--fail-on "+gate+")") {
			t.Fatalf("--fail-on %s on the quick profile: exit %d, want %d (not checked)\n%s", gate, code, exitNotChecked, out)
		}
	}
	// --json, decoded.
	cmd := exec.Command(bin, "compare", "--profile", "quick", "--json")
	cmd.Dir = dir
	stdout, err := cmd.Output()
	var j compareJSON
	if jerr := json.Unmarshal(stdout, &j); jerr != nil || exitCode(err) != exitNotChecked {
		t.Fatalf("compare --json: exit %d, %v\n%s", exitCode(err), jerr, stdout)
	}
	if j.Protocol.Paper || len(j.Protocol.Differs) != 6 || len(j.Protocol.NotComparable) != 4 || j.Counts.Values != 224 || j.Counts.NotComparable != 224 ||
		j.Counts.Judged != 0 || j.Exit != exitNotChecked || len(j.Values) != 224 || j.Values[0].Verdict != "not comparable" || j.Values[0].Ours == nil ||
		len(j.Claims) != 3 || j.Claims[0].Verdict != "not judged" || !strings.HasPrefix(j.Verdict, "A modified protocol") {
		t.Errorf("compare --json: %+v", j)
	}

	// A reference made of our own cells (d2, every algorithm), with CIs
	// of 0: a reference of one's own is judged whatever the protocol,
	// every value agrees under (a), and the gate opens. Shifted beyond our
	// CI and 1% of the value, every value differs.
	cells := quickCells(t, bin, dir, "d2")
	off := func(e formats.Estimate, shifted bool) float64 {
		if !shifted {
			return e.Mean
		}
		return e.Mean + 2*e.HalfWidth + 0.1*math.Abs(e.Mean) + 1
	}
	for _, shifted := range []bool{false, true} {
		var y strings.Builder
		y.WriteString("source: our own quick run\ntolerance: {relative: 0.01, percentile: [0, 100], applies: ci}\nrows:\n")
		for _, c := range cells {
			fmt.Fprintf(&y, "  - {setting: d2, geometry: %s, algorithm: %s, hv_last100: {value: %v, ci: 0}, final_regret: {value: %v, ci: 0}}\n",
				c.Geometry, c.Algo, off(c.HVLast, shifted), off(c.RegretPos, shifted))
		}
		ref := filepath.Join(t.TempDir(), "ours.yaml")
		os.WriteFile(ref, []byte(y.String()), 0o644)
		cmd := exec.Command(bin, "compare", "--profile", "quick", "--reference", ref, "--fail-on", "values")
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		want := fmt.Sprintf("%d of %d published values agree", 2*len(cells), 2*len(cells))
		code := exitVerified
		if shifted {
			want = fmt.Sprintf("0 of %d published values agree", 2*len(cells))
			code = exitRejected
		}
		if !strings.Contains(string(out), want) || exitCode(err) != code {
			t.Fatalf("reference (shifted %v): exit %d, want %d and %q:\n%s", shifted, exitCode(err), code, want, out)
		}
	}
	// A malformed reference names its line, and is a wrong input (2).
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(bad, []byte("source: x\ntolerance: {relative: 0.05, percentile: [2.5, 97.5], applies: ci}\nrows:\n  - {setting: d2, geometry: linear, algorithm: Nope, hv_last100: {value: 1, ci: 0}}\n"), 0o644)
	cmd = exec.Command(bin, "compare", "--profile", "quick", "--reference", bad)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); exitCode(err) != exitUsage || !strings.Contains(string(out), `reference line 4: unknown algorithm "Nope"`) {
		t.Fatalf("malformed reference: %v\n%s", err, out)
	}
	// --markdown (for $GITHUB_STEP_SUMMARY) prints results/compare.md on
	// stdout, whole even when the gate closes: its headline is the page's
	// here (no judgement across instances).
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

// exitCode is the exit status of a command's error (0 for none).
func exitCode(err error) int {
	var e *exec.ExitError
	if errors.As(err, &e) {
		return e.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
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
