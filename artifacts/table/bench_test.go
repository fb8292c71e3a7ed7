package table

import (
	"math"
	"testing"
)

func BenchmarkEncode50kRows(b *testing.B) {
	t := largeTable(50000)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Encode(t); err != nil {
			b.Fatal(err)
		}
	}
}

// trajectoryTable is a run task's trajectory output at T = n: round and hv.
func trajectoryTable(n int) Table {
	rounds := make([]int64, n)
	hv := make([]float64, n)
	for i := range n {
		rounds[i] = int64(i + 1)
		hv[i] = 0.75 - 0.5/math.Sqrt(float64(i+1)) + 1e-9*float64(i%7)
	}
	return Table{Columns: []Column{Int64Column("round", rounds), Float64Column("hv", hv)}}
}

// summaryTable is a run task's one-row summary output (11 columns, as
// stages/formats writes it).
func summaryTable() Table {
	cols := []Column{
		StringColumn("algo", []string{"THV-UCB"}), Float64Column("eta", []float64{0.5}),
		Int64Column("seed", []int64{12345}), Int64Column("window", []int64{100}),
	}
	for i, name := range []string{"hv_last", "v_star", "hv_greedy", "v_alpha", "regret_alpha", "regret_alpha_pos", "regret_exact"} {
		cols = append(cols, Float64Column(name, []float64{0.1 * float64(i+1)}))
	}
	return Table{Columns: cols}
}

func BenchmarkEncodeTrajectory3000(b *testing.B) {
	t := trajectoryTable(3000)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Encode(t); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncodeSummary(b *testing.B) {
	t := summaryTable()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Encode(t); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecode50kRows(b *testing.B) {
	data, err := Encode(largeTable(50000))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Decode(data); err != nil {
			b.Fatal(err)
		}
	}
}
