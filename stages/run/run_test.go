package run_test

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"testing"

	_ "thv/algos/randomk" // registers RandomK
	"thv/envs"
	"thv/stages/benchmark"
	"thv/stages/formats"
	"thv/stages/instance"
	"thv/stages/run"
	"thv/stages/stage"
)

// runKind runs a kind's Run on JSON-encoded params.
func runKind(t *testing.T, f func(context.Context, []byte, stage.Inputs) (stage.Outputs, error), params any, in stage.Inputs) stage.Outputs {
	t.Helper()
	b, err := json.Marshal(params)
	if err != nil {
		t.Fatal(err)
	}
	out, err := f(context.Background(), b, in)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestInstanceBenchmarkRun chains the three kinds as the pipeline does and
// checks each output against the science packages and the others.
func TestInstanceBenchmarkRun(t *testing.T) {
	ip := instance.Params{Geometry: "concave", D: 3, N: 20, Seed: 4}
	inst := runKind(t, instance.Run, ip, nil)
	fi, err := formats.DecodeInstance(inst["instance"])
	if err != nil {
		t.Fatal(err)
	}
	want, err := envs.Generate(envs.Geometry(ip.Geometry), ip.D, ip.N, ip.Seed)
	if err != nil {
		t.Fatal(err)
	}
	if got := envs.Instance(fi); len(got.Means) != ip.N || got.Means[7][2] != want.Means[7][2] || got.Front[7] != want.Front[7] {
		t.Fatalf("instance output differs from envs.Generate")
	}

	bench := runKind(t, benchmark.Run, benchmark.Params{K: 3, Reference: 0}, stage.Inputs{"instance": inst["instance"]})
	bm, err := formats.DecodeBenchmark(bench["benchmark"])
	if err != nil {
		t.Fatal(err)
	}
	if len(bm.SStar) != 3 || len(bm.GStar) != 3 || bm.HVGreedy > bm.VStar || bm.VStar <= 0 {
		t.Fatalf("benchmark %+v", bm)
	}

	rp := run.Params{Algo: "RandomK", K: 3, T: 50, Sigma: 0.05, Seed: 1, MinPulls: 1, Window: 10, Trajectory: true}
	out := runKind(t, run.Run, rp, stage.Inputs{"instance": inst["instance"], "benchmark": bench["benchmark"]})
	s, err := formats.DecodeSummary(out["summary"])
	if err != nil {
		t.Fatal(err)
	}
	hv, err := formats.DecodeTrajectory(out["trajectory"])
	if err != nil {
		t.Fatal(err)
	}
	if s.Algo != "RandomK" || s.Seed != 1 || s.Window != 10 || s.VStar != bm.VStar || s.HVGreedy != bm.HVGreedy || len(hv) != rp.T {
		t.Fatalf("summary %+v, %d rounds", s, len(hv))
	}
	var last float64
	for _, v := range hv[rp.T-s.Window:] {
		last += v
	}
	if d := last/float64(s.Window) - s.HVLast; d > 1e-12 || d < -1e-12 {
		t.Errorf("HV_last %v is not the mean of the last %d rounds of the trajectory (%v)", s.HVLast, s.Window, last/float64(s.Window))
	}
	// Same inputs, same bytes.
	again := runKind(t, run.Run, rp, stage.Inputs{"instance": inst["instance"], "benchmark": bench["benchmark"]})
	if string(again["summary"]) != string(out["summary"]) || string(again["trajectory"]) != string(out["trajectory"]) {
		t.Error("run is not deterministic")
	}
	// Without the trajectory asked for: the same summary, no trajectory.
	rp.Trajectory = false
	bare := runKind(t, run.Run, rp, stage.Inputs{"instance": inst["instance"], "benchmark": bench["benchmark"]})
	if _, ok := bare["trajectory"]; ok || len(bare) != 1 || string(bare["summary"]) != string(out["summary"]) {
		t.Errorf("a run without its trajectory: outputs %v", slices.Sorted(maps.Keys(bare)))
	}
}

func TestRunErrors(t *testing.T) {
	inst := runKind(t, instance.Run, instance.Params{Geometry: "linear", D: 2, N: 10, Seed: 0}, nil)
	params, _ := json.Marshal(run.Params{Algo: "RandomK", K: 2, T: 10, Sigma: 0.05})
	if _, err := run.Run(context.Background(), params, stage.Inputs{"instance": inst["instance"]}); err == nil || err.Error() != "missing input benchmark" {
		t.Errorf("without a benchmark: %v", err)
	}
	if _, err := run.Run(context.Background(), []byte(`{"algo":"RandomK","bogus":1}`), nil); err == nil {
		t.Error("unknown parameter accepted")
	}
	if _, err := benchmark.Run(context.Background(), []byte(`{"k":2}`), stage.Inputs{"instance": []byte("junk")}); err == nil {
		t.Error("a damaged instance accepted")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := instance.Run(ctx, []byte(`{"geometry":"linear","d":2,"n":10,"seed":0}`), nil); err != context.Canceled {
		t.Errorf("cancelled context: %v", err)
	}
}
