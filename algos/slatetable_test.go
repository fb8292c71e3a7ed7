package algos

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"thv/hv"
)

// TestSlateTable checks the open-addressing table against a map, through
// its growth, on packed slates that differ in one field (the case a weak
// hash would pile into one slot) and on random ones.
func TestSlateTable(t *testing.T) {
	var tab slateTable
	want := map[uint64]float64{}
	rng := rand.New(rand.NewPCG(1, 2))
	check := func() {
		t.Helper()
		for k, v := range want {
			if got, ok := tab.get(k); !ok || got != v {
				t.Fatalf("get(%#x) = %v, %v; want %v", k, got, ok, v)
			}
		}
		if tab.n != len(want) {
			t.Fatalf("n = %d, want %d", tab.n, len(want))
		}
	}
	if _, ok := tab.get(1); ok {
		t.Fatal("the empty table has a key")
	}
	for i := range 1000 {
		slate := []int{i % 1000, 1001, 1002, 1003, 1004, 1005} // first field varies
		if i%2 == 1 {
			slate = []int{rng.IntN(1000), rng.IntN(1000), rng.IntN(1000)}
		}
		k, ok := packSlate(slate, 1022)
		if !ok || k == 0 {
			t.Fatalf("packSlate(%v) = %#x, %v", slate, k, ok)
		}
		v := rng.Float64()
		tab.put(k, v)
		want[k] = v
		if i%97 == 0 {
			check()
		}
	}
	check()
	for range 1000 {
		k := rng.Uint64() | 1<<63 // not a packed slate: none is stored
		if _, ok := tab.get(k); ok {
			t.Fatalf("get(%#x) found a key never put", k)
		}
	}
}

// TestSortSlate checks sortSlate against slices.Sort on random slates of
// every size up to past its insertion sort's limit.
func TestSortSlate(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for n := range 20 {
		for range 200 {
			s := make([]int, n)
			for i := range s {
				s[i] = rng.IntN(8)
			}
			want := slices.Clone(s)
			slices.Sort(want)
			sortSlate(s)
			if !slices.Equal(s, want) {
				t.Fatalf("sortSlate gave %v, want %v", s, want)
			}
		}
	}
}

// TestSlateHVReuse: a run's slate memo that reuses the scratch of earlier
// runs on other instances (of other sizes, dense and sparse tables, and
// slates too large to pack) gives every slate's volume bit for bit as
// computed afresh.
func TestSlateHVReuse(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for r := range 12 {
		n, d, k := []int{36, 150, 8, 1500}[r%4], 2+r%4, 2+r/2 // pairs of runs share k, so keys recur
		means := make([][]float64, n)
		for i := range means {
			means[i] = make([]float64, d)
			for j := range means[i] {
				means[i][j] = rng.Float64()
			}
		}
		hvOf, done := newSlateHV(means, nil)
		var calc hv.Calculator
		for range 50 + 3000*(r%2) { // odd runs fill a large table
			slate := rng.Perm(n)[:min(k, n)]
			slices.Sort(slate)
			pts := make([][]float64, len(slate))
			for a, i := range slate {
				pts[a] = means[i]
			}
			want := calc.Volume(pts, nil)
			for range 2 { // computed, then from the memo
				if got := hvOf(slate); math.Float64bits(got) != math.Float64bits(want) {
					t.Fatalf("run %d, slate %v: %v, want %v", r, slate, got, want)
				}
			}
		}
		done()
	}
}
