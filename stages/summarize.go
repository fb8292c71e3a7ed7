package stages

import (
	"fmt"
	"math"
	"sort"

	"thv/artifacts"
)

// SummarizeParams configure the statistics of one setting. The inputs are
// the collect outputs of every (geometry, algorithm), named
// "<geometry>/<algorithm>" (see CellInputName).
type SummarizeParams struct {
	Geometries []string `json:"geometries"`
	Algorithms []string `json:"algorithms"` // paper order; the first is the proposed method (THV-UCB)
	Confidence float64  `json:"confidence"`
	Resamples  int      `json:"bootstrap_resamples"`
	Seed       uint64   `json:"bootstrap_seed"`
}

func init() {
	register(Kind{Name: "summarize", Sources: []string{"stages/summarize.go", "stages/statistics.go", "stages/pairedstats.go", "stages/collect.go", "stages/run.go"}, Run: runSummarize})
}

// CellInputName is the input role of one (geometry, algorithm) cell.
func CellInputName(geometry, algo string) string { return geometry + "/" + algo }

// Metrics summarised per cell, with their column prefixes.
var cellMetrics = []struct {
	name string
	get  func(FinalRow) float64
}{
	{"hv_last", func(r FinalRow) float64 { return r.HVLast }},
	{"regret_alpha_pos", func(r FinalRow) float64 { return r.RegretPos }},
	{"regret_alpha", func(r FinalRow) float64 { return r.RegretAlpha }},
	{"regret_exact", func(r FinalRow) float64 { return r.RegretExact }},
}

// runSummarize computes, per (geometry, algorithm), the mean and CI
// half-width over seeds of every metric and η* (output "cells"), and per
// geometry THV-UCB against the best other algorithm, paired by seed
// (output "tests").
func runSummarize(params []byte, in Inputs) (Outputs, error) {
	p, err := decode[SummarizeParams](params)
	if err != nil {
		return nil, err
	}
	if len(p.Algorithms) < 2 {
		return nil, fmt.Errorf("summarize: need the proposed method and at least one baseline")
	}
	var geo, algo []string
	var eta, vstar, hvg []float64
	var n []int64
	means := make([][]float64, len(cellMetrics))
	halfs := make([][]float64, len(cellMetrics))
	var tGeo, tBase, tMethod []string
	var tDelta, tLo, tHi, tD, tP []float64
	var tWins, tN []int64
	for _, g := range p.Geometries {
		rows := map[string][]FinalRow{}
		for _, a := range p.Algorithms {
			name := CellInputName(g, a)
			b, ok := in[name]
			if !ok {
				return nil, fmt.Errorf("summarize: missing input %s", name)
			}
			r, err := DecodeFinal(b)
			if err != nil {
				return nil, fmt.Errorf("summarize: %s: %w", name, err)
			}
			sort.Slice(r, func(i, j int) bool { return r[i].Seed < r[j].Seed })
			rows[a] = r
			geo, algo = append(geo, g), append(algo, a)
			eta = append(eta, r[0].Eta)
			vstar = append(vstar, MeanWithCI(column(r, func(x FinalRow) float64 { return x.VStar }), p.Confidence).Mean)
			hvg = append(hvg, MeanWithCI(column(r, func(x FinalRow) float64 { return x.HVGreedy }), p.Confidence).Mean)
			n = append(n, int64(len(r)))
			for m, metric := range cellMetrics {
				ci := MeanWithCI(column(r, metric.get), p.Confidence)
				means[m] = append(means[m], ci.Mean)
				halfs[m] = append(halfs[m], ci.HalfWidth)
			}
		}
		// The second-best algorithm: the baseline of largest mean HV_last.
		proposed := p.Algorithms[0]
		best, bestMean := "", math.Inf(-1)
		for _, a := range p.Algorithms[1:] {
			if m := MeanWithCI(column(rows[a], cellMetrics[0].get), p.Confidence).Mean; m > bestMean {
				best, bestMean = a, m
			}
		}
		x, y, err := pairBySeed(rows[proposed], rows[best])
		if err != nil {
			return nil, fmt.Errorf("summarize %s: %w", g, err)
		}
		cmp, err := ComparePaired(x, y, p.Resamples, p.Seed, p.Confidence)
		if err != nil {
			return nil, fmt.Errorf("summarize %s: %w", g, err)
		}
		tGeo, tBase, tMethod = append(tGeo, g), append(tBase, best), append(tMethod, cmp.WilcoxonMethod)
		tDelta, tLo, tHi = append(tDelta, cmp.Delta), append(tLo, cmp.CILow), append(tHi, cmp.CIHigh)
		tD, tP = append(tD, cmp.CohensD), append(tP, cmp.WilcoxonP)
		tWins, tN = append(tWins, int64(cmp.Wins)), append(tN, int64(cmp.N))
	}
	cols := []artifacts.Column{
		{Name: "geometry", String: geo}, {Name: "algo", String: algo}, {Name: "eta_star", Float64: eta},
		{Name: "seeds", Int64: n}, {Name: "v_star_mean", Float64: vstar}, {Name: "hv_greedy_mean", Float64: hvg},
	}
	for m, metric := range cellMetrics {
		cols = append(cols, artifacts.Column{Name: metric.name + "_mean", Float64: means[m]}, artifacts.Column{Name: metric.name + "_ci", Float64: halfs[m]})
	}
	cells, err := artifacts.EncodeParquet(artifacts.Table{Columns: cols})
	if err != nil {
		return nil, err
	}
	tests, err := artifacts.EncodeParquet(artifacts.Table{Columns: []artifacts.Column{
		{Name: "geometry", String: tGeo}, {Name: "baseline", String: tBase},
		{Name: "delta", Float64: tDelta}, {Name: "ci_low", Float64: tLo}, {Name: "ci_high", Float64: tHi},
		{Name: "cohens_d", Float64: tD}, {Name: "wilcoxon_p", Float64: tP}, {Name: "wilcoxon_method", String: tMethod},
		{Name: "wins", Int64: tWins}, {Name: "n", Int64: tN},
	}})
	if err != nil {
		return nil, err
	}
	return Outputs{"cells": cells, "tests": tests}, nil
}

