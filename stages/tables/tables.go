// Package tables is the stage kind "tables": the paper's LaTeX tables,
// rendered from the summarize outputs of every setting. Per setting the
// summary table (HV_last and final regret, mean ± CI over seeds), then
// the η* table, the statistical tests and the benchmarks, and all.tex, a
// standalone document including them all.
package tables

import (
	"context"

	"thv/stages/formats"
	"thv/stages/stage"
)

// Kind is the name of the stage kind.
const Kind = "tables"

// The kind's input roles and outputs, all LaTeX.
const (
	// CellsRole and TestsRole are a setting's summarize outputs:
	// CellsInputName, TestsInputName.
	CellsRole stage.Role = "cells/*"
	TestsRole stage.Role = "tests/*"
	// SummaryTable is setting *'s table of results.
	SummaryTable    stage.OutputName = "summary_*.tex"
	EtaTable        stage.OutputName = "eta.tex"
	TestsTable      stage.OutputName = "tests.tex"
	BenchmarksTable stage.OutputName = "benchmarks.tex"
	// All is a standalone document of them all.
	All stage.OutputName = "all.tex"
)

// Declared is what the kind reads and writes.
var Declared = stage.Declaration{
	Reads: []stage.Role{CellsRole, TestsRole},
	Outputs: []stage.Output{
		{Name: SummaryTable, Results: "tables", Doc: "summary table (HV_last and final α-regret, mean ± 95% CI) for setting *"},
		{Name: EtaTable, Results: "tables", Doc: "η* per algorithm, setting and geometry (grid search)"},
		{Name: TestsTable, Results: "tables", Doc: "the proposed method vs the best baseline per setting: Δ, bootstrap CI, Cohen's d, Wilcoxon p, wins"},
		{Name: BenchmarksTable, Results: "tables", Doc: "exact V* vs HV(G*), and the proposed method's exact regret"},
		{Name: All, Results: "tables", Doc: "standalone LaTeX document including every table (pdflatex all.tex)"},
	},
}

// Params configure the LaTeX tables. The inputs are, for every setting, its
// summarize outputs, named by CellsInputName and TestsInputName.
type Params struct {
	Settings   []formats.Setting `json:"settings"` // in table order
	Geometries []string          `json:"geometries"`
	Algorithms []AlgoInfo        `json:"algorithms"` // paper order, proposed method first
	Confidence float64           `json:"confidence"`
	// HVWindow is metrics.hv_window, the rounds hv_last averages over: the
	// tables name the metric HV_last<HVWindow>, as the paper (HV_last100).
	HVWindow int `json:"hv_window"`
}

// AlgoInfo is what a table prints about an algorithm.
type AlgoInfo struct {
	Name     string `json:"name"`
	Family   string `json:"family"`
	Fidelity string `json:"fidelity"` // faithful, extension or —
	Cite     string `json:"cite"`
	UsesEta  bool   `json:"uses_eta"`
}

// CellsInputName is the input role of a setting's summarize cells.
func CellsInputName(setting string) string { return CellsRole.With(setting) }

// TestsInputName is the input role of a setting's summarize tests.
func TestsInputName(setting string) string { return TestsRole.With(setting) }

// Run renders summary_<setting>.tex per setting, eta.tex, tests.tex,
// benchmarks.tex and all.tex.
func Run(ctx context.Context, params []byte, in stage.Inputs) (stage.Outputs, error) {
	p, err := stage.Start[Params](ctx, params)
	if err != nil {
		return nil, err
	}
	cells := map[string][]formats.Cell{}
	tests := map[string][]formats.TestRow{}
	for _, s := range p.Settings {
		c, err := stage.Read(in, CellsInputName(s.Name), formats.DecodeCells)
		if err != nil {
			return nil, err
		}
		t, err := stage.Read(in, TestsInputName(s.Name), formats.DecodeTests)
		if err != nil {
			return nil, err
		}
		cells[s.Name], tests[s.Name] = c, t
	}
	out := stage.Outputs{}
	var files []string
	for _, s := range p.Settings {
		name := SummaryTable.With(s.Name)
		out[name] = []byte(summaryTable(p, s, cells[s.Name]))
		files = append(files, name)
	}
	out[string(EtaTable)] = []byte(etaTable(p, cells))
	out[string(TestsTable)] = []byte(testsTable(p, tests))
	out[string(BenchmarksTable)] = []byte(benchmarksTable(p, cells))
	files = append(files, string(EtaTable), string(TestsTable), string(BenchmarksTable))
	out[string(All)] = []byte(allDocument(files))
	return out, nil
}
