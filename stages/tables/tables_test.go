package tables

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"thv/internal/testenv"
	"thv/stages/formats"
	"thv/stages/stage"
	"thv/stages/summarize"
)

var testAlgos = []AlgoInfo{
	{Name: "THV-UCB", Family: "thvucb", Fidelity: "—", UsesEta: true},
	{Name: "ParetoUCB+", Family: "paretoucb", Fidelity: "extension", Cite: "Drugan2013MOBandits", UsesEta: true},
	{Name: "ParetoTS", Family: "paretots", Fidelity: "faithful", Cite: "yahyaa2015thompson"},
	{Name: "RandomK", Family: "randomk", Fidelity: "—"},
}

// syntheticStats builds collect outputs for every cell, runs the summarize
// stage on them, and returns its inputs for the tables stage.
func syntheticStats(t *testing.T, settings []formats.Setting, geometries []string) stage.Inputs {
	t.Helper()
	rng := rand.New(rand.NewPCG(3, 3))
	in := stage.Inputs{}
	for _, s := range settings {
		sumIn := stage.Inputs{}
		var names []string
		for _, a := range testAlgos {
			names = append(names, a.Name)
		}
		for gi, g := range geometries {
			for ai, a := range testAlgos {
				var rows []formats.Summary
				for seed := uint64(0); seed < 10; seed++ {
					hv := 0.5 - 0.1*float64(ai) + 0.01*float64(gi) + 0.02*rng.Float64()
					rows = append(rows, formats.Summary{
						Algo: a.Name, Eta: []float64{0.01, 0.1, 0.3, 1}[ai], Seed: seed, Window: 100,
						HVLast: hv, VStar: 0.6, HVGreedy: 0.59, VAlpha: 0.6,
						RegretAlpha: 10*float64(ai) + rng.Float64(), RegretPos: 12*float64(ai) + 5*rng.Float64(), RegretExact: 40 + 30*float64(ai) + rng.Float64(),
					})
				}
				b, err := formats.EncodeSummaries(rows)
				if err != nil {
					t.Fatal(err)
				}
				sumIn[summarize.CellInputName(g, a.Name)] = b
			}
		}
		params, _ := json.Marshal(summarize.Params{Geometries: geometries, Algorithms: names, Confidence: 0.95, Resamples: 2000, Seed: 1})
		out, err := summarize.Run(context.Background(), params, sumIn)
		if err != nil {
			t.Fatal(err)
		}
		in[CellsInputName(s.Name)], in[TestsInputName(s.Name)] = out["cells"], out["tests"]
	}
	return in
}

func renderTestTables(t *testing.T) (Params, stage.Inputs, stage.Outputs) {
	return renderTablesOver(t, 100)
}

// renderTablesOver renders the test tables with metrics.hv_window = window.
func renderTablesOver(t *testing.T, window int) (Params, stage.Inputs, stage.Outputs) {
	settings := []formats.Setting{{Name: "d2", D: 2, N: 36, K: 3, T: 2000, Sigma: 0.05, Seeds: 10}, {Name: "d3", D: 3, N: 60, K: 4, T: 3000, Sigma: 0.035, Seeds: 10}}
	geometries := []string{"clusters", "concave", "convex", "linear"}
	in := syntheticStats(t, settings, geometries)
	p := Params{Settings: settings, Geometries: geometries, Algorithms: testAlgos, Confidence: 0.95, HVWindow: window}
	params, _ := json.Marshal(p)
	out, err := Run(context.Background(), params, in)
	if err != nil {
		t.Fatal(err)
	}
	return p, in, out
}

var cellRE = regexp.MustCompile(`&\s*(?:\\textbf\{)?([0-9.]+)\}?\{\\scriptsize(\$\\pm\$|\$<\$)([0-9.]+)\}`)

// TestTablesNameTheWindow: the tables name the metric by the window the
// runs averaged over, not by the paper's 100.
func TestTablesNameTheWindow(t *testing.T) {
	_, _, out := renderTablesOver(t, 50)
	for name, want := range map[string][]string{
		"summary_d2.tex": {"& HV$_{\\text{last50}}$ & Final Regret", "HV$_{\\text{last50}}$: mean HV$(S_t)$ over the last 50 rounds;"},
		"eta.tex":        {"maximising mean HV_last50.", "(maximizing mean $\\mathrm{HV}_{\\mathrm{last50}}$;"},
		"tests.tex":      {"mean difference in $\\mathrm{HV}_{\\text{last50}}$"},
	} {
		tex := string(out[name])
		for _, w := range want {
			if !strings.Contains(tex, w) {
				t.Errorf("%s lacks %q", name, w)
			}
		}
		if strings.Contains(tex, "last100") || strings.Contains(tex, "last 100") {
			t.Errorf("%s names the paper's window of 100 with hv_window = 50:\n%s", name, tex)
		}
	}
}

