// Package etaselect is the stage kind "select": the grid search of an
// algorithm's confidence parameter η. η* maximises the mean HV_last over the
// grid seeds (the smallest η on exact ties).
package etaselect

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"thv/stages/formats"
	"thv/stages/stage"
)

// Kind is the name of the stage kind ("select" is a Go keyword, hence the
// package name).
const Kind = "select"

// The kind's input roles and output.
const (
	// RunRole is the summary of the run at one (η, seed): RunInputName.
	RunRole stage.Role = "eta=*/seed=*"
	// Selection is the output: one formats.SelectionRow per η, in
	// increasing order, η* marked.
	Selection stage.OutputName = "selection"
)

// Declared is what the kind reads and writes.
var Declared = stage.Declaration{
	Reads:   []stage.Role{RunRole},
	Outputs: []stage.Output{{Name: Selection, Doc: "the grid search: mean HV_last per η, η* marked"}},
}

// Params describe one η grid search. The inputs are the summaries of the
// runs at every (η, seed), named by RunInputName.
type Params struct {
	Algo  string    `json:"algo"`
	Etas  []float64 `json:"etas"`
	Seeds []uint64  `json:"seeds"`
}

// RunInputName is the input role of the summary of the run at (η, seed).
func RunInputName(eta float64, seed uint64) string {
	return RunRole.With(fmt.Sprintf("%g", eta), strconv.FormatUint(seed, 10))
}

// Run picks η*: output Selection.
func Run(ctx context.Context, params []byte, in stage.Inputs) (stage.Outputs, error) {
	p, err := stage.Start[Params](ctx, params)
	if err != nil {
		return nil, err
	}
	etas := slices.Clone(p.Etas)
	slices.Sort(etas)
	rows := make([]formats.SelectionRow, len(etas))
	best := -1
	for e, eta := range etas {
		var sum float64
		for _, seed := range p.Seeds {
			s, err := stage.Read(in, RunInputName(eta, seed), formats.DecodeSummary)
			if err != nil {
				return nil, err
			}
			sum += s.HVLast
		}
		rows[e] = formats.SelectionRow{Eta: eta, MeanHVLast: sum / float64(len(p.Seeds)), Runs: len(p.Seeds)}
		if best < 0 || rows[e].MeanHVLast > rows[best].MeanHVLast {
			best = e
		}
	}
	if best >= 0 {
		rows[best].Selected = true
	}
	b, err := formats.EncodeSelection(rows)
	if err != nil {
		return nil, err
	}
	return stage.Outputs{string(Selection): b}, nil
}

// SelectedEta reads η* from a selection output.
func SelectedEta(selection []byte) (float64, error) {
	rows, err := formats.DecodeSelection(selection)
	if err != nil {
		return 0, err
	}
	for _, r := range rows {
		if r.Selected {
			return r.Eta, nil
		}
	}
	return 0, errors.New("selection has no selected η")
}
