package algos

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// bruteLayers is non-dominated sorting by definition: layer r is the set of
// points not dominated by any point outside layers < r.
func bruteLayers(points [][]float64) [][]int {
	n := len(points)
	done := make([]bool, n)
	var layers [][]int
	for left := n; left > 0; {
		var layer []int
		for i := 0; i < n; i++ {
			if done[i] {
				continue
			}
			dom := false
			for j := 0; j < n; j++ {
				if !done[j] && Dominates(points[j], points[i]) {
					dom = true
					break
				}
			}
			if !dom {
				layer = append(layer, i)
			}
		}
		for _, i := range layer {
			done[i] = true
		}
		left -= len(layer)
		layers = append(layers, layer)
	}
	return layers
}

func TestLayersMatchBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var l Layers
	for trial := 0; trial < 2000; trial++ {
		n, d := 1+rng.IntN(25), 2+rng.IntN(4)
		pts := make([][]float64, n)
		for i := range pts {
			pts[i] = make([]float64, d)
			for j := range pts[i] {
				pts[i][j] = float64(rng.IntN(4)) / 4 // ties and duplicates
			}
			if rng.IntN(5) == 0 && i > 0 {
				copy(pts[i], pts[rng.IntN(i)])
			}
		}
		// Ulp-level dominance that rounded sums cannot see.
		if n > 1 && rng.IntN(4) == 0 {
			copy(pts[1], pts[0])
			pts[1][0] = math.Nextafter(pts[0][0], 2)
		}
		k := 1 + rng.IntN(n)
		want := bruteLayers(pts)
		var wantFull, wantOver []int
		for _, layer := range want {
			if len(wantFull)+len(layer) > k {
				wantOver = layer
				break
			}
			wantFull = append(wantFull, layer...)
			if len(wantFull) == k {
				break
			}
		}
		full, over := l.Select(pts, k)
		if !slices.Equal(full, wantFull) || !slices.Equal(over, wantOver) {
			t.Fatalf("trial %d k=%d points %v: got full %v overflow %v, want %v %v", trial, k, pts, full, over, wantFull, wantOver)
		}
	}
}

func TestCrowdingDistanceByHand(t *testing.T) {
	// Three 2-D points on a line: (0,1), (0.25,0.75), (1,0). Objective 0 range
	// 1: the middle point gets (1 − 0)/1 = 1; objective 1 likewise 1: total 2.
	pts := [][]float64{{1, 0}, {0, 1}, {0.25, 0.75}}
	out := make([]float64, 3)
	CrowdingDistance(pts, []int{0, 1, 2}, out)
	if !math.IsInf(out[0], 1) || !math.IsInf(out[1], 1) || out[2] != 2 {
		t.Fatalf("crowding = %v, want [+Inf +Inf 2]", out)
	}
	// Four points: interior gaps differ. x: 0, .1, .5, 1 and y = 1 − x.
	pts = [][]float64{{0, 1}, {0.1, 0.9}, {0.5, 0.5}, {1, 0}}
	out = make([]float64, 4)
	CrowdingDistance(pts, []int{0, 1, 2, 3}, out)
	// Point 1: x gap (0.5 − 0)/1 = 0.5, y gap (1 − 0.5)/1 = 0.5 → 1.0;
	// point 2: (1 − 0.1) + (0.9 − 0) = 1.8.
	if math.Abs(out[1]-1.0) > 1e-15 || math.Abs(out[2]-1.8) > 1e-15 {
		t.Fatalf("crowding = %v, want [Inf 1 1.8 Inf]", out)
	}
	// A constant objective is skipped.
	pts = [][]float64{{0, 5}, {0.5, 5}, {1, 5}}
	out = make([]float64, 3)
	CrowdingDistance(pts, []int{0, 1, 2}, out)
	if out[1] != 1 {
		t.Fatalf("crowding with a constant objective = %v", out)
	}
}

func TestPickLargestSum(t *testing.T) {
	pts := [][]float64{{0.5, 0.5}, {0.9, 0.2}, {0.2, 0.8}, {0.6, 0.4}}
	out := make([]int, 2)
	PickLargestSum(pts, []int{0, 1, 2, 3}, out)
	// Sums 1.0, 1.1, 1.0, 1.0: arm 1, then the lowest index of the ties.
	if !slices.Equal(out, []int{1, 0}) {
		t.Fatalf("got %v, want [1 0]", out)
	}
}

// TestTopBySumMatchesSelect: the early-stopping TopBySum chooses exactly
// what Select followed by PickLargestSum chooses, on sets with ties,
// duplicates and ulp-level dominance, across successive calls (which reuse
// the previous order).
func TestTopBySumMatchesSelect(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	var a, b Layers
	for trial := 0; trial < 3000; trial++ {
		n, d := 1+rng.IntN(30), 2+rng.IntN(4)
		if trial%100 == 0 {
			a, b = Layers{}, Layers{}
		}
		pts := make([][]float64, n)
		for i := range pts {
			pts[i] = make([]float64, d)
			for j := range pts[i] {
				pts[i][j] = float64(rng.IntN(5)) / 4
			}
		}
		if n > 2 {
			copy(pts[2], pts[0])
			pts[2][0] = math.Nextafter(pts[0][0], 2)
		}
		k := 1 + rng.IntN(n)
		full, over := a.Select(pts, k)
		want := append([]int(nil), full...)
		rest := make([]int, k-len(full))
		PickLargestSum(pts, append([]int(nil), over...), rest)
		want = append(want, rest...)
		got := make([]int, k)
		b.TopBySum(pts, got)
		slices.Sort(want)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Fatalf("trial %d k=%d %v: TopBySum %v, Select+PickLargestSum %v", trial, k, pts, got, want)
		}
	}
}
