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
