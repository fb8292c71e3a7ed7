// Package collect is the stage kind "collect": it gathers the summaries of
// an algorithm's final runs at η* on one (setting, geometry), one per final
// seed, into one table.
package collect

import (
	"context"
	"strconv"

	"thv/stages/formats"
	"thv/stages/stage"
)

// Kind is the name of the stage kind.
const Kind = "collect"

// The kind's input roles and output.
const (
	// SeedRole is the summary of the final run of one seed: SeedInputName.
	SeedRole stage.Role = "seed=*"
	// Final is the output: one formats.Summary row per seed.
	Final stage.OutputName = "final"
)

// Declared is what the kind reads and writes.
var Declared = stage.Declaration{
	Reads:   []stage.Role{SeedRole},
	Outputs: []stage.Output{{Name: Final, Doc: "the final runs' summaries at η*, one per seed"}},
}

// Params name the final runs of one algorithm: the inputs are the summaries
// of its runs at η* for every seed of Seeds, named by SeedInputName.
type Params struct {
	Algo  string   `json:"algo"`
	Eta   float64  `json:"eta"`
	Seeds []uint64 `json:"seeds"`
}

// SeedInputName is the input role of the final run of a seed.
func SeedInputName(seed uint64) string { return SeedRole.With(strconv.FormatUint(seed, 10)) }

// Run concatenates the final runs' summaries: output "final", a
// formats.Summary table with one row per seed in the order of Seeds.
func Run(ctx context.Context, params []byte, in stage.Inputs) (stage.Outputs, error) {
	p, err := stage.Start[Params](ctx, params)
	if err != nil {
		return nil, err
	}
	rows := make([]formats.Summary, 0, len(p.Seeds))
	for _, seed := range p.Seeds {
		s, err := stage.Read(in, SeedInputName(seed), formats.DecodeSummary)
		if err != nil {
			return nil, err
		}
		rows = append(rows, s)
	}
	b, err := formats.EncodeSummaries(rows)
	if err != nil {
		return nil, err
	}
	return stage.Outputs{string(Final): b}, nil
}
