package algos

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestDominates(t *testing.T) {
	for _, c := range []struct {
		a, b []float64
		want bool
	}{
		{[]float64{1, 1}, []float64{0, 0}, true},
		{[]float64{1, 0}, []float64{0, 0}, true},  // ≥ everywhere, > somewhere
		{[]float64{1, 1}, []float64{1, 1}, false}, // equal: no
		{[]float64{1, 0}, []float64{0, 1}, false}, // incomparable
		{[]float64{0, 0}, []float64{1, 1}, false},
		{[]float64{0.5, 0.5, 0.5}, []float64{0.5, 0.5, math.Nextafter(0.5, 0)}, true},
	} {
		if got := Dominates(c.a, c.b); got != c.want {
			t.Errorf("Dominates(%v, %v) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

// bruteLayers is non-dominated sorting by its definition: layer r holds the
// points that no point outside layers < r dominates, ascending.
func bruteLayers(points [][]float64) [][]int {
	n := len(points)
	done := make([]bool, n)
	var layers [][]int
	for left := n; left > 0; {
		var layer []int
		for i := range n {
			if done[i] {
				continue
			}
			dom := false
			for j := range n {
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

// randomPoints draws n points in d dimensions on a coarse grid (so that
// equal coordinates, ties and exact duplicates are frequent), sometimes with
// ulp-level differences.
func randomPoints(rng *rand.Rand, n, d int) [][]float64 {
	pts := make([][]float64, n)
	levels := 2 + rng.IntN(5)
	for i := range pts {
		pts[i] = make([]float64, d)
		for j := range pts[i] {
			pts[i][j] = float64(rng.IntN(levels)) / float64(levels)
		}
		if i > 0 && rng.IntN(5) == 0 {
			copy(pts[i], pts[rng.IntN(i)]) // exact duplicate
		}
		if i > 0 && rng.IntN(10) == 0 {
			copy(pts[i], pts[rng.IntN(i)])
			j := rng.IntN(d)
			pts[i][j] = math.Nextafter(pts[i][j], float64(rng.IntN(2))) // one ulp up or down
		}
	}
	return pts
}

// TestLayersMatchBruteForce compares Peel with the brute-force sort on
// random sets with duplicates and ties, for every k, with one Layers reused
// across unrelated sets (stale hints) and across slightly moved sets (useful
// hints, as in successive bandit rounds).
func TestLayersMatchBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var l Layers
	check := func(trial int, pts [][]float64, k int) {
		t.Helper()
		want := bruteLayers(pts)
		var wantLayers [][]int
		var wantOver []int
		got := 0
		for _, layer := range want {
			if got >= k {
				break
			}
			if got+len(layer) > k {
				wantOver = layer
				break
			}
			wantLayers = append(wantLayers, layer)
			got += len(layer)
		}
		full, over := l.Peel(pts, k)
		if !slices.Equal(over, wantOver) {
			t.Fatalf("trial %d, k = %d, points %v: overflow %v, want %v", trial, k, pts, over, wantOver)
		}
		if l.FullLayers() != len(wantLayers) {
			t.Fatalf("trial %d, k = %d, points %v: %d full layers %v, want %v", trial, k, pts, l.FullLayers(), full, wantLayers)
		}
		var flat []int
		for r, layer := range wantLayers {
			if !slices.Equal(l.FullLayer(r), layer) {
				t.Fatalf("trial %d, k = %d, points %v: layer %d = %v, want %v", trial, k, pts, r, l.FullLayer(r), layer)
			}
			flat = append(flat, layer...)
		}
		if !slices.Equal(full, flat) {
			t.Fatalf("trial %d: full %v, want %v", trial, full, flat)
		}
		if f := l.FrontSize(pts); f != len(want[0]) {
			t.Fatalf("trial %d: FrontSize %d, want %d", trial, f, len(want[0]))
		}
		if f := EmpiricalFrontSize(pts); f != len(want[0]) {
			t.Fatalf("trial %d: EmpiricalFrontSize %d, want %d", trial, f, len(want[0]))
		}
	}
	for trial := range 3000 {
		n, d := 1+rng.IntN(30), 1+rng.IntN(5)
		pts := randomPoints(rng, n, d)
		check(trial, pts, 1+rng.IntN(n+2))
		// Successive rounds: move a few points a little and peel again.
		for range 3 {
			for range 1 + rng.IntN(3) {
				p := pts[rng.IntN(n)]
				p[rng.IntN(d)] += float64(rng.IntN(3)-1) / 8
			}
			check(trial, pts, 1+rng.IntN(n))
		}
	}
}

// TestLayersLargeFronts checks Peel against the brute force on sets with
// large first layers (signature filter on, for d ≤ 8, off for d = 9), over
// successive calls on moving points as in a bandit run.
func TestLayersLargeFronts(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for trial := range 60 {
		n, d := 20+rng.IntN(150), 1+rng.IntN(9)
		pts := frontPoints(rng, n, d)
		var l Layers
		for step := range 8 {
			k := 1 + rng.IntN(n)
			want := bruteLayers(pts)
			full, over := l.Peel(pts, k)
			var wantFull, wantOver []int
			for _, layer := range want {
				if len(wantFull) >= k {
					break
				}
				if len(wantFull)+len(layer) > k {
					wantOver = layer
					break
				}
				wantFull = append(wantFull, layer...)
			}
			if !slices.Equal(full, wantFull) || !slices.Equal(over, wantOver) {
				t.Fatalf("trial %d step %d (n = %d, d = %d, k = %d): full %v overflow %v, want %v %v", trial, step, n, d, k, full, over, wantFull, wantOver)
			}
			if f := l.FrontSize(pts); f != len(want[0]) {
				t.Fatalf("trial %d step %d: FrontSize %d, want %d", trial, step, f, len(want[0]))
			}
			for range 1 + rng.IntN(10) { // move some points a little
				p := pts[rng.IntN(n)]
				p[rng.IntN(d)] *= 1 + 0.05*rng.NormFloat64()
			}
		}
	}
}

func TestLayersSmallCases(t *testing.T) {
	var l Layers
	full, over := l.Peel(nil, 3)
	if len(full) != 0 || over != nil {
		t.Fatalf("no points: %v %v", full, over)
	}
	// Two layers of two; k = 3 overflows into the second, k = 4 takes both.
	pts := [][]float64{{0, 1}, {1, 0}, {0, 0.5}, {0.5, 0}}
	full, over = l.Peel(pts, 3)
	if !slices.Equal(full, []int{0, 1}) || !slices.Equal(over, []int{2, 3}) {
		t.Fatalf("k = 3: full %v overflow %v", full, over)
	}
	full, over = l.Peel(pts, 4)
	if !slices.Equal(full, []int{0, 1, 2, 3}) || over != nil || l.FullLayers() != 2 {
		t.Fatalf("k = 4: full %v overflow %v", full, over)
	}
	full, over = l.Peel(pts, 9) // k > n: everything, no overflow
	if len(full) != 4 || over != nil {
		t.Fatalf("k = 9: full %v overflow %v", full, over)
	}
	// A chain: every layer has one point.
	chain := [][]float64{{0.1, 0.1}, {0.3, 0.3}, {0.2, 0.2}}
	full, over = l.Peel(chain, 2)
	if !slices.Equal(full, []int{1, 2}) || over != nil {
		t.Fatalf("chain: full %v overflow %v", full, over)
	}
}

func TestLayersDoNotAllocate(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	pts := randomPoints(rng, 150, 5)
	var l Layers
	l.Reserve(150)
	slate := make([]int, 6)
	var f FrontTracker
	f.Reserve(150, 5)
	if a := testing.AllocsPerRun(50, func() {
		l.Peel(pts, 6)
		l.FrontSize(pts)
		l.TopBySum(pts, slate)
		pts[3][1] += 0.01
		f.Size(pts)
		f.OnFront(3)
	}); a != 0 {
		t.Fatalf("Layers and FrontTracker allocate %v times per call", a)
	}
	var c Crowding
	c.Reserve(150, 5)
	members := make([]int, 150)
	for i := range members {
		members[i] = i
	}
	out := make([]float64, 150)
	if a := testing.AllocsPerRun(50, func() { c.Distance(pts, members, out) }); a != 0 {
		t.Fatalf("Crowding.Distance allocates %v times per call", a)
	}
}

func BenchmarkPeel(b *testing.B) {
	// 150 points of a 5-D concave front (|N(0,I)| normalised), as the UCB
	// vectors of the paper's d = 5 setting look like once arms are learned.
	rng := rand.New(rand.NewPCG(3, 4))
	pts := make([][]float64, 150)
	for i := range pts {
		pts[i] = make([]float64, 5)
		var s float64
		for j := range pts[i] {
			pts[i][j] = math.Abs(rng.NormFloat64())
			s += pts[i][j] * pts[i][j]
		}
		scale := 1 / math.Sqrt(s)
		if i >= 52 {
			scale *= 0.3 // distractors
		}
		for j := range pts[i] {
			pts[i][j] *= scale
		}
	}
	var l Layers
	l.Reserve(150)
	b.ReportAllocs()
	for b.Loop() {
		l.Peel(pts, 6)
	}
}
