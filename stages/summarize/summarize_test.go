package summarize

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"testing"

	"thv/stages/formats"
	"thv/stages/stage"
	"thv/stages/stats"
)

// finals builds the collect outputs of algorithms on geometries: seeds 0–5
// (given in reverse order), HV_last decreasing with the algorithm's index
// except that the last algorithm is the best baseline.
func finals(t *testing.T, geometries, algorithms []string) (stage.Inputs, map[string][]formats.Summary) {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	in := stage.Inputs{}
	rows := map[string][]formats.Summary{}
	for _, g := range geometries {
		for ai, a := range algorithms {
			level := 0.8 - 0.1*float64(ai)
			if ai == len(algorithms)-1 {
				level = 0.75
			}
			var r []formats.Summary
			for seed := uint64(6); seed > 0; seed-- {
				r = append(r, formats.Summary{
					Algo: a, Eta: 0.1, Seed: seed - 1, Window: 10,
					HVLast: level + 0.05*rng.Float64(), VStar: 0.9 + 0.01*rng.Float64(), HVGreedy: 0.89,
					RegretAlpha: rng.NormFloat64(), RegretPos: 3 * rng.Float64(), RegretExact: 10 + rng.Float64(),
				})
			}
			b, err := formats.EncodeSummaries(r)
			if err != nil {
				t.Fatal(err)
			}
			in[CellInputName(g, a)], rows[CellInputName(g, a)] = b, r
		}
	}
	return in, rows
}

func TestSummarize(t *testing.T) {
	p := Params{Geometries: []string{"convex", "linear"}, Algorithms: []string{"THV-UCB", "B", "C"}, Confidence: 0.95, Resamples: 500, Seed: 3}
	in, rows := finals(t, p.Geometries, p.Algorithms)
	params, _ := json.Marshal(p)
	out, err := Run(context.Background(), params, in)
	if err != nil {
		t.Fatal(err)
	}
	cells, err := formats.DecodeCells(out["cells"])
	if err != nil {
		t.Fatal(err)
	}
	if len(cells) != len(p.Geometries)*len(p.Algorithms) || cells[0].Geometry != "convex" || cells[1].Algo != "B" {
		t.Fatalf("cells %+v", cells)
	}
	for _, c := range cells {
		r := rows[CellInputName(c.Geometry, c.Algo)]
		for name, m := range map[string]struct {
			got  formats.Estimate
			vals []float64
		}{
			"hv_last":      {c.HVLast, column(r, func(s formats.Summary) float64 { return s.HVLast })},
			"regret_pos":   {c.RegretPos, column(r, func(s formats.Summary) float64 { return s.RegretPos })},
			"regret_alpha": {c.RegretAlpha, column(r, func(s formats.Summary) float64 { return s.RegretAlpha })},
			"regret_exact": {c.RegretExact, column(r, func(s formats.Summary) float64 { return s.RegretExact })},
		} {
			want := stats.MeanWithCI(m.vals, p.Confidence)
			if d := m.got.Mean - want.Mean; d > 1e-12 || d < -1e-12 || m.got.HalfWidth-want.HalfWidth > 1e-12 || want.HalfWidth-m.got.HalfWidth > 1e-12 {
				t.Errorf("%s/%s %s: %+v, stats.MeanWithCI %+v", c.Geometry, c.Algo, name, m.got, want)
			}
		}
		if c.Seeds != 6 || c.EtaStar != 0.1 || c.HVGreedy != 0.89 {
			t.Errorf("cell %+v", c)
		}
	}
	tests, err := formats.DecodeTests(out["tests"])
	if err != nil {
		t.Fatal(err)
	}
	for i, tr := range tests {
		g := p.Geometries[i]
		if tr.Geometry != g || tr.Baseline != "C" {
			t.Errorf("test row %+v: want baseline C on %s", tr, g)
		}
		// Paired by seed, in seed order.
		x := column(rows[CellInputName(g, "THV-UCB")], func(s formats.Summary) float64 { return s.HVLast })
		y := column(rows[CellInputName(g, "C")], func(s formats.Summary) float64 { return s.HVLast })
		for a, b := 0, len(x)-1; a < b; a, b = a+1, b-1 {
			x[a], x[b], y[a], y[b] = x[b], x[a], y[b], y[a]
		}
		want, err := stats.ComparePaired(x, y, p.Resamples, p.Seed, p.Confidence)
		if err != nil {
			t.Fatal(err)
		}
		if tr.Delta != want.Delta || tr.CILow != want.CILow || tr.CIHigh != want.CIHigh || tr.WilcoxonP != want.WilcoxonP || tr.Wins != want.Wins || tr.N != 6 {
			t.Errorf("%s: %+v, stats.ComparePaired %+v", g, tr, want)
		}
	}
}

func TestSummarizeErrors(t *testing.T) {
	p := Params{Geometries: []string{"convex"}, Algorithms: []string{"THV-UCB", "B"}, Confidence: 0.95, Resamples: 10}
	in, _ := finals(t, p.Geometries, p.Algorithms)
	delete(in, CellInputName("convex", "B"))
	params, _ := json.Marshal(p)
	if _, err := Run(context.Background(), params, in); err == nil || err.Error() != "missing input convex/B" {
		t.Errorf("missing input: %v", err)
	}
	p.Algorithms = p.Algorithms[:1]
	params, _ = json.Marshal(p)
	if _, err := Run(context.Background(), params, in); err == nil {
		t.Error("no baseline accepted")
	}
}
