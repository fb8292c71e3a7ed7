// Package summarize is the stage kind "summarize": the statistics of one
// setting. Per (geometry, algorithm) it computes the mean and Student-t CI
// over seeds of every metric of the final runs (thv/stages/stats), and per
// geometry it compares the proposed method with the best baseline, paired
// by seed.
package summarize

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"thv/stages/formats"
	"thv/stages/stage"
	"thv/stages/stats"
)

// Kind is the name of the stage kind.
const Kind = "summarize"

// The kind's input roles and outputs.
const (
	// CellRole is the collect output of one (geometry, algorithm):
	// CellInputName.
	CellRole stage.Role = "*/*"
	// Cells is the statistics over seeds, one formats.Cell per geometry
	// and algorithm, in that order.
	Cells stage.OutputName = "cells"
	// Tests is the proposed method against the best baseline, one
	// formats.TestRow per geometry.
	Tests stage.OutputName = "tests"
)

// Declared is what the kind reads and writes.
var Declared = stage.Declaration{
	Reads: []stage.Role{CellRole},
	Outputs: []stage.Output{
		{Name: Cells, Doc: "the statistics over seeds (mean ± CI) of every geometry and algorithm"},
		{Name: Tests, Doc: "the proposed method against the best baseline of each geometry: paired tests"},
	},
}

// Params configure the statistics of one setting. The inputs are the
// collect outputs of every (geometry, algorithm), named by CellInputName.
type Params struct {
	Geometries []string `json:"geometries"`
	Algorithms []string `json:"algorithms"` // paper order; the first is the proposed method (THV-UCB)
	Confidence float64  `json:"confidence"`
	Resamples  int      `json:"bootstrap_resamples"`
	Seed       uint64   `json:"bootstrap_seed"`
}

// CellInputName is the input role of one (geometry, algorithm) cell.
func CellInputName(geometry, algo string) string { return CellRole.With(geometry, algo) }

// Run computes outputs Cells and Tests (the proposed method against the
// baseline of largest mean HV_last).
func Run(ctx context.Context, params []byte, in stage.Inputs) (stage.Outputs, error) {
	p, err := stage.Start[Params](ctx, params)
	if err != nil {
		return nil, err
	}
	if len(p.Algorithms) < 2 {
		return nil, errors.New("need the proposed method and at least one baseline")
	}
	var cells []formats.Cell
	var tests []formats.TestRow
	for _, g := range p.Geometries {
		rows := map[string][]formats.Summary{}
		for _, a := range p.Algorithms {
			r, err := stage.Read(in, CellInputName(g, a), formats.DecodeSummaries)
			if err != nil {
				return nil, err
			}
			if len(r) == 0 {
				return nil, fmt.Errorf("input %s: no final run", CellInputName(g, a))
			}
			slices.SortFunc(r, func(x, y formats.Summary) int { return cmp.Compare(x.Seed, y.Seed) })
			rows[a] = r
			cells = append(cells, cell(g, a, r, p.Confidence))
		}
		t, err := compareBest(g, p, rows)
		if err != nil {
			return nil, err
		}
		tests = append(tests, t)
	}
	cb, err := formats.EncodeCells(cells)
	if err != nil {
		return nil, err
	}
	tb, err := formats.EncodeTests(tests)
	if err != nil {
		return nil, err
	}
	return stage.Outputs{string(Cells): cb, string(Tests): tb}, nil
}

// cell computes the statistics of one (geometry, algorithm) over its final
// runs r (sorted by seed).
func cell(geometry, algo string, r []formats.Summary, level float64) formats.Cell {
	estimate := func(metric func(formats.Summary) float64) formats.Estimate {
		ci := stats.MeanWithCI(column(r, metric), level)
		return formats.Estimate{Mean: ci.Mean, HalfWidth: ci.HalfWidth}
	}
	return formats.Cell{
		Geometry: geometry, Algo: algo, EtaStar: r[0].Eta, Seeds: len(r),
		VStar:       estimate(func(s formats.Summary) float64 { return s.VStar }).Mean,
		HVGreedy:    estimate(func(s formats.Summary) float64 { return s.HVGreedy }).Mean,
		HVLast:      estimate(hvLast),
		RegretPos:   estimate(func(s formats.Summary) float64 { return s.RegretPos }),
		RegretAlpha: estimate(func(s formats.Summary) float64 { return s.RegretAlpha }),
		RegretExact: estimate(func(s formats.Summary) float64 { return s.RegretExact }),
	}
}

// compareBest compares the proposed method (the first algorithm) with the
// baseline of largest mean HV_last on geometry g, paired by seed.
func compareBest(g string, p Params, rows map[string][]formats.Summary) (formats.TestRow, error) {
	best, bestMean := "", math.Inf(-1)
	for _, a := range p.Algorithms[1:] {
		if m := stats.MeanWithCI(column(rows[a], hvLast), p.Confidence).Mean; m > bestMean {
			best, bestMean = a, m
		}
	}
	x, y, err := pairBySeed(rows[p.Algorithms[0]], rows[best])
	if err != nil {
		return formats.TestRow{}, fmt.Errorf("%s: %w", g, err)
	}
	c, err := stats.ComparePaired(x, y, p.Resamples, p.Seed, p.Confidence)
	if err != nil {
		return formats.TestRow{}, fmt.Errorf("%s: %w", g, err)
	}
	return formats.TestRow{
		Geometry: g, Baseline: best, Delta: c.Delta, CILow: c.CILow, CIHigh: c.CIHigh,
		CohensD: c.CohensD, WilcoxonP: c.WilcoxonP, WilcoxonMethod: c.WilcoxonMethod, Wins: c.Wins, N: c.N,
	}, nil
}

// pairBySeed returns the HV_last of a and b on their common seeds, in the
// order of a.
func pairBySeed(a, b []formats.Summary) (x, y []float64, err error) {
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
		return nil, nil, errors.New("no common seeds to pair")
	}
	return x, y, nil
}

func hvLast(s formats.Summary) float64 { return s.HVLast }

func column(rows []formats.Summary, f func(formats.Summary) float64) []float64 {
	out := make([]float64, len(rows))
	for i, r := range rows {
		out[i] = f(r)
	}
	return out
}