// pairBySeed returns the HV_last of a and b on their common seeds, in seed order.
func pairBySeed(a, b []FinalRow) (x, y []float64, err error) {
	bySeed := map[uint64]float64{}
	for _, r := range b {
		bySeed[r.Seed] = r.HVLast
	}
	for _, r := range a {
		if v, ok := bySeed[r.Seed]; ok {
			x, y = append(x, r.HVLast), append(y, v)
		}
	}
	if len(x) == 0 {
		return nil, nil, fmt.Errorf("no common seeds to pair")
	}
	return x, y, nil
}

func column(rows []FinalRow, f func(FinalRow) float64) []float64 {
	out := make([]float64, len(rows))
	for i, r := range rows {
		out[i] = f(r)
	}
	return out
}

// Cell is one (geometry, algorithm) row of a summarize "cells" output.
type Cell struct {
	Geometry, Algo  string
	EtaStar         float64
	Seeds           int
	VStar, HVGreedy float64
	// Mean and CI half-width per metric: hv_last, regret_alpha_pos, regret_alpha, regret_exact.
	Mean, CI [4]float64
}

// DecodeCells reads a summarize "cells" output.
func DecodeCells(b []byte) ([]Cell, error) {
	t, err := artifacts.DecodeParquet(b)
	if err != nil {
		return nil, err
	}
	geo, e1 := stringCol(t, "geometry")
	algo, e2 := stringCol(t, "algo")
	eta, e3 := floatCol(t, "eta_star")
	seeds, e4 := intCol(t, "seeds")
	vs, e5 := floatCol(t, "v_star_mean")
	hg, e6 := floatCol(t, "hv_greedy_mean")
	if err := firstErr(e1, e2, e3, e4, e5, e6); err != nil {
		return nil, err
	}
	cells := make([]Cell, len(geo))
	for i := range cells {
		cells[i] = Cell{Geometry: geo[i], Algo: algo[i], EtaStar: eta[i], Seeds: int(seeds[i]), VStar: vs[i], HVGreedy: hg[i]}
	}
	for m, metric := range cellMetrics {
		mean, e1 := floatCol(t, metric.name+"_mean")
		ci, e2 := floatCol(t, metric.name+"_ci")
		if err := firstErr(e1, e2); err != nil {
			return nil, err
		}
		for i := range cells {
			cells[i].Mean[m], cells[i].CI[m] = mean[i], ci[i]
		}
	}
	return cells, nil
}

// TestRow is one geometry's row of a summarize "tests" output.
type TestRow struct {
	Geometry, Baseline           string
	Delta, CILow, CIHigh, Cohens float64
	P                            float64
	Method                       string
	Wins, N                      int
}

// DecodeTests reads a summarize "tests" output.
func DecodeTests(b []byte) ([]TestRow, error) {
	t, err := artifacts.DecodeParquet(b)
	if err != nil {
		return nil, err
	}
	geo, e1 := stringCol(t, "geometry")
	base, e2 := stringCol(t, "baseline")
	delta, e3 := floatCol(t, "delta")
	lo, e4 := floatCol(t, "ci_low")
	hi, e5 := floatCol(t, "ci_high")
	d, e6 := floatCol(t, "cohens_d")
	p, e7 := floatCol(t, "wilcoxon_p")
	meth, e8 := stringCol(t, "wilcoxon_method")
	wins, e9 := intCol(t, "wins")
	n, e10 := intCol(t, "n")
	if err := firstErr(e1, e2, e3, e4, e5, e6, e7, e8, e9, e10); err != nil {
		return nil, err
	}
	rows := make([]TestRow, len(geo))
	for i := range rows {
		rows[i] = TestRow{geo[i], base[i], delta[i], lo[i], hi[i], d[i], p[i], meth[i], int(wins[i]), int(n[i])}
	}
	return rows, nil
}
