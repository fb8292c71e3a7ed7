package compare

import (
	"math"
	"slices"
	"strings"
	"testing"

	"thv/stages/formats"
)

// TestEstimatePrecision: a mean is printed to the decimal of its CI's
// second significant digit (at most 4), and a CI that is rounding noise
// reads as such, never as 6.7e-16.
func TestEstimatePrecision(t *testing.T) {
	for _, c := range []struct {
		mean, ci float64
		want     string
	}{
		{4.7122973304303262, 6.7e-16, "4.7123 ± < 0.0001"},
		{0.64993254636337583, 0.00074, "0.6499 ± 0.0007"},
		{79.742506044762706, 3.1, "79.7 ± 3.1"},
		{130, 108.3, "130 ± 108"},
		{0.4803, 0.0082, "0.4803 ± 0.0082"},
		{23.02, 1.2, "23.0 ± 1.2"},
		{0.5, math.NaN(), "0.5 (no CI)"},
		{math.NaN(), 1, "—"},
	} {
		if got := Estimate(c.mean, c.ci); got != c.want {
			t.Errorf("Estimate(%v, %v) = %q, want %q", c.mean, c.ci, got, c.want)
		}
	}
	if got := Diff(-0.005667, 0.00074); got != "-0.0057" {
		t.Errorf("Diff: %q", got)
	}
	if got := Published(130, 108.3); got != "130 ± 108.3" {
		t.Errorf("Published: %q", got)
	}
}

// TestTiesAreTies: an algorithm whose mean equals the best other's to the
// last bit ties, and a tie counts as best, said in the detail; one that
// is worse by the last bit fails, and its numbers are printed with the
// digits that tell them apart.
func TestTiesAreTies(t *testing.T) {
	tie := 4.7122973304303262
	res := Results{"d2": {
		{Geometry: "linear", Algo: "THV-UCB", RegretPos: formats.Estimate{Mean: tie}},
		{Geometry: "linear", Algo: "ScalarUCB", RegretPos: formats.Estimate{Mean: tie}},
		{Geometry: "convex", Algo: "THV-UCB", RegretPos: formats.Estimate{Mean: math.Nextafter(tie, 10)}},
		{Geometry: "convex", Algo: "ScalarUCB", RegretPos: formats.Estimate{Mean: tie}},
	}}
	claim := []Claim{{ID: "lowest", Kind: "best", Algorithm: "THV-UCB", Metric: MetricRegret}}
	c := CheckClaims(claim, Protocol{}, res, formats.RegretMetrics[0], []string{"linear"})[0]
	if !c.Holds || !strings.Contains(c.Detail, "tied for best in 1 (d2/linear with ScalarUCB at 4.712; "+TieRule+")") {
		t.Errorf("a tie: holds %v, %s", c.Holds, c.Detail)
	}
	c = CheckClaims(claim, Protocol{}, res, formats.RegretMetrics[0], []string{"convex"})[0]
	if c.Holds || !strings.Contains(c.Detail, "d2/convex: ScalarUCB 4.712297330430326 vs THV-UCB 4.712297330430327") {
		t.Errorf("worse by one bit: holds %v, %s", c.Holds, c.Detail)
	}
}

