package stages

import (
	"fmt"

	"thv/algos"
	"thv/artifacts"
)

// BenchmarkParams configure the hindsight benchmarks of an instance.
type BenchmarkParams struct {
	K         int     `json:"k"`
	Reference float64 `json:"reference"`
}

func init() {
	register(Kind{Name: "benchmark", Sources: []string{"hv", "envs", "algos", "stages/benchmark.go"}, Run: runBenchmark})
}

// runBenchmark computes V* (exact best k-subset) and HV(G*) of the input
// instance: output "benchmark" with one row per arm of S* and of G*
// (set, position, arm, hv — hv is the set's hypervolume).
func runBenchmark(params []byte, in Inputs) (Outputs, error) {
	p, err := decode[BenchmarkParams](params)
	if err != nil {
		return nil, err
	}
	inst, err := decodeInstance(in["instance"])
	if err != nil {
		return nil, err
	}
	b := algos.ComputeBenchmarks(inst, p.K, refPoint(p.Reference, inst.D()))
	var set []string
	var pos, arm []int64
	var val []float64
	add := func(name string, idx []int, v float64) {
		for a, i := range idx {
			set = append(set, name)
			pos = append(pos, int64(a))
			arm = append(arm, int64(i))
			val = append(val, v)
		}
	}
	add("S*", b.SStar, b.VStar)
	add("G*", b.GStar, b.HVGreedy)
	out, err := artifacts.EncodeParquet(artifacts.Table{Columns: []artifacts.Column{
		{Name: "set", String: set}, {Name: "position", Int64: pos}, {Name: "arm", Int64: arm}, {Name: "hv", Float64: val},
	}})
	if err != nil {
		return nil, err
	}
	return Outputs{"benchmark": out}, nil
}

func decodeBenchmark(b []byte) (algos.Benchmarks, error) {
	var bm algos.Benchmarks
	t, err := artifacts.DecodeParquet(b)
	if err != nil {
		return bm, fmt.Errorf("benchmark: %w", err)
	}
	set, err1 := stringCol(t, "set")
	arm, err2 := intCol(t, "arm")
	val, err3 := floatCol(t, "hv")
	if err := firstErr(err1, err2, err3); err != nil {
		return bm, fmt.Errorf("benchmark: %w", err)
	}
	for r := range set {
		switch set[r] {
		case "S*":
			bm.SStar, bm.VStar = append(bm.SStar, int(arm[r])), val[r]
		case "G*":
			bm.GStar, bm.HVGreedy = append(bm.GStar, int(arm[r])), val[r]
		}
	}
	return bm, nil
}

func refPoint(r float64, d int) []float64 {
	ref := make([]float64, d)
	for j := range ref {
		ref[j] = r
	}
	return ref
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}