// TestTablesMatchStatistics parses every rendered summary table back and
// checks each number against the statistics artifact it came from.
func TestTablesMatchStatistics(t *testing.T) {
	p, in, out := renderTestTables(t)
	for _, s := range p.Settings {
		cells, err := formats.DecodeCells(in[CellsInputName(s.Name)])
		if err != nil {
			t.Fatal(err)
		}
		tex := string(out["summary_"+s.Name+".tex"])
		checked := 0
		for _, a := range p.Algorithms {
			line := rowOf(t, tex, texName(a, a.Name == p.Algorithms[0].Name))
			m := cellRE.FindAllStringSubmatch(line, -1)
			if len(m) != 2*len(p.Geometries) {
				t.Fatalf("%s row of %s: %d cells, want %d:\n%s", a.Name, s.Name, len(m), 2*len(p.Geometries), line)
			}
			for gi, g := range p.Geometries {
				c, _ := formats.CellOf(cells, g, a.Name)
				for k, metric := range []struct {
					mean, ci float64
					d, cd    int
				}{{c.HVLast.Mean, c.HVLast.HalfWidth, HVDigits, HVCIDigits}, {c.RegretPos.Mean, c.RegretPos.HalfWidth, RegretDigits, RegretCIDigits}} {
					got := m[2*gi+k]
					if got[1] != Fixed(metric.mean, metric.d) {
						t.Errorf("%s %s %s: table says %s, statistics %v", s.Name, a.Name, g, got[1], metric.mean)
					}
					if got[2]+got[3] != LaTeX.CI(metric.ci, metric.cd) {
						t.Errorf("%s %s %s: CI %s%s, statistics %v", s.Name, a.Name, g, got[2], got[3], metric.ci)
					}
					checked++
				}
			}
		}
		if checked != 2*len(p.Geometries)*len(p.Algorithms) {
			t.Fatalf("checked %d numbers", checked)
		}
		// Bold: at least one value per column (more on exact ties).
		if n := len(regexp.MustCompile(`\\textbf\{[0-9]`).FindAllString(tex, -1)); n < 2*len(p.Geometries) {
			t.Errorf("%s: %d bold values, want at least %d", s.Name, n, 2*len(p.Geometries))
		}
	}
	// η* and the tests table.
	eta := string(out["eta.tex"])
	for _, s := range p.Settings {
		tests, _ := formats.DecodeTests(in[TestsInputName(s.Name)])
		for _, tr := range tests {
			want := fmt.Sprintf("$d=%d$, %s & ", s.D, tr.Geometry)
			line := rowOf(t, string(out["tests.tex"]), want)
			for _, v := range []string{LaTeX.Signed(tr.Delta, 4), "[" + LaTeX.Signed(tr.CILow, 4) + ", " + LaTeX.Signed(tr.CIHigh, 4) + "]", LaTeX.Cohen(tr.CohensD), formatP(tr.WilcoxonP), fmt.Sprintf("%d/%d", tr.Wins, tr.N)} {
				if !strings.Contains(line, v) {
					t.Errorf("tests row %q lacks %q", line, v)
				}
			}
		}
	}
	thv := rowOf(t, eta, "THV-UCB (ours)")
	if strings.Count(thv, "& 0.01") != len(p.Settings)*len(p.Geometries) {
		t.Errorf("η* row of THV-UCB: %q", thv)
	}
	if strings.Contains(eta, "ParetoTS") || strings.Contains(eta, "RandomK") {
		t.Error("the η table lists algorithms without η")
	}
}

// rowOf returns the table row starting with prefix (joined over its lines).
func rowOf(t *testing.T, tex, prefix string) string {
	t.Helper()
	i := strings.Index(tex, prefix)
	if i < 0 {
		t.Fatalf("no row %q in:\n%s", prefix, tex)
	}
	rest := tex[i:]
	end := strings.Index(rest, "\\\\")
	if end < 0 {
		t.Fatalf("row %q does not end", prefix)
	}
	return rest[:end]
}

// TestTablesCompile runs pdflatex on all.tex. CI installs TeX (see .ci/run),
// where a missing pdflatex is a failure; elsewhere the test is skipped.
func TestTablesCompile(t *testing.T) {
	pdflatex, err := exec.LookPath("pdflatex")
	if err != nil {
		testenv.Missing(t, "pdflatex not installed (apt-get install texlive-latex-base texlive-latex-recommended)")
	}
	_, _, out := renderTestTables(t)
	dir := t.TempDir()
	for name, b := range out {
		os.WriteFile(filepath.Join(dir, name), b, 0o644)
	}
	cmd := exec.Command(pdflatex, "-interaction=nonstopmode", "-halt-on-error", "all.tex")
	cmd.Dir = dir
	if log, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("pdflatex: %v\n%s", err, log[max(0, len(log)-3000):])
	}
	pdf, err := os.ReadFile(filepath.Join(dir, "all.pdf"))
	if err != nil || !strings.HasPrefix(string(pdf), "%PDF") {
		t.Fatalf("no PDF produced: %v", err)
	}
}
