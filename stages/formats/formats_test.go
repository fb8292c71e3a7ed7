package formats

import (
	"math"
	"reflect"
	"slices"
	"testing"

	"thv/artifacts/table"
)

// columnNames decodes b and returns its column names.
func columnNames(t *testing.T, b []byte) []string {
	t.Helper()
	tb, err := table.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	return tb.Names()
}

// roundTrip encodes v, checks the layout's column names, decodes and
// compares.
func roundTrip[V any](t *testing.T, v V, enc func(V) ([]byte, error), dec func([]byte) (V, error), names ...string) {
	t.Helper()
	b, err := enc(v)
	if err != nil {
		t.Fatal(err)
	}
	if got := columnNames(t, b); !slices.Equal(got, names) {
		t.Errorf("columns %q, want %q", got, names)
	}
	back, err := dec(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, v) {
		t.Errorf("round trip:\n got %+v\nwant %+v", back, v)
	}
	again, err := enc(back)
	if err != nil || string(again) != string(b) {
		t.Errorf("re-encoding gives other bytes (%v)", err)
	}
}

func TestInstanceRoundTrip(t *testing.T) {
	in := Instance{Means: [][]float64{{0.1, 0.9, 0.5}, {0.7, 0.2, 0.4}}, Front: []bool{true, false}}
	roundTrip(t, in, EncodeInstance, DecodeInstance, "arm", "front", "mu_1", "mu_2", "mu_3")
	if _, err := EncodeInstance(Instance{Means: [][]float64{{1, 2}, {3}}}); err == nil {
		t.Error("ragged means accepted")
	}
}

func TestBenchmarkRoundTrip(t *testing.T) {
	bm := Benchmark{VStar: 0.8, SStar: []int{4, 1, 7}, HVGreedy: 0.79, GStar: []int{1, 4, 2}}
	roundTrip(t, bm, EncodeBenchmark, DecodeBenchmark, "set", "position", "arm", "hv")
}

func TestSummaryRoundTrip(t *testing.T) {
	rows := []Summary{
		{Algo: "THV-UCB", Eta: 0.01, Seed: 3, Window: 100, HVLast: 0.6, VStar: 0.7, HVGreedy: 0.69, VAlpha: 0.69, RegretAlpha: -5, RegretPos: 4, RegretExact: 12},
		{Algo: "THV-UCB", Eta: 0.01, Seed: 4, Window: 100, HVLast: 0.61, VStar: 0.71, HVGreedy: 0.7, VAlpha: 0.7, RegretAlpha: math.Inf(1), RegretPos: 3, RegretExact: 11},
	}
	roundTrip(t, rows, EncodeSummaries, DecodeSummaries, append([]string{"algo", "eta", "seed", "window"}, SummaryColumns...)...)
	if want := []string{"hv_last", "v_star", "hv_greedy", "v_alpha", "regret_alpha", "regret_alpha_pos", "regret_exact"}; !slices.Equal(SummaryColumns, want) {
		t.Errorf("SummaryColumns = %q, want %q", SummaryColumns, want)
	}
}

func TestTrajectoryRoundTrip(t *testing.T) {
	hv := []float64{0.1, 0.3, 0.35, 0.5}
	roundTrip(t, hv, EncodeTrajectory, DecodeTrajectory, "round", "hv")
	b, _ := EncodeTrajectory(hv)
	tb, _ := table.Decode(b)
	if r, _ := tb.Int64s("round"); !slices.Equal(r, []int64{1, 2, 3, 4}) {
		t.Errorf("rounds %v", r)
	}
}

func TestSelectionRoundTrip(t *testing.T) {
	rows := []SelectionRow{{Eta: 0.01, MeanHVLast: 0.5, Runs: 3}, {Eta: 0.1, MeanHVLast: 0.6, Runs: 3, Selected: true}}
	roundTrip(t, rows, EncodeSelection, DecodeSelection, "eta", "mean_hv_last", "runs", "selected")
}

func TestCellsRoundTrip(t *testing.T) {
	cells := []Cell{{
		Geometry: "linear", Algo: "THV-UCB", EtaStar: 0.01, Seeds: 10, VStar: 0.3, HVGreedy: 0.29,
		HVLast: Estimate{0.25, 0.01}, RegretPos: Estimate{4, 1}, RegretAlpha: Estimate{-2, 3}, RegretExact: Estimate{13, 2},
	}}
	roundTrip(t, cells, EncodeCells, DecodeCells, "geometry", "algo", "eta_star", "seeds", "v_star_mean", "hv_greedy_mean",
		"hv_last_mean", "hv_last_ci", "regret_alpha_pos_mean", "regret_alpha_pos_ci",
		"regret_alpha_mean", "regret_alpha_ci", "regret_exact_mean", "regret_exact_ci")
	if c, ok := CellOf(cells, "linear", "THV-UCB"); !ok || c.RegretExact.Mean != 13 {
		t.Errorf("CellOf = %+v, %v", c, ok)
	}
	if _, ok := CellOf(cells, "convex", "THV-UCB"); ok {
		t.Error("CellOf found a missing cell")
	}
}

