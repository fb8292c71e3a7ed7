// Package instance is the stage kind "instance": it generates one of the
// paper's synthetic instances (envs.Generate) and writes it as the instance
// table of thv/stages/formats.
package instance

import (
	"context"

	"thv/envs"
	"thv/stages/formats"
	"thv/stages/stage"
)

// Kind is the name of the stage kind.
const Kind = "instance"

// Instance is the output: the instance's arm means (formats.Instance).
const Instance stage.OutputName = "instance"

// Declared is what the kind reads (nothing) and writes.
var Declared = stage.Declaration{Outputs: []stage.Output{{Name: Instance, Doc: "the instance: its arms' true means and Pareto front"}}}

// Params identify one synthetic instance.
type Params struct {
	Geometry string `json:"geometry"`
	D        int    `json:"d"`
	N        int    `json:"n"`
	Seed     uint64 `json:"seed"`
	// The generator's reading of the paper's open points (envs.Reading);
	// the planner sets only the fields that matter for Geometry.
	envs.Reading
}

// Run generates the instance: output Instance.
func Run(ctx context.Context, params []byte, _ stage.Inputs) (stage.Outputs, error) {
	p, err := stage.Start[Params](ctx, params)
	if err != nil {
		return nil, err
	}
	in, err := envs.GenerateWith(envs.Geometry(p.Geometry), p.D, p.N, p.Seed, p.Reading)
	if err != nil {
		return nil, err
	}
	b, err := formats.EncodeInstance(formats.Instance(*in))
	if err != nil {
		return nil, err
	}
	return stage.Outputs{string(Instance): b}, nil
}
