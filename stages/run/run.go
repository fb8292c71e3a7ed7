// Package run is the stage kind "run": one bandit run of an algorithm on an
// instance (algos.Run), which yields its HV trajectory and its summary
// metrics.
//
// The package does not import the algorithm families: an algorithm is found
// in the algos registry, where its family package (thv/algos/<family>)
// registers it when the binary links it in, and a run task's code is this
// package's plus its algorithm's family.
package run

import (
	"context"
	"slices"

	"thv/algos"
	"thv/envs"
	"thv/stages/formats"
	"thv/stages/stage"
)

// Kind is the name of the stage kind.
const Kind = "run"

// The kind's input roles and outputs.
const (
	InstanceRole  stage.Role = "instance"  // formats.Instance
	BenchmarkRole stage.Role = "benchmark" // formats.Benchmark
	// Summary is the run's metrics (one formats.Summary row).
	Summary stage.OutputName = "summary"
	// Trajectory is HV(S_t) for every round (the formats trajectory table).
	Trajectory stage.OutputName = "trajectory"
)

// Declared is what the kind reads and writes.
var Declared = stage.Declaration{
	Reads: []stage.Role{InstanceRole, BenchmarkRole},
	Outputs: []stage.Output{
		{Name: Summary, Doc: "the run's metrics: hv_last (the mean HV over the last hv_window rounds), the three regrets, its benchmarks"},
		{Name: Trajectory, Doc: "HV(S_t), the true hypervolume of the run's slate in every round"},
	},
}

// Params fully determine one bandit run (with its two inputs).
type Params struct {
	Algo      string             `json:"algo"`
	Eta       float64            `json:"eta"`
	Params    map[string]float64 `json:"params"`
	K         int                `json:"k"`
	T         int                `json:"T"`
	Sigma     float64            `json:"sigma"`
	Seed      uint64             `json:"seed"`
	MinPulls  int                `json:"min_pulls"`
	InitTies  string             `json:"init_ties"`
	Reference float64            `json:"reference"`
	Window    int                `json:"hv_window"`
	// Readings of the paper (algos.RunSpec); empty for the default, so
	// that they enter no key of a default run.
	RegretRounds string `json:"regret_rounds,omitempty"`
	BenchmarkD3  string `json:"benchmark_d3,omitempty"`
	EtaScale     string `json:"eta_scale,omitempty"`
	// Trajectory keeps the run's per-round trajectory as an output; only
	// the runs a figure draws need it (it is most of a run's bytes).
	Trajectory bool `json:"trajectory,omitempty"`
}

// The decoded inputs of earlier tasks of this process (memo.go) and their
// simulations (simulations.go).
var (
	instances  memo[formats.Instance]
	benchmarks memo[formats.Benchmark]
	simulated  = simulations{maxBytes: maxSimulationBytes}
)

// Run simulates one run on input InstanceRole against input
// BenchmarkRole: outputs Summary and, if its parameters ask for it,
// Trajectory.
func Run(ctx context.Context, params []byte, in stage.Inputs) (stage.Outputs, error) {
	p, err := stage.Start[Params](ctx, params)
	if err != nil {
		return nil, err
	}
	fi, err := stage.Read(in, InstanceRole, instances.decode(formats.DecodeInstance))
	if err != nil {
		return nil, err
	}
	bench, err := stage.Read(in, BenchmarkRole, benchmarks.decode(formats.DecodeBenchmark))
	if err != nil {
		return nil, err
	}
	key, err := simulationKey(p, in[string(InstanceRole)], in[string(BenchmarkRole)])
	if err != nil {
		return nil, err
	}
	sim, err := simulated.do(key, func() ([]byte, []float64, error) {
		return simulate(p, fi, bench)
	})
	if err != nil {
		return nil, err
	}
	out := stage.Outputs{string(Summary): slices.Clone(sim.summary)}
	if p.Trajectory {
		if out[string(Trajectory)], err = formats.EncodeTrajectory(sim.hv); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// simulate simulates the run of p on a decoded instance against its
// benchmarks: its encoded summary and its trajectory.
func simulate(p Params, fi formats.Instance, bench formats.Benchmark) ([]byte, []float64, error) {
	inst := envs.Instance(fi) // algos.Run validates it
	ref := slices.Repeat([]float64{p.Reference}, inst.D())
	tr, s, err := algos.Run(algos.RunSpec{
		Algo: p.Algo, Eta: p.Eta, Params: p.Params, Instance: &inst,
		K: p.K, T: p.T, Sigma: p.Sigma, Seed: p.Seed, MinPulls: p.MinPulls, InitTies: p.InitTies,
		Ref: ref, Window: p.Window,
		RegretRounds: p.RegretRounds, BenchmarkD3: p.BenchmarkD3, EtaScale: p.EtaScale,
	}, algos.Benchmarks(bench))
	if err != nil {
		return nil, nil, err
	}
	sum, err := formats.EncodeSummaries([]formats.Summary{{
		Algo: p.Algo, Eta: p.Eta, Seed: p.Seed, Window: s.Window,
		HVLast: s.HVLast, VStar: s.VStar, HVGreedy: s.HVGreedy, VAlpha: s.VAlpha,
		RegretAlpha: s.RegretAlpha, RegretPos: s.RegretPos, RegretExact: s.RegretExact,
	}})
	return sum, tr.HV, err
}
