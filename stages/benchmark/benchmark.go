// Package benchmark is the stage kind "benchmark": the hindsight benchmarks
// of an instance, V* (the exact best size-k subset) and HV(G*) (the greedy
// subset on the true means), computed by algos.ComputeBenchmarks.
package benchmark

import (
	"context"
	"fmt"
	"slices"

	"thv/algos"
	"thv/envs"
	"thv/stages/formats"
	"thv/stages/stage"
)

// Kind is the name of the stage kind.
const Kind = "benchmark"

// The kind's input role and output.
const (
	// InstanceRole is the instance (formats.Instance).
	InstanceRole stage.Role = "instance"
	// Benchmarks is the output (formats.Benchmark).
	Benchmarks stage.OutputName = "benchmark"
)

// Declared is what the kind reads and writes.
var Declared = stage.Declaration{
	Reads:   []stage.Role{InstanceRole},
	Outputs: []stage.Output{{Name: Benchmarks, Doc: "the instance's hindsight benchmarks: V*, HV(G*) and the slates that reach them"}},
}

// Params configure the hindsight benchmarks of an instance.
type Params struct {
	K         int     `json:"k"`
	Reference float64 `json:"reference"`
}

// Run computes the benchmarks of input InstanceRole: output Benchmarks.
func Run(ctx context.Context, params []byte, in stage.Inputs) (stage.Outputs, error) {
	p, err := stage.Start[Params](ctx, params)
	if err != nil {
		return nil, err
	}
	fi, err := stage.Read(in, InstanceRole, formats.DecodeInstance)
	if err != nil {
		return nil, err
	}
	inst := envs.Instance(fi)
	if err := inst.Validate(); err != nil {
		return nil, fmt.Errorf("input instance: %w", err)
	}
	ref := slices.Repeat([]float64{p.Reference}, inst.D())
	b, err := formats.EncodeBenchmark(formats.Benchmark(algos.ComputeBenchmarks(&inst, p.K, ref)))
	if err != nil {
		return nil, err
	}
	return stage.Outputs{string(Benchmarks): b}, nil
}
