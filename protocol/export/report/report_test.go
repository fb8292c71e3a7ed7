package report

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"thv/stages/compare"
	"thv/stages/figures"
	"thv/stages/formats"
	"thv/stages/tables"
)

// page of a small, made-up reproduction: one setting, two algorithms, a
// comparison with one value of each verdict, names that need escaping.
func testPage() Page {
	s := formats.Setting{Name: "d2", D: 2, N: 36, K: 3, T: 300, Sigma: 0.05, Seeds: 3}
	algos := []tables.AlgoInfo{{Name: "THV-UCB", Family: "thv", Fidelity: "—", UsesEta: true}, {Name: "A<b>&c", Family: "x", Fidelity: "faithful"}}
	cells := []formats.Cell{
		{Geometry: "linear", Algo: "THV-UCB", EtaStar: 0.01, Seeds: 3, VStar: 1, HVGreedy: 0.9, HVLast: formats.Estimate{Mean: 0.29251, HalfWidth: 0.0004}, RegretPos: formats.Estimate{Mean: 1.64, HalfWidth: 0.01}},
		{Geometry: "linear", Algo: "A<b>&c", Seeds: 3, VStar: 1, HVGreedy: 0.9, HVLast: formats.Estimate{Mean: 0.2, HalfWidth: 0.01}, RegretPos: formats.Estimate{Mean: 1.6, HalfWidth: 0.2}},
	}
	rows := []formats.Comparison{
		{Setting: "d2", Geometry: "linear", Algorithm: "THV-UCB", Metric: "hv_last100", Published: 0.29, Ours: 0.2925, OursCI: 0.0004, Agrees: true, Low: 0.2921, High: 0.2929},
		{Setting: "d2", Geometry: "linear", Algorithm: "A<b>&c", Metric: "hv_last100", Published: 0.5, Ours: 0.2, OursCI: 0.01, Low: 0.19, High: 0.21},
		{Setting: "d2", Geometry: "linear", Algorithm: "A<b>&c", Metric: "final_regret", Published: 5, Missing: true, Low: math.NaN(), High: math.NaN()},
	}
	claims := []formats.ClaimCheck{{ID: "best", Text: "THV-UCB is best", Holds: true, Detail: "in 1 of 1 cells"}}
	described := compare.Protocol{Differs: []compare.Difference{{Key: "seeds", Ours: "3", Paper: "10"}}, Seeds: 3, PaperSeeds: 10}
	return Page{
		Profile: "quick", Proposed: "THV-UCB",
		Verdict: &compare.Verdict{Protocol: described, Run: compare.Count(rows, claims), OneInstance: true, Relative: 0.05},
		Judged:  rows,
		Regret: []RegretFigure{{Setting: s, Regret: "cumulative regret", Panels: []RegretPanel{{Geometry: "linear", Lines: []RegretLine{
			{Algo: "THV-UCB", Rounds: []int{100, 200, 300}, Mean: []float64{1, 1.5, 1.64}}, {Algo: "A<b>&c", Rounds: []int{100, 200, 300}, Mean: []float64{1, 1.4, 1.6}}}}}}},
		Protocol: Protocol{Digest: "sha256:00", Differs: []Override{{"seeds", "[0 … 9] (10 values)", "[0, 1, 2]"}}, Described: described},
		Lock:     Lock{Digest: "sha256:11", Tasks: 5, Go: "go1.26", CodeUnits: 3, CodeDigest: "sha256:22"},
		Run:      Run{Date: "2026-01-01 00:00 UTC", Executor: "local"},
		Tables: &Tables{Params: tables.Params{Settings: []formats.Setting{s}, Geometries: []string{"linear"}, Algorithms: algos, Confidence: 0.95, HVWindow: 40},
			Cells: map[string][]formats.Cell{"d2": cells}, Tests: map[string][]formats.TestRow{"d2": {{Geometry: "linear", Baseline: "A<b>&c", Delta: 0.09, WilcoxonP: 1e-5, Wins: 3, N: 3}}}},
		Compare: &Comparison{Params: compare.Params{Reference: compare.Reference{Source: "paper.tex", Tolerance: compare.Tolerance{Relative: 0.05, Percentile: [2]float64{2.5, 97.5}, Applies: "percentile"}}, OneInstance: true},
			Rows: rows, Claims: claims},
		Figures: []Figure{{Params: figures.Params{Setting: s, Panels: []figures.Panel{{Geometry: "linear", Algorithms: []string{"THV-UCB", "A<b>&c"}}}, Window: 50, Confidence: 0.95}}},
		Files:   []ResultFile{{Path: "tables/all.tex", What: "all"}},
	}
}

