package compare

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"thv/algos"
	"thv/envs"
	"thv/internal/testenv"
	"thv/stages/formats"
	"thv/stages/stage"
)

// paperNames is the vocabulary the protocol gives the stage
// (protocol.Vocabulary) in the paper's binary: the paper's algorithms
// (PaperOrder; a binary with more algorithms gives them too) and
// geometries.
var paperNames = func() Vocabulary {
	v := Vocabulary{Algorithms: algos.PaperOrder}
	for _, g := range envs.Geometries {
		v.Geometries = append(v.Geometries, string(g))
	}
	return v
}()

const goodRef = `source: test
tolerance: {relative: 0.05, percentile: [2.5, 97.5], applies: ci}
claims:
  - {id: best, text: t, kind: best, algorithm: THV-UCB, metric: hv_last100}
rows:
  - {setting: d2, geometry: linear, algorithm: THV-UCB, hv_last100: {value: 0.5, ci: 0.01}}
`

// TestParseReferenceErrorsNameTheLine: each malformed file is refused with
// an error naming its line.
func TestParseReferenceErrorsNameTheLine(t *testing.T) {
	if _, err := ParseReference([]byte(goodRef), paperNames); err != nil {
		t.Fatalf("good reference: %v", err)
	}
	cell := func(s string) string {
		return strings.Replace(goodRef, "  - {setting: d2, geometry: linear, algorithm: THV-UCB, hv_last100: {value: 0.5, ci: 0.01}}", s, 1)
	}
	for _, tc := range []struct{ name, file, want string }{
		{"unknown algorithm", cell("  - {setting: d2, geometry: linear, algorithm: THV-UCX, hv_last100: {value: 0.5, ci: 0.01}}"), `line 6: unknown algorithm "THV-UCX"`},
		{"missing value", cell("  - {setting: d2, geometry: linear, algorithm: THV-UCB, hv_last100: {ci: 0.01}}"), "line 6: hv_last100 has no value"},
		{"no metric", cell("  - {setting: d2, geometry: linear, algorithm: THV-UCB}"), "line 6: no value"},
		{"wrong type", cell("  - {setting: d2, geometry: linear, algorithm: THV-UCB, hv_last100: {value: high, ci: 0.01}}"), "line 6: cannot unmarshal !!str `high`"},
		{"unknown field", cell("  - {setting: d2, geometry: linear, algorithm: THV-UCB, hv_last: {value: 0.5}}"), "line 6: unknown field hv_last (known: setting, geometry"},
		{"bad geometry", cell("  - {setting: d2, geometry: flat, algorithm: THV-UCB, hv_last100: {value: 0.5, ci: 0.01}}"), `line 6: geometry "flat"`},
		{"bad setting", cell("  - {setting: two, geometry: linear, algorithm: THV-UCB, hv_last100: {value: 0.5, ci: 0.01}}"), `line 6: setting "two"`},
		{"negative ci", cell("  - {setting: d2, geometry: linear, algorithm: THV-UCB, hv_last100: {value: 0.5, ci: -1}}"), "reference line 6: rows[0].hv_last100.ci = -1: want a finite number ≥ 0 (the 95% CI's half-width)"},
		// Non-finite numbers: refused with the key path and the value.
		{"value .inf", cell("  - {setting: d2, geometry: linear, algorithm: THV-UCB, hv_last100: {value: .inf, ci: 0.01}}"), "reference line 6: rows[0].hv_last100.value = +Inf: want a finite number"},
		{"value -.inf", cell("  - {setting: d2, geometry: linear, algorithm: THV-UCB, final_regret: {value: -.inf, ci: 0.01}}"), "reference line 6: rows[0].final_regret.value = -Inf: want a finite number"},
		{"value .nan", cell("  - {setting: d2, geometry: linear, algorithm: THV-UCB, hv_last100: {value: .nan, ci: 0.01}}"), "reference line 6: rows[0].hv_last100.value = NaN: want a finite number"},
		{"ci .inf", cell("  - {setting: d2, geometry: linear, algorithm: THV-UCB, hv_last100: {value: 0.5, ci: .inf}}"), "reference line 6: rows[0].hv_last100.ci = +Inf: want a finite number ≥ 0 (the 95% CI's half-width)"},
		{"ci .nan", cell("  - {setting: d2, geometry: linear, algorithm: THV-UCB, hv_last100: {value: 0.5, ci: .NaN}}"), "reference line 6: rows[0].hv_last100.ci = NaN: want a finite number ≥ 0 (the 95% CI's half-width)"},
		{"claim value .inf", strings.Replace(goodRef, "metric: hv_last100}", "metric: hv_last100, value: .inf}", 1), "reference line 4: claims[0].value = +Inf (claim best): want a finite number"},
		{"eta_star value .inf", strings.Replace(goodRef, "kind: best, algorithm: THV-UCB, metric: hv_last100}", "kind: eta_star, algorithm: THV-UCB, value: .Inf}", 1), "reference line 4: claims[0].value = +Inf (claim best): want a finite number"},
		{"claim value .nan", strings.Replace(goodRef, "metric: hv_last100}", "metric: hv_last100, value: .nan}", 1), "reference line 4: claims[0].value = NaN (claim best): want a finite number"},
		{"tolerance .inf", strings.Replace(goodRef, "relative: 0.05", "relative: .inf", 1), "tolerance.relative +Inf: want a fraction in [0, 1)"},
		{"percentile .nan", strings.Replace(goodRef, "[2.5, 97.5]", "[.nan, 97.5]", 1), "tolerance.percentile [NaN 97.5]"},
		{"duplicate", goodRef + "  - {setting: d2, geometry: linear, algorithm: THV-UCB, hv_last100: {value: 0.6, ci: 0.01}}\n", "line 7: row d2/linear/THV-UCB repeats line 6"},
		{"claim kind", strings.Replace(goodRef, "kind: best", "kind: wins", 1), `line 4: claim best: kind "wins"`},
		{"claim metric", strings.Replace(goodRef, "metric: hv_last100}", "metric: speed}", 1), `line 4: claim best: metric "speed"`},
		{"tolerance", strings.Replace(goodRef, "applies: ci", "applies: vibes", 1), `tolerance.applies "vibes"`},
		{"empty", "", "empty file"},
	} {
		_, err := ParseReference([]byte(tc.file), paperNames)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
}

// TestPaperReference: the shipped reference parses, has every algorithm
// of both published tables, and cross-checks with the paper's source:
// each transcribed value appears on the line it names. The source is not
// part of the repository: it is read from $THV_PAPER if set (and then must
// be there), else from ../shared/paper/paper.tex beside the repository,
// and the cross-check is skipped if it is not there.
func TestPaperReference(t *testing.T) {
	b, err := os.ReadFile("../../reference/paper.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ref, err := ParseReference(b, paperNames)
	if err != nil {
		t.Fatal(err)
	}
	if len(ref.Rows) != 2*14*4 {
		t.Fatalf("%d cells, want 2 settings × 14 algorithms × 4 geometries", len(ref.Rows))
	}
	// What a reader sees cites the paper, not a file or a history they do
	// not have; the claims are the paper's (its Results' first paragraph).
	var ids []string
	for _, text := range append([]string{ref.Source}, claimTexts(ref)...) {
		for _, bad := range []string{"paper.tex", " line ", "issue", "#"} {
			if strings.Contains(strings.ToLower(text), bad) {
				t.Errorf("the reference shows a reader %q: %s", bad, text)
			}
		}
	}
	for _, c := range ref.Claims {
		ids = append(ids, c.ID)
	}
	if strings.Join(ids, " ") != "best-hv lowest-regret margin-grows-linear" {
		t.Errorf("claims %v: want the paper's three", ids)
	}
	path := os.Getenv("THV_PAPER")
	set := path != ""
	if !set {
		path = "../../../shared/paper/paper.tex"
	}
	paper, err := os.ReadFile(path)
	switch {
	case err != nil && set:
		t.Fatalf("THV_PAPER names the paper's source, but: %v", err)
	case err != nil:
		testenv.Missing(t, "the paper's source is not beside the repository (%v): set THV_PAPER=path/to/paper.tex to cross-check the reference with it", err)
	}
	lines := strings.Split(string(paper), "\n")
	for _, c := range ref.Rows {
		if c.Line < 1 || c.Line > len(lines) {
			t.Fatalf("%s/%s/%s: line %d out of range", c.Setting, c.Geometry, c.Algorithm, c.Line)
		}
		for _, v := range []*Value{c.HVLast100, c.FinalRegret} {
			s := strconv.FormatFloat(*v.Value, 'f', -1, 64)
			if !strings.Contains(lines[c.Line-1], s) {
				t.Errorf("%s/%s/%s: %s not on paper.tex line %d: %s", c.Setting, c.Geometry, c.Algorithm, s, c.Line, lines[c.Line-1])
			}
		}
	}
}

func claimTexts(ref *Reference) []string {
	var out []string
	for _, c := range ref.Claims {
		out = append(out, c.Text)
	}
	return out
}

// TestCompareValue: inside and outside each kind of tolerance.
func TestCompareValue(t *testing.T) {
	tol := Tolerance{Relative: 0.05, Percentile: [2]float64{2.5, 97.5}, Applies: "ci"}
	outcomes := []float64{0.40, 0.45, 0.50, 0.55, 0.60}
	for _, tc := range []struct {
		name                      string
		ours                      Ours
		pub, pubCI                float64
		byPct                     bool
		withinCI, withinRel, band bool
		agrees                    bool
	}{
		{"CIs meet, beyond 5%", Ours{Mean: 0.50, CI: 0.02, Outcomes: outcomes}, 0.53, 0.011, false, true, false, true, true},
		{"CIs apart, within 5%", Ours{Mean: 0.50, CI: 0.001, Outcomes: outcomes}, 0.52, 0.001, false, false, true, true, true},
		{"CIs apart, beyond 5%", Ours{Mean: 0.50, CI: 0.001, Outcomes: outcomes}, 0.56, 0.001, false, false, false, true, false},
		{"percentile inside", Ours{Mean: 0.30, CI: 0.001, Outcomes: outcomes}, 0.58, 0.001, true, false, false, true, true},
		{"percentile outside", Ours{Mean: 0.50, CI: 0.1, Outcomes: outcomes}, 0.61, 0.001, true, false, false, false, false},
	} {
		r := CompareValue(tc.ours, tc.pub, tc.pubCI, tol, tc.byPct)
		if r.WithinCI != tc.withinCI || r.WithinRel != tc.withinRel || r.InBand != tc.band || r.Agrees != tc.agrees {
			t.Errorf("%s: got CI %v rel %v band %v (pct %.1f) agrees %v", tc.name, r.WithinCI, r.WithinRel, r.InBand, r.Percentile, r.Agrees)
		}
	}
}

// TestPercentileRank against values worked out by hand, and against a
// brute-force count over a constructed distribution.
func TestPercentileRank(t *testing.T) {
	v := []float64{1, 2, 3, 4}
	for x, want := range map[float64]float64{0: 0, 1: 12.5, 2.5: 50, 4: 87.5, 5: 100} {
		if got := PercentileRank(v, x); got != want {
			t.Errorf("rank of %v in %v: %v, want %v", x, v, got, want)
		}
	}
	if !math.IsNaN(PercentileRank(nil, 1)) {
		t.Error("rank in an empty sample is not NaN")
	}
	// 1,000 evenly spaced outcomes: the rank of the q-th is close to q/10.
	many := make([]float64, 1000)
	for i := range many {
		many[i] = float64(i) / 1000
	}
	for _, q := range []int{25, 500, 975} {
		got := PercentileRank(many, float64(q)/1000)
		if math.Abs(got-float64(q)/10) > 0.1 {
			t.Errorf("rank of the %dth of 1000: %v", q, got)
		}
	}
}

func cells(vals map[string]float64, eta float64) []formats.Cell {
	var out []formats.Cell
	for k, v := range vals {
		g, a, _ := strings.Cut(k, "/")
		out = append(out, formats.Cell{Geometry: g, Algo: a, EtaStar: eta, HVLast: formats.Estimate{Mean: v}, RegretPos: formats.Estimate{Mean: 1 - v}})
	}
	return out
}

// TestClaims: a claim holding and failing, of each kind.
func TestClaims(t *testing.T) {
	res := Results{
		"d2": cells(map[string]float64{"linear/THV-UCB": 0.30, "linear/RandomK": 0.20, "convex/THV-UCB": 0.80, "convex/RandomK": 0.70}, 0.01),
		"d3": cells(map[string]float64{"linear/THV-UCB": 0.20, "linear/RandomK": 0.05, "convex/THV-UCB": 0.50, "convex/RandomK": 0.55}, 0.1),
	}
	claims := []Claim{
		{ID: "best-hv", Kind: "best", Algorithm: "THV-UCB", Metric: MetricHV},
		{ID: "best-regret", Kind: "best", Algorithm: "THV-UCB", Metric: MetricRegret},
		{ID: "margin-linear", Kind: "margin_grows", Algorithm: "THV-UCB", Metric: MetricHV, Geometry: "linear"},
		{ID: "margin-convex", Kind: "margin_grows", Algorithm: "THV-UCB", Metric: MetricHV, Geometry: "convex"},
		{ID: "eta", Kind: "eta_star", Algorithm: "THV-UCB", Value: 0.01},
		{ID: "eta-random", Kind: "eta_star", Algorithm: "ScalarUCB", Value: 0.01},
	}
	want := map[string]bool{"best-hv": false, "best-regret": false, "margin-linear": true, "margin-convex": false, "eta": false, "eta-random": false}
	for _, c := range CheckClaims(claims, Protocol{}, res, formats.RegretMetrics[0], paperNames.Geometries) {
		if c.Holds != want[c.ID] {
			t.Errorf("%s: holds = %v (%s), want %v", c.ID, c.Holds, c.Detail, want[c.ID])
		}
	}
	got := CheckClaims(claims[:1], Protocol{}, res, formats.RegretMetrics[0], paperNames.Geometries)[0].Detail
	if !strings.Contains(got, "d3/convex: RandomK 0.55 vs THV-UCB 0.5") {
		t.Errorf("best-hv detail: %s", got)
	}
	delete(res, "d3")
	for _, c := range CheckClaims(claims[:1], Protocol{}, res, formats.RegretMetrics[0], paperNames.Geometries) {
		if !c.Holds {
			t.Errorf("best-hv on d2 only: %s", c.Detail)
		}
	}
}

// TestRunChecksItsVocabulary: the stage judges its reference against the
// names its parameters give, not against a list of its own: a reference
// naming an algorithm or a geometry outside them is refused before any
// input is read, and with them it goes on to read its inputs.
func TestRunChecksItsVocabulary(t *testing.T) {
	ref, err := ParseReference([]byte(goodRef), paperNames)
	if err != nil {
		t.Fatal(err)
	}
	run := func(v Vocabulary) error {
		p, err := json.Marshal(Params{Reference: *ref, Vocabulary: v, Settings: []string{"d2"}})
		if err != nil {
			t.Fatal(err)
		}
		_, err = Run(context.Background(), p, stage.Inputs{})
		return err
	}
	if err := run(Vocabulary{Algorithms: []string{"RandomK"}, Geometries: paperNames.Geometries}); err == nil || !strings.Contains(err.Error(), `reference: unknown algorithm "THV-UCB" (known: RandomK)`) {
		t.Errorf("an algorithm outside the vocabulary: %v", err)
	}
	if err := run(Vocabulary{Algorithms: paperNames.Algorithms, Geometries: []string{"convex"}}); err == nil || !strings.Contains(err.Error(), `reference: geometry "linear": want one of convex`) {
		t.Errorf("a geometry outside the vocabulary: %v", err)
	}
	if err := run(paperNames); err == nil || !strings.Contains(err.Error(), "cells/d2") {
		t.Errorf("with the paper's names the stage reads its inputs: %v", err)
	}
	if _, err := ParseReference([]byte(goodRef), Vocabulary{Algorithms: []string{"RandomK"}, Geometries: paperNames.Geometries}); err == nil || !strings.Contains(err.Error(), `line 6: unknown algorithm "THV-UCB" (known: RandomK)`) {
		t.Errorf("ParseReference with another vocabulary: %v", err)
	}
}

// TestClaimsFollowTheGivenGeometries: a claim about every cell is judged
// over the geometries given, in their order, and only those.
func TestClaimsFollowTheGivenGeometries(t *testing.T) {
	res := Results{"d2": cells(map[string]float64{"linear/THV-UCB": 0.1, "linear/RandomK": 0.2, "convex/THV-UCB": 0.1, "convex/RandomK": 0.2}, 0.01)}
	best := []Claim{{ID: "best", Kind: "best", Algorithm: "THV-UCB", Metric: MetricHV}}
	for _, c := range []struct {
		geometries []string
		want       string
	}{
		{[]string{"convex", "linear"}, "not best in 2 of 2 cells: d2/convex: RandomK 0.2 vs THV-UCB 0.1; d2/linear: RandomK 0.2 vs THV-UCB 0.1"},
		{[]string{"linear", "convex"}, "not best in 2 of 2 cells: d2/linear: RandomK 0.2 vs THV-UCB 0.1; d2/convex: RandomK 0.2 vs THV-UCB 0.1"},
		{[]string{"linear"}, "not best in 1 of 1 cells: d2/linear: RandomK 0.2 vs THV-UCB 0.1"},
	} {
		if got := CheckClaims(best, Protocol{}, res, formats.RegretMetrics[0], c.geometries)[0].Detail; got != c.want {
			t.Errorf("geometries %v: %s\nwant %s", c.geometries, got, c.want)
		}
	}
}
