package compare

import (
	"math"
	"strings"
	"testing"

	"thv/stages/formats"
)

// TestFinalRegretReading: the reference's final_regret is compared with the
// regret the reading names, in the values and in the claims.
func TestFinalRegretReading(t *testing.T) {
	ref := &Reference{Tolerance: Tolerance{Relative: 0.05, Percentile: [2]float64{2.5, 97.5}, Applies: "ci"},
		Claims: []Claim{{ID: "best-regret", Kind: "best", Algorithm: "THV-UCB", Metric: MetricRegret}}}
	v := 5.0
	ref.Rows = []RefRow{{Setting: "d2", Geometry: "linear", Algorithm: "THV-UCB", FinalRegret: &Value{Value: &v, CI: 0.1}}}
	res := Results{"d2": {
		{Geometry: "linear", Algo: "THV-UCB", RegretPos: formats.Estimate{Mean: 5}, RegretAlpha: formats.Estimate{Mean: -400}, RegretExact: formats.Estimate{Mean: 20}},
		{Geometry: "linear", Algo: "RandomK", RegretPos: formats.Estimate{Mean: 300}, RegretAlpha: formats.Estimate{Mean: -500}, RegretExact: formats.Estimate{Mean: 400}},
	}}
	for regret, want := range map[string]struct {
		ours  float64
		holds bool
	}{"regret_alpha_pos": {5, true}, "regret_alpha": {-400, false}, "regret_exact": {20, true}} {
		rows := Compare(ref, Protocol{}, res, nil, regret)
		if len(rows) != 1 || rows[0].Ours != want.ours {
			t.Errorf("%s: ours %v, want %v", regret, rows[0].Ours, want.ours)
		}
		if c := CheckClaims(ref.Claims, Protocol{}, res, regret, paperNames.Geometries)[0]; c.Holds != want.holds {
			t.Errorf("%s: lowest-regret claim holds = %v (%s), want %v", regret, c.Holds, c.Detail, want.holds)
		}
	}
}

// TestReadingSummarize tallies constructed rows: agreement by metric and
// by tolerance (a), missing values left out, claims, and the CI-width
// ratios' medians.
func TestReadingSummarize(t *testing.T) {
	r := ReadingResult{Name: "x", Set: []string{"a=1", "b=2"}, Proposed: "THV-UCB", Rows: []formats.Comparison{
		{Algorithm: "THV-UCB", Metric: MetricHV, Agrees: true, WithinCI: true, OursCI: 0.01, PublishedCI: 0.001},
		{Algorithm: "THV-UCB", Metric: MetricHV, Agrees: false, WithinRel: true, OursCI: 0.004, PublishedCI: 0.002},
		{Algorithm: "RandomK", Metric: MetricHV, Agrees: true, OursCI: 0.03, PublishedCI: 0.1},
		{Algorithm: "RandomK", Metric: MetricRegret, Agrees: true, OursCI: 30, PublishedCI: 150},
		{Algorithm: "RandomK", Metric: MetricRegret, Agrees: false, OursCI: 3, PublishedCI: 0},
		{Algorithm: "ParetoTS", Metric: MetricHV, Missing: true},
	}, Claims: []formats.ClaimCheck{{Holds: true}, {Holds: false}}}
	s := r.Summarize()
	want := formats.ReadingRow{Reading: "x", Set: "a=1; b=2", Values: 5, Agree: 3, AgreeHV: 2, AgreeRegret: 1, AgreeCI: 2, Claims: 2, ClaimsHold: 1,
		CIRatioTHVUCBHV: 6, CIRatioHV: 2, CIRatioRegret: 0.2}
	if s != want {
		t.Fatalf("summary\n%+v\nwant\n%+v", s, want)
	}
	if !math.IsNaN(median(nil)) || median([]float64{3, 1, 2}) != 2 || median([]float64{4, 1, 3, 2}) != 2.5 {
		t.Fatal("median")
	}
	md := ReadingsMarkdown([]ReadingResult{r}, Protocol{}, [2]float64{2.5, 97.5})
	for _, s := range []string{"| x | `a=1`, `b=2` | its seeds | 3 / 5 |", "| THV-UCB | 1/2 · 0/0 |", "| RandomK | 1/1 · 1/2 |", "## x: the values that differ", "|  |  | THV-UCB | hv_last100 | 0.0000 ± 0.0040 | 0 ± 0.002 |"} {
		if !strings.Contains(md, s) {
			t.Errorf("report lacks %q:\n%s", s, md)
		}
	}
}