func TestRenderIsDeterministicAndEscapes(t *testing.T) {
	a, b := Render(testPage()), Render(testPage())
	if !bytes.Equal(a, b) {
		t.Fatal("the same page rendered twice differs")
	}
	s := string(a)
	if strings.Contains(s, "A<b>") || !strings.Contains(s, "A&lt;b&gt;&amp;c") {
		t.Error("an algorithm's name is not escaped")
	}
	for _, want := range []string{
		`<strong class="best">0.2925</strong>`,                         // the best HV of the column, as printed
		`<td class="ok"><span aria-hidden="true">✓ </span>agrees</td>`, // colour and word
		`<td class="bad"><span aria-hidden="true">✗ </span>differs</td>`,
		`<td class="none"><span aria-hidden="true">– </span>missing</td>`,
		`<strong>1 of 2 published values agree</strong>, 1 missing`,
		`A value <strong>agrees</strong> when the CIs overlap or it is within 5%`, // one instance per cell: (a), as the compare stage judges
		`<title>THV reproduction (profile quick): a modified protocol: seeds 3 (paper 10)</title>`,
		`<p class="verdict"><strong>Verdict:</strong> A modified protocol: seeds 3 (paper 10). Judged with 3 seeds per cell instead of the paper&#39;s 10`,
		`<code>thv verify-bundle FILE.tar.gz</code>`, `<code>thv verify</code>`,
		`<svg role="img" aria-labelledby="plot-t plot-d"`, `fill="#1f5fbf"`, `fill="#c2410c"`, // a bar of each verdict
		`<polyline fill="none" stroke="#000000" stroke-width="2"`, // the regret of the proposed method
		`This run: stated by the author, not checked`,
		`#comparison:has(#fv-differs:checked) tbody tr:not([data-v="differs"]){display:none}`,
		`<img src="figures/d2.png" alt="Line plot`,
		`<a href="figures/d2.pdf">PDF</a>`, `<a href="figures/d2.curves.parquet">`,
		`1.0×10<sup>−5</sup>`,
		`HV<sub>last40</sub>: mean HV(S<sub>t</sub>) over the last 40 rounds`, `<th scope="col">HV<sub>last40</sub></th>`, // the tables' window, not the paper's 100
		`(maximising mean HV<sub>last40</sub>;`, `Δ: mean difference of HV<sub>last40</sub> (THV-UCB − baseline)`,
		`<th scope="row"><code>seeds</code></th><td>[0 … 9] (10 values)</td><td>[0, 1, 2]</td>`,
	} {
		if !strings.Contains(s, want) {
			t.Errorf("the page has no %q", want)
		}
	}
	if strings.Contains(s, "<script") {
		t.Error("the page has a script")
	}
	// The first screen comes first: the verdict and the check before the
	// plot, the plot before the details, the provenance after them.
	order := []string{`class="verdict"`, `class="check"`, `id="plot"`, `id="comparison"`, `id="provenance"`}
	for i := 1; i < len(order); i++ {
		if strings.Index(s, order[i-1]) > strings.Index(s, order[i]) {
			t.Errorf("%s comes after %s", order[i-1], order[i])
		}
	}
	// The SVG's numbers: plain decimals.
	for _, bad := range []string{"NaN", "Inf", "e+", "e-0"} {
		if strings.Contains(s[strings.Index(s, "<svg"):strings.LastIndex(s, "</svg>")], bad) {
			t.Errorf("the page's SVG holds %q", bad)
		}
	}
}

func TestRunBlockRoundTrip(t *testing.T) {
	page := Render(testPage())
	r, err := ParseRun(page)
	if err != nil || r != testPage().Run {
		t.Fatalf("ParseRun: %+v, %v", r, err)
	}
	other := Run{Date: "x", Executor: `a "b" <c> & d`, Thv: "thv v1", Verify: "ok", Sources: "0a1b 2c3d"}
	edited, err := WithRun(page, other)
	if err != nil {
		t.Fatal(err)
	}
	if r, err := Same(page, edited); err != nil || r != other {
		t.Fatalf("Same with another run block: %+v, %v", r, err)
	}
	for name, bad := range map[string][]byte{
		"number edited":     bytes.Replace(edited, []byte("0.2925"), []byte("0.2926"), 1),
		"markup in block":   bytes.Replace(edited, []byte("thv v1"), []byte("<a href=x>thv</a>"), 1),
		"row added":         bytes.Replace(edited, []byte("</table>\n"+sourcesPrefix), []byte("<tr><th scope=\"row\">x</th><td>y</td></tr>\n</table>\n"+sourcesPrefix), 1),
		"no block":          bytes.Replace(edited, []byte(runStart), nil, 1),
		"two blocks":        append(bytes.Clone(edited), edited...),
		"control in value":  bytes.Replace(edited, []byte("thv v1"), []byte("thv\x07"), 1),
		"markup in sources": bytes.Replace(edited, []byte("0a1b 2c3d"), []byte("0a1b --><script>"), 1),
	} {
		if bytes.Equal(bad, edited) {
			t.Fatalf("%s: the edit changed nothing", name)
		}
		if _, err := Same(page, bad); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
