package algos

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestPickLargest(t *testing.T) {
	score := []float64{1.0, 1.1, 1.0, 1.0, 0.5, 2}
	cand := []int{3, 2, 1, 0, 4}
	out := make([]int, 3)
	PickLargest(score, cand, out)
	// 1.1 (arm 1), then the ties at 1.0 by lowest index: arms 0, 2. Arm 5 is
	// not a candidate.
	if !slices.Equal(out, []int{1, 0, 2}) {
		t.Fatalf("got %v, want [1 0 2]", out)
	}
}

func TestPickUniform(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	const R = 30000
	count := map[[2]int]int{}
	for range R {
		cand := []int{10, 11, 12, 13}
		out := make([]int, 2)
		PickUniform(cand, out, rng)
		if out[0] == out[1] {
			t.Fatalf("repeated arm %v", out)
		}
		count[[2]int{min(out[0], out[1]), max(out[0], out[1])}]++
	}
	// The six 2-subsets of four arms, each with probability 1/6.
	if len(count) != 6 {
		t.Fatalf("subsets seen: %v", count)
	}
	for s, c := range count {
		if math.Abs(float64(c)/R-1.0/6) > 0.01 {
			t.Errorf("subset %v chosen %d/%d times, want ≈ 1/6", s, c, R)
		}
	}
}

// TestSumOrderFirst: First returns what the scan by Before returns, on
// vectors that are permutations of one another (sums equal exactly, the
// computed ones apart by rounding), near-equal ones, far ones and exact
// duplicates, with Abs given or nil, over arms in any order.
func TestSumOrderFirst(t *testing.T) {
	rng := rand.New(rand.NewPCG(61, 62))
	for trial := range 5000 {
		n, d := 1+rng.IntN(40), 2+rng.IntN(5)
		base := make([]float64, d)
		for j := range base {
			base[j] = rng.Float64()
		}
		pts := make([][]float64, n)
		for i := range pts {
			pts[i] = slices.Clone(base)
			switch rng.IntN(4) {
			case 0: // a permutation: the same exact sum
				rng.Shuffle(d, func(a, b int) { pts[i][a], pts[i][b] = pts[i][b], pts[i][a] })
			case 1: // an ulp away
				j := rng.IntN(d)
				pts[i][j] = math.Nextafter(pts[i][j], float64(rng.IntN(2)))
			case 2: // far
				for j := range pts[i] {
					pts[i][j] = rng.Float64()
				}
			}
		}
		sums, abs := make([]float64, n), make([]float64, n)
		CoordSums(pts, sums)
		for i, p := range pts {
			for _, x := range p {
				abs[i] += math.Abs(x)
			}
		}
		o := SumOrder{Points: pts, Sums: sums}
		if trial%2 == 0 {
			o.Abs = abs
		}
		arms := rng.Perm(n)[:1+rng.IntN(n)]
		want := 0
		for c, i := range arms {
			if o.Before(i, arms[want]) {
				want = c
			}
		}
		if got := o.First(arms); got != want {
			t.Fatalf("trial %d: First = %d (arm %d), the scan %d (arm %d); points %v", trial, got, arms[got], want, arms[want], pts)
		}
	}
}