// TestAcrossInstances: the published value is judged among the cell means
// of the instances, our CI is the median of theirs, and a cell missing on
// one instance is missing.
func TestAcrossInstances(t *testing.T) {
	pub := 0.62
	ref := &Reference{Tolerance: Tolerance{Relative: 0.001, Percentile: [2]float64{2.5, 97.5}, Applies: "percentile"},
		Rows: []RefRow{{Setting: "d2", Geometry: "linear", Algorithm: "THV-UCB", HVLast100: &Value{Value: &pub, CI: 0.002}}}}
	var per []Results
	for i := range 20 { // means 0.50, 0.51, …, 0.69; half-widths 0.001 … 0.020
		per = append(per, Results{"d2": {{Geometry: "linear", Algo: "THV-UCB",
			HVLast: formats.Estimate{Mean: 0.5 + float64(i)/100, HalfWidth: float64(i+1) / 1000}}}})
	}
	r := AcrossInstances(ref, Protocol{}, per, formats.RegretMetrics[0])[0]
	// 12 of the 20 means lie below 0.62, one equals it: rank (12 + ½)/20.
	if r.Missing || r.Seeds != 20 || math.Abs(r.Percentile-62.5) > 1e-9 || !r.Agrees || math.Abs(r.OursCI-0.0105) > 1e-12 || math.Abs(r.Ours-0.595) > 1e-12 {
		t.Fatalf("inside: %+v", r)
	}
	pub = 0.75 // above every instance
	if r := AcrossInstances(ref, Protocol{}, per, formats.RegretMetrics[0])[0]; r.Agrees || r.Percentile != 100 {
		t.Fatalf("outside: %+v", r)
	}
	per[3] = Results{"d2": nil}
	if r := AcrossInstances(ref, Protocol{}, per, formats.RegretMetrics[0])[0]; !r.Missing {
		t.Fatalf("a cell absent on one instance: %+v", r)
	}
}

// TestProposedRegretTable: the report's table of the proposed method's
// Final Regret per reading: the published values, ours with ✓ where they
// agree, the count of the other agreeing values and the two rank claims.
func TestProposedRegretTable(t *testing.T) {
	rows := func(agree bool, ours float64) []formats.Comparison {
		return []formats.Comparison{
			{Setting: "d2", Geometry: "linear", Algorithm: "THV-UCB", Metric: MetricRegret, Ours: ours, Published: 2.7, Agrees: agree, PublishedCI: 0.001, OursCI: ours - 1.64},
			{Setting: "d3", Geometry: "linear", Algorithm: "THV-UCB", Metric: MetricRegret, Ours: 1.5, Published: 1.9},
			{Setting: "d2", Geometry: "linear", Algorithm: "THV-UCB", Metric: MetricHV, Agrees: true},
			{Setting: "d2", Geometry: "linear", Algorithm: "RandomK", Metric: MetricRegret, Agrees: agree},
		}
	}
	claims := []formats.ClaimCheck{{ID: "best-hv", Holds: true}, {ID: "lowest-regret", Holds: false}}
	md := ReadingsMarkdown([]ReadingResult{
		{Name: "default", Proposed: "THV-UCB", InstanceSeeds: 20, Rows: rows(false, 1.64), Claims: claims},
		{Name: "other", Proposed: "THV-UCB", InstanceSeeds: 20, Rows: rows(true, 2.61), Claims: claims[:1]},
	}, Protocol{}, [2]float64{2.5, 97.5})
	for _, s := range []string{
		"## THV-UCB's Final Regret per reading",
		"| reading | d2 linear | d3 linear | agree | other values | CI < 0.001 | best-hv | lowest-regret |",
		"| *published* | *2.7* | *1.9* |",
		"| default | 1.64 | 1.5 | 0 / 2 | 1 / 2 | 1 / 1 | yes | no |",
		"| other | 2.61 ✓ | 1.5 | 1 / 2 | 2 / 2 | 0 / 1 | yes | — |",
	} {
		if !strings.Contains(md, s) {
			t.Errorf("report lacks %q:\n%s", s, md)
		}
	}
}