func TestTestsRoundTrip(t *testing.T) {
	rows := []TestRow{{Geometry: "convex", Baseline: "ParetoTS+", Delta: 0.02, CILow: 0.01, CIHigh: 0.03, CohensD: math.Inf(1), WilcoxonP: 0.125, WilcoxonMethod: "exact", Wins: 3, N: 3}}
	roundTrip(t, rows, EncodeTests, DecodeTests, "geometry", "baseline", "delta", "ci_low", "ci_high", "cohens_d", "wilcoxon_p", "wilcoxon_method", "wins", "n")
}

func TestCurvesRoundTrip(t *testing.T) {
	rows := []CurvePoint{
		{Geometry: "concave", Algo: "THV-UCB", Round: 1, Mean: 0.2, CILow: 0.1, CIHigh: 0.3},
		{Geometry: "concave", Algo: "THV-UCB", Round: 5, Mean: 0.4, CILow: 0.35, CIHigh: 0.45},
		{Geometry: "linear", Algo: "ParetoTS+", Round: 1, Mean: 0.25, CILow: 0.25, CIHigh: 0.25},
	}
	roundTrip(t, rows, EncodeCurves, DecodeCurves, "geometry", "algo", "round", "mean", "ci_low", "ci_high")
}

// TestDecodeErrorsNameTheLayout: a table of the wrong layout is rejected
// with one error naming the layout and what is missing.
func TestDecodeErrorsNameTheLayout(t *testing.T) {
	traj, err := EncodeTrajectory([]float64{1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := DecodeSummaries(traj); err == nil || err.Error() != `summary table: no column "algo" (columns: ["round" "hv"])` {
		t.Errorf("DecodeSummaries(trajectory): %v", err)
	}
	if _, err := DecodeCells([]byte("not parquet")); err == nil {
		t.Error("DecodeCells accepted garbage")
	}
}

// TestSummaryMemoIsDecoding: DecodeSummary's answer for the bytes of a
// one-row summary this process encoded (from its memo) is, bit for bit,
// what decoding them gives, for values a run can produce and stranger
// ones; altered bytes are not recalled.
func TestSummaryMemoIsDecoding(t *testing.T) {
	nan := math.Float64frombits(0x7ff8_0000_dead_beef)
	rows := []Summary{
		{Algo: "THV-UCB", Eta: 0.01, Seed: 3, Window: 100, HVLast: 0.6, VStar: 0.7, HVGreedy: 0.69, VAlpha: 0.69, RegretAlpha: -5, RegretPos: 4, RegretExact: 12},
		{Algo: "ParetoUCB", Eta: math.Copysign(0, -1), Seed: math.MaxUint64, Window: -1, HVLast: nan, VStar: math.Inf(-1), HVGreedy: math.SmallestNonzeroFloat64, VAlpha: math.Copysign(0, -1), RegretAlpha: math.Inf(1), RegretPos: math.MaxFloat64, RegretExact: 0x1p-1074},
		{Algo: "", Eta: 1, Seed: 1 << 63, Window: math.MaxInt, HVLast: 1},
		{Algo: "ünïcode ✓ \x00 tail", Eta: 0.3},
	}
	bits := func(s Summary) []uint64 {
		return []uint64{math.Float64bits(s.Eta), s.Seed, uint64(s.Window), math.Float64bits(s.HVLast), math.Float64bits(s.VStar),
			math.Float64bits(s.HVGreedy), math.Float64bits(s.VAlpha), math.Float64bits(s.RegretAlpha), math.Float64bits(s.RegretPos), math.Float64bits(s.RegretExact)}
	}
	for _, row := range rows {
		b, err := EncodeSummaries([]Summary{row})
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := encoded.recall(b); !ok {
			t.Fatalf("%q: not remembered", row.Algo)
		}
		got, err := DecodeSummary(b)
		if err != nil {
			t.Fatal(err)
		}
		want, err := DecodeSummaries(b) // decodes: the memo serves DecodeSummary only
		if err != nil {
			t.Fatal(err)
		}
		if got.Algo != want[0].Algo || !slices.Equal(bits(got), bits(want[0])) {
			t.Errorf("memo gives %+v, decoding %+v", got, want[0])
		}
		altered := slices.Clone(b)
		altered[len(altered)/2] ^= 0x40
		if _, ok := encoded.recall(altered); ok {
			t.Errorf("%q: altered bytes recalled", row.Algo)
		}
	}
	// Full: emptied, and still right.
	for i := range summaryMemoMax + 1 {
		encoded.remember([]byte{byte(i), byte(i >> 8), byte(i >> 16)}, Summary{Seed: uint64(i)})
	}
	if s, ok := encoded.recall([]byte{0, 0, 0}); ok {
		t.Errorf("memo kept %+v past its bound", s)
	}
	last := summaryMemoMax
	if s, ok := encoded.recall([]byte{byte(last), byte(last >> 8), byte(last >> 16)}); !ok || s.Seed != uint64(last) {
		t.Errorf("memo lost the entry after emptying: %+v %v", s, ok)
	}
}