// TestNotComparable: the values of a setting the protocol cannot
// reproduce are not judged (no verdict, no agreement counted), the
// others are; a claim ranging over that setting is not judged; the
// headline names the protocol, counts only what was judged, says when
// nothing was, and says when fewer seeds judged.
func TestNotComparable(t *testing.T) {
	ref := &Reference{Tolerance: Tolerance{Relative: 0.05, Percentile: [2]float64{2.5, 97.5}, Applies: "ci"},
		Claims: []Claim{{ID: "best-hv", Kind: "best", Algorithm: "THV-UCB", Metric: MetricHV}}}
	v := 0.5
	for _, s := range []string{"d2", "d3"} {
		ref.Rows = append(ref.Rows, RefRow{Setting: s, Geometry: "linear", Algorithm: "THV-UCB", HVLast100: &Value{Value: &v, CI: 0.01}})
	}
	res := Results{
		"d2": {{Geometry: "linear", Algo: "THV-UCB", HVLast: formats.Estimate{Mean: 0.5, HalfWidth: 0.01}}},
		"d3": {{Geometry: "linear", Algo: "THV-UCB", HVLast: formats.Estimate{Mean: 0.5, HalfWidth: 0.01}}},
	}
	proto := Protocol{Differs: []Difference{{"seeds", "3", "10"}, {"settings.d3.T", "300", "3000"}}, Seeds: 3, PaperSeeds: 10,
		NotComparable: []Incomparable{{Setting: "d3", Reason: "T 300 vs 3000"}}}
	rows := Compare(ref, proto, res, nil, formats.RegretMetrics[0])
	if !rows[0].Agrees || rows[0].NotComparable != "" || rows[1].Agrees || rows[1].NotComparable != "T 300 vs 3000" || !math.IsNaN(rows[1].Diff) {
		t.Fatalf("rows: %+v", rows)
	}
	claims := CheckClaims(ref.Claims, proto, res, formats.RegretMetrics[0], []string{"linear"})
	if claims[0].Holds || !strings.Contains(claims[0].NotComparable, "T 300 vs 3000 (d3)") {
		t.Fatalf("claim: %+v", claims[0])
	}
	n := Count(rows, claims)
	if n != (Counts{Values: 2, Judged: 1, Agree: 1, NotComparable: 1, Claims: 1}) {
		t.Fatalf("counts %+v", n)
	}
	s := Verdict{Protocol: proto, Run: n, OneInstance: true, Relative: 0.05}.Sentence()
	for _, want := range []string{"A modified protocol: seeds 3 (paper 10), settings.d3.T 300 (paper 3000).",
		"Judged with 3 seeds per cell instead of the paper's 10: wider intervals agree more easily.",
		"1 of the 2 published values are not comparable with this protocol (T 300 vs 3000 (d3))",
		"1 of 1 comparable published values agree", "the paper's claims are not judged"} {
		if !strings.Contains(s, want) {
			t.Errorf("headline lacks %q:\n%s", want, s)
		}
	}
	// Nothing comparable: no agreement count at all.
	proto.NotComparable = append(proto.NotComparable, Incomparable{Setting: "d2", Reason: "T 300 vs 2000"})
	rows = Compare(ref, proto, res, nil, formats.RegretMetrics[0])
	s = Verdict{Protocol: proto, Run: Count(rows, CheckClaims(ref.Claims, proto, res, formats.RegretMetrics[0], []string{"linear"}))}.Sentence()
	if strings.Contains(s, "agree ") || strings.Contains(s, "Judged with") || !strings.Contains(s, "no agreement is counted") {
		t.Errorf("nothing comparable: %s", s)
	}
	md := Markdown(ref, proto, rows, nil)
	if !strings.Contains(md, "not comparable: T 300 vs 2000 |") || strings.Contains(md, "**differs**") {
		t.Errorf("compare.md:\n%s", md)
	}
	// The paper's protocol: named so.
	if s := (Verdict{Run: Counts{Values: 2, Judged: 2, Agree: 1, Claims: 1, ClaimsJudged: 1, Hold: 1}, OneInstance: true, Relative: 0.05}).Sentence(); !strings.HasPrefix(s, "The paper's protocol. 1 of 2 published values agree") ||
		!strings.Contains(s, "1 of the paper's 1 claims hold") {
		t.Errorf("the paper's protocol: %s", s)
	}
	// Across instances: the headline, with this run's as detail.
	a := Verdict{Run: Counts{Values: 2, Judged: 2, Agree: 1, Claims: 3, ClaimsJudged: 3, Hold: 1}, OneInstance: true, Relative: 0.05, Band: [2]float64{2.5, 97.5},
		Across: &formats.ReadingRow{InstanceSeeds: 20, Values: 2, Agree: 2}}
	if s := a.Sentence(); !strings.Contains(s, "Across 20 instances, 2 of 2 published values agree") || !strings.Contains(s, "On this run's one instance, 1 of 2 agree") {
		t.Errorf("across instances: %s", s)
	}
}

// TestBand: the band of outcomes Band returns is where a published value
// agrees under tolerance (b), checked against PercentileRank on a fine
// grid; with 20 outcomes and [2.5, 97.5] it is their range.
func TestBand(t *testing.T) {
	twenty := make([]float64, 20)
	for i := range twenty {
		twenty[i] = float64((i*7)%20) / 10
	}
	if lo, hi := Band(twenty, [2]float64{2.5, 97.5}); lo != slices.Min(twenty) || hi != slices.Max(twenty) {
		t.Errorf("20 outcomes: [%v, %v], want their range", lo, hi)
	}
	for _, c := range []struct {
		values []float64
		band   [2]float64
	}{
		{[]float64{1, 2, 2, 3, 5, 8}, [2]float64{25, 75}},
		{[]float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, [2]float64{2.5, 97.5}},
		{[]float64{1, 1, 1}, [2]float64{10, 90}},
		{[]float64{3, 1, 2}, [2]float64{40, 60}},
	} {
		lo, hi := Band(c.values, c.band)
		for x := -1.0; x <= 11; x += 0.125 {
			p := PercentileRank(c.values, x)
			in := p >= c.band[0] && p <= c.band[1]
			if in && (x < lo || x > hi) {
				t.Errorf("%v %v: %v (rank %v) agrees but lies outside [%v, %v]", c.values, c.band, x, p, lo, hi)
			}
		}
		if !slices.Contains(c.values, lo) || !slices.Contains(c.values, hi) {
			t.Errorf("%v %v: [%v, %v] does not end at outcomes", c.values, c.band, lo, hi)
		}
	}
	if lo, hi := Band(nil, [2]float64{2.5, 97.5}); !math.IsNaN(lo) || !math.IsNaN(hi) {
		t.Error("no outcomes: not NaN")
	}
}

// TestMarkdownEscapesText: a reference's texts reach compare.md with their
// markup escaped.
func TestMarkdownEscapesText(t *testing.T) {
	v := 1.0
	ref := &Reference{Source: "<script>x</script> | *y*", Tolerance: Tolerance{Relative: 0.05, Percentile: [2]float64{2.5, 97.5}, Applies: "ci"},
		Rows: []RefRow{{Setting: "d2", Geometry: "linear", Algorithm: "THV-UCB", HVLast100: &Value{Value: &v}}}}
	claims := []formats.ClaimCheck{{ID: "c", Text: "a <b>bold</b> claim `x`", Detail: "[link](http://x)"}}
	md := Markdown(ref, Protocol{}, nil, claims)
	for _, bad := range []string{"<script>", "<b>", "`x`", "[link]("} {
		if strings.Contains(md, bad) {
			t.Errorf("compare.md holds %q raw:\n%s", bad, md)
		}
	}
}
