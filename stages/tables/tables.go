// Package tables is the stage kind "tables": the paper's LaTeX tables,
// rendered from the summarize outputs of every setting. Per setting the
// summary table (HV_last100 and final regret, mean ± CI over seeds), then
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

// Params configure the LaTeX tables. The inputs are, for every setting, its
// summarize outputs, named by CellsInputName and TestsInputName.
type Params struct {
	Settings   []formats.Setting `json:"settings"` // in table order
	Geometries []string          `json:"geometries"`
	Algorithms []AlgoInfo        `json:"algorithms"` // paper order, proposed method first
	Confidence float64           `json:"confidence"`
}

// AlgoInfo is what a table prints about an algorithm.
type AlgoInfo struct {
	Name     string `json:"name"`
	Family   string `json:"family"`
	Fidelity string `json:"fidelity"` // faithful, extension or —
	Cite     string `json:"cite"`
	UsesEta  bool   `json:"uses_eta"`
}

// CellsInputName is the input role of a setting's summarize "cells" output.
func CellsInputName(setting string) string { return "cells/" + setting }

// TestsInputName is the input role of a setting's summarize "tests" output.
func TestsInputName(setting string) string { return "tests/" + setting }

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
		name := "summary_" + s.Name + ".tex"
		out[name] = []byte(summaryTable(p, s, cells[s.Name]))
		files = append(files, name)
	}
	out["eta.tex"] = []byte(etaTable(p, cells))
	out["tests.tex"] = []byte(testsTable(p, tests))
	out["benchmarks.tex"] = []byte(benchmarksTable(p, cells))
	files = append(files, "eta.tex", "tests.tex", "benchmarks.tex")
	out["all.tex"] = []byte(allDocument(files))
	return out, nil
}
