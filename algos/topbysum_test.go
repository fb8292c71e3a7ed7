package algos

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestTopBySumMatchesPeel: the early-stopping TopBySum chooses exactly the
// set Peel followed by PickLargestSum (the coordinate sums in exact
// arithmetic) chooses, on sets
// with sum ties, duplicates and ulp-level dominance; TopBySumOf given those
// sums fills the same slate in the same order, with a heap or (Kept) the
// repaired order of its last call.
func TestTopBySumMatchesPeel(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	var a, b, c, e Layers
	for trial := range 4000 {
		n, d := 1+rng.IntN(40), 1+rng.IntN(5)
		var pts [][]float64
		if trial%2 == 0 {
			pts = randomPoints(rng, n, d)
		} else {
			pts = frontPoints(rng, n, d)
		}
		sums := make([]float64, n)
		CoordSums(pts, sums)
		k := 1 + rng.IntN(n)
		full, over := a.Peel(pts, k)
		want := slices.Clone(full)
		rest := make([]int, k-len(full))
		PickLargestSum(&SumOrder{Points: pts, Sums: sums}, slices.Clone(over), rest)
		want = append(want, rest...)
		got := make([]int, k)
		b.TopBySum(pts, got)
		// TopBySumOf with the same sums, and with the kept order (twice:
		// repaired from another trial's order, then from its own after a
		// few points moved): the same slate, in the same order.
		of := make([]int, k)
		c.TopBySumOf(pts, sums, nil, of)
		if !slices.Equal(of, got) {
			t.Fatalf("trial %d k = %d %v: TopBySumOf %v, TopBySum %v", trial, k, pts, of, got)
		}
		slices.Sort(want)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Fatalf("trial %d k = %d %v: TopBySum %v, Peel + PickLargest %v", trial, k, pts, got, want)
		}
		e.Kept = true
		b.TopBySum(pts, got) // got was sorted
		for step := range 2 {
			if step == 1 {
				for range 1 + rng.IntN(3) {
					pts[rng.IntN(n)][rng.IntN(d)] = float64(rng.IntN(5)) / 4
				}
				CoordSums(pts, sums)
				b.TopBySum(pts, got)
			}
			e.TopBySumOf(pts, sums, nil, of)
			if !slices.Equal(of, got) {
				t.Fatalf("trial %d step %d k = %d %v: TopBySumOf kept %v, TopBySum %v", trial, step, k, pts, of, got)
			}
		}
	}
}
