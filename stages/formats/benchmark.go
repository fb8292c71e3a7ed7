package formats

import "thv/artifacts/table"

// Benchmark is the benchmark table of an instance, the output of a
// benchmark task and an input of run tasks: the exact best size-k subset S*
// and the greedy subset G* on the true means, one row per arm of each, with
// columns set ("S*" or "G*"), position (in the set), arm and hv (the set's
// hypervolume). Its fields are those of algos.Benchmarks.
type Benchmark struct {
	VStar    float64 // HV(S*), the exact best size-k hypervolume
	SStar    []int   // S*
	HVGreedy float64 // HV(G*)
	GStar    []int   // G*, in selection order
}

// EncodeBenchmark writes a benchmark table: the rows of S*, then those of G*.
func EncodeBenchmark(b Benchmark) ([]byte, error) {
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
	return encode("benchmark",
		table.StringColumn("set", set), table.Int64Column("position", pos),
		table.Int64Column("arm", arm), table.Float64Column("hv", val))
}

// DecodeBenchmark reads a benchmark table. Rows of other sets are ignored.
func DecodeBenchmark(b []byte) (Benchmark, error) {
	c := read("benchmark", b)
	set, arm, val := c.strings("set"), c.int64s("arm"), c.float64s("hv")
	if err := c.check(); err != nil {
		return Benchmark{}, err
	}
	var bm Benchmark
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
