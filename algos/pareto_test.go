package algos

import (
	"cmp"
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

// TestFrontTracker follows random sequences of edits (a few vectors moved,
// sometimes onto another one, sometimes a whole new set or a new size) and
// compares the tracked front, its size and its members, with the
// brute-force one.
func TestFrontTracker(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	var f FrontTracker
	for trial := range 500 {
		n, d := 1+rng.IntN(25), 1+rng.IntN(5)
		pts := randomPoints(rng, n, d)
		for step := range 20 {
			switch r := rng.IntN(10); {
			case r == 0:
				pts = randomPoints(rng, n, d)
			case r == 1:
				copy(pts[rng.IntN(n)], pts[rng.IntN(n)])
			case r == 2: // signs of zeros flipped: equal values, other bits
				for _, p := range pts {
					for j, x := range p {
						if x == 0 {
							p[j] = -x
						}
					}
				}
			default:
				for range 1 + rng.IntN(3) {
					pts[rng.IntN(n)][rng.IntN(d)] = float64(rng.IntN(5)) / 4
				}
			}
			front := bruteLayers(pts)[0]
			if got := f.Size(pts); got != len(front) {
				t.Fatalf("trial %d step %d, points %v: tracked front size %d, want %d", trial, step, pts, got, len(front))
			}
			checkDeps(t, &f, pts)
			for i := range pts {
				if got, want := f.OnFront(i), slices.Contains(front, i); got != want {
					t.Fatalf("trial %d step %d, points %v: OnFront(%d) = %v, want %v", trial, step, pts, i, got, want)
				}
			}
		}
	}
}

// frontPoints draws n points of which about half lie on the positive unit
// sphere (mutually non-dominated: large first layers, which switch the
// signature filter on) and the rest inside it, with exact duplicates and
// one-ulp neighbours.
func frontPoints(rng *rand.Rand, n, d int) [][]float64 {
	pts := make([][]float64, n)
	for i := range pts {
		p := make([]float64, d)
		var s float64
		for j := range p {
			p[j] = math.Abs(rng.NormFloat64())
			s += p[j] * p[j]
		}
		scale := 1 / math.Sqrt(s)
		if rng.IntN(2) == 0 {
			scale *= rng.Float64()
		}
		for j := range p {
			p[j] *= scale
		}
		switch r := rng.IntN(20); {
		case i > 0 && r == 0:
			copy(p, pts[rng.IntN(i)])
		case i > 0 && r == 1:
			copy(p, pts[rng.IntN(i)])
			j := rng.IntN(d)
			p[j] = math.Nextafter(p[j], float64(rng.IntN(2)))
		}
		pts[i] = p
	}
	return pts
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
		var o SumOrder
		PickLargestSum(pts, sums, slices.Clone(over), rest, &o)
		want = append(want, rest...)
		got := make([]int, k)
		b.TopBySum(pts, got)
		// TopBySumOf with the same sums, and with the kept order (twice:
		// repaired from another trial's order, then from its own after a
		// few points moved): the same slate, in the same order.
		of := make([]int, k)
		c.TopBySumOf(pts, sums, of)
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
			e.TopBySumOf(pts, sums, of)
			if !slices.Equal(of, got) {
				t.Fatalf("trial %d step %d k = %d %v: TopBySumOf kept %v, TopBySum %v", trial, step, k, pts, of, got)
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

func TestCrowdingDistanceByHand(t *testing.T) {
	inf := math.Inf(1)
	for _, c := range []struct {
		name    string
		points  [][]float64
		members []int
		want    []float64
	}{
		{
			// Three 2-D points A(0.2,0.9), B(0.5,0.6), C(0.7,0.1).
			// Objective 0: A < B < C, range 0.5: A, C boundary (+Inf), B adds
			// (0.7 − 0.2)/0.5 = 1. Objective 1: C < B < A, range 0.8: B adds
			// (0.9 − 0.1)/0.8 = 1. B: 2.
			name:    "three points",
			points:  [][]float64{{0.2, 0.9}, {0.5, 0.6}, {0.7, 0.1}},
			members: []int{0, 1, 2},
			want:    []float64{inf, 2, inf},
		},
		{
			// Five points of a 2-D front, x = 1, .95, .8, .55, 0 and
			// y = 0, .4, .6, .82, 1 (ranges 1). Objective 0, ascending
			// 4, 3, 2, 1, 0: arm 3 adds .8 − 0 = .8, arm 2 .95 − .55 = .4,
			// arm 1 1 − .8 = .2. Objective 1, ascending 0, 1, 2, 3, 4: arm 1
			// adds .6 − 0 = .6, arm 2 .82 − .4 = .42, arm 3 1 − .6 = .4.
			name:    "five points",
			points:  [][]float64{{1, 0}, {0.95, 0.4}, {0.8, 0.6}, {0.55, 0.82}, {0, 1}},
			members: []int{0, 1, 2, 3, 4},
			want:    []float64{inf, 0.8, 0.82, 1.2, inf},
		},
		{
			// Only members count: arm 1 (between them) is not a member. The
			// members' order in the slice does not matter; out follows it.
			// Objective 0: 3(0), 2(.5), 0(1), range 1: arm 2 adds 1.
			// Objective 1: 0(0), 2(.25), 3(1), range 1: arm 2 adds 1.
			name:    "subset",
			points:  [][]float64{{1, 0}, {0.9, 0.1}, {0.5, 0.25}, {0, 1}},
			members: []int{3, 0, 2},
			want:    []float64{inf, inf, 2},
		},
		{
			// Objective 1 is constant: it gives +Inf to its boundary members
			// (arm 0 and arm 2, by index) and nothing to the interior. Arm 1
			// gets only objective 0's (1 − 0)/1.
			name:    "constant objective",
			points:  [][]float64{{0, 5}, {0.5, 5}, {1, 5}},
			members: []int{0, 1, 2},
			want:    []float64{inf, 1, inf},
		},
		{
			// Duplicates: ties sorted by arm index, so arms 4 and 7 are the
			// boundaries and arm 5 is interior with zero spans.
			name:    "duplicates",
			points:  [][]float64{4: {0.5, 0.5}, 5: {0.5, 0.5}, 7: {0.5, 0.5}},
			members: []int{7, 5, 4},
			want:    []float64{inf, 0, inf},
		},
		{name: "one member", points: [][]float64{{0.3, 0.3}}, members: []int{0}, want: []float64{inf}},
		{name: "two members", points: [][]float64{{0, 1}, {1, 0}}, members: []int{1, 0}, want: []float64{inf, inf}},
	} {
		out := make([]float64, len(c.members))
		for a := range out {
			out[a] = -7 // must be overwritten
		}
		CrowdingDistance(c.points, c.members, out)
		for a := range out {
			if math.IsInf(c.want[a], 1) != math.IsInf(out[a], 1) || !math.IsInf(out[a], 1) && math.Abs(out[a]-c.want[a]) > 1e-12 {
				t.Errorf("%s: crowding %v, want %v", c.name, out, c.want)
				break
			}
		}
	}
}

// naiveCrowding is the crowding distance from its definition: for every
// member and objective, the nearest members below and above it in (value,
// index) order, by linear scans.
func naiveCrowding(points [][]float64, members []int) []float64 {
	out := make([]float64, len(members))
	less := func(x, y, j int) bool {
		return points[x][j] < points[y][j] || points[x][j] == points[y][j] && x < y
	}
	for j := range points[members[0]] {
		lo, hi := members[0], members[0]
		for _, i := range members {
			if less(i, lo, j) {
				lo = i
			}
			if less(hi, i, j) {
				hi = i
			}
		}
		span := points[hi][j] - points[lo][j]
		for a, i := range members {
			if i == lo || i == hi {
				out[a] = math.Inf(1)
				continue
			}
			if !(span > 0) {
				continue
			}
			prev, next := -1, -1
			for _, m := range members {
				if less(m, i, j) && (prev < 0 || less(prev, m, j)) {
					prev = m
				}
				if less(i, m, j) && (next < 0 || less(m, next, j)) {
					next = m
				}
			}
			out[a] += (points[next][j] - points[prev][j]) / span
		}
	}
	return out
}

// TestCrowdingMatchesNaive compares Crowding.Distance with the definition
// on random sets with ties, both when it sorts the members (small sets) and
// when it reads them off its kept orders (large sets, successive calls on
// moving points).
func TestCrowdingMatchesNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	var c Crowding
	for trial := range 400 {
		pts, n, d := trialPoints(rng, trial, 80, 5, 2, randomPoints)
		for range 5 {
			members := rng.Perm(n)[:1+rng.IntN(n)]
			got := make([]float64, len(members))
			c.Distance(pts, members, got)
			want := naiveCrowding(pts, members)
			for a := range want {
				if math.IsInf(want[a], 1) != math.IsInf(got[a], 1) || !math.IsInf(got[a], 1) && math.Abs(got[a]-want[a]) > 1e-9 {
					t.Fatalf("trial %d: members %v of %v: crowding %v, want %v", trial, members, pts, got, want)
				}
			}
			for range 1 + rng.IntN(5) {
				pts[rng.IntN(n)][rng.IntN(d)] = float64(rng.IntN(8)) / 8
			}
		}
	}
}

// trialPoints draws n ≤ maxN points of d ≤ maxD coordinates by base, or,
// every frontEvery-th trial (from the second), on a front.
func trialPoints(rng *rand.Rand, trial, maxN, maxD, frontEvery int, base func(*rand.Rand, int, int) [][]float64) (pts [][]float64, n, d int) {
	n, d = 1+rng.IntN(maxN), 1+rng.IntN(maxD)
	pts = base(rng, n, d)
	if trial%frontEvery == 1 {
		pts = frontPoints(rng, n, d)
	}
	return pts, n, d
}

// TestCrowdingBoundary: Boundary finds exactly the members Distance gives
// +Inf, each once, and every other member's distance is finite; on ties,
// duplicates, −0, one member, all equal; it says so when it cannot tell
// (NaN, infinities, a span past MaxFloat64) and then leaves dst alone.
func TestCrowdingBoundary(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 34))
	var c Crowding
	for trial := range 3000 {
		pts, n, d := trialPoints(rng, trial, 60, 6, 3, signedPoints)
		switch trial % 50 {
		case 7: // all equal
			for _, p := range pts {
				copy(p, pts[0])
			}
		case 8: // past what a span can hold: Boundary cannot tell
			pts[rng.IntN(n)][rng.IntN(d)] = math.MaxFloat64
			pts[rng.IntN(n)][rng.IntN(d)] = -math.MaxFloat64
		case 9:
			pts[rng.IntN(n)][rng.IntN(d)] = math.Inf(1 - 2*rng.IntN(2))
		}
		members := rng.Perm(n)[:1+rng.IntN(n)]
		dst := []int{-7} // Boundary appends
		got, ok := c.Boundary(pts, members, dst)
		dist := make([]float64, len(members))
		c.Distance(pts, members, dist)
		if !ok {
			if len(got) != 1 || got[0] != -7 {
				t.Fatalf("trial %d: cannot tell, but dst became %v", trial, got)
			}
			if trial%50 < 8 || trial%50 > 9 {
				t.Fatalf("trial %d: cannot tell on finite points %v", trial, pts)
			}
			continue
		}
		if got[0] != -7 {
			t.Fatalf("trial %d: dst's prefix overwritten: %v", trial, got)
		}
		var want []int
		for a, v := range dist {
			if math.IsInf(v, 1) {
				want = append(want, a)
			} else if math.IsInf(v, 0) || math.IsNaN(v) {
				t.Fatalf("trial %d: member %d's distance %v, yet Boundary could tell", trial, a, v)
			}
		}
		gotSet := slices.Sorted(slices.Values(got[1:]))
		if !slices.Equal(gotSet, want) || len(got)-1 != len(slices.Compact(slices.Clone(gotSet))) {
			t.Fatalf("trial %d (members %v of %v): boundary %v, Distance's +Inf %v (%v)", trial, members, pts, got[1:], want, dist)
		}
	}
}

func TestSortCrowd(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	for trial := range 300 {
		n := rng.IntN(300)
		items := make([]crowdItem, n)
		for a := range items {
			items[a] = crowdItem{v: float64(rng.IntN(1 + n/4)), arm: a, pos: a}
		}
		rng.Shuffle(n, func(x, y int) { items[x], items[y] = items[y], items[x] })
		if trial%10 == 0 { // already sorted and reversed inputs
			slices.SortFunc(items, func(x, y crowdItem) int { return cmp.Compare(x.arm, y.arm) })
			if trial%20 == 0 {
				slices.Reverse(items)
			}
		}
		want := slices.Clone(items)
		slices.SortFunc(want, func(x, y crowdItem) int {
			if c := cmp.Compare(x.v, y.v); c != 0 {
				return c
			}
			return x.arm - y.arm
		})
		sortCrowd(items)
		if !slices.Equal(items, want) {
			t.Fatalf("trial %d: sortCrowd differs from slices.SortFunc", trial)
		}
	}
	items := make([]crowdItem, 200)
	for a := range items {
		items[a] = crowdItem{v: float64(a % 7), arm: 200 - a}
	}
	heapSortCrowd(items)
	if !slices.IsSortedFunc(items, func(x, y crowdItem) int {
		if c := cmp.Compare(x.v, y.v); c != 0 {
			return c
		}
		return x.arm - y.arm
	}) {
		t.Fatal("heapSortCrowd does not sort")
	}
}

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

// TestFrontTrackerBandit follows the sequences a bandit makes: n = 36 or 60
// arms of d = 2 or 3 (a reading's settings), k of them moving every round
// by a running mean of rewards on a coarse grid (so exact ties, duplicates
// and −0 are common), sometimes an arm moved onto another, and compares the
// tracked front with the brute-force one every round; half the trials tell
// the tracker which arms moved (SizeAfter), as the policies do.
func TestFrontTrackerBandit(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 3))
	for trial := range 40 {
		n, d, k := 36, 2, 3
		switch trial % 4 {
		case 1:
			n, d, k = 60, 3, 4
		case 3: // more than one word of dep per arm
			n, d, k = 150, 3, 6
		}
		pts := make([][]float64, n)
		count := make([]int, n)
		for i := range pts {
			pts[i] = make([]float64, d)
		}
		var f FrontTracker
		told := trial/4%2 == 1 // SizeAfter, told which arms moved
		for round := range 300 {
			var moved []int
			for _, i := range rng.Perm(n)[:k] {
				moved = append(moved, i)
				count[i]++
				for j := range d {
					x := float64(rng.IntN(5)-1) / 4
					pts[i][j] += (x - pts[i][j]) / float64(count[i])
					if pts[i][j] == 0 && rng.IntN(2) == 0 {
						pts[i][j] = math.Copysign(0, -1)
					}
				}
			}
			if rng.IntN(10) == 0 {
				i := rng.IntN(n)
				copy(pts[i], pts[rng.IntN(n)])
				moved = append(moved, i)
			}
			front := bruteLayers(pts)[0]
			size := f.Size
			if told {
				size = func(pts [][]float64) int { return f.SizeAfter(pts, moved, false) }
			}
			if got := size(pts); got != len(front) {
				t.Fatalf("trial %d round %d (told %v): tracked front size %d, want %d", trial, round, told, got, len(front))
			}
			checkDeps(t, &f, pts)
			for i := range pts {
				if got, want := f.OnFront(i), slices.Contains(front, i); got != want {
					t.Fatalf("trial %d round %d: OnFront(%d) = %v, want %v", trial, round, i, got, want)
				}
			}
		}
	}
}

// TestRepairOrder: the kept per-objective order of Crowding, repaired from
// the previous one, is the sort from scratch by (coordinate, index), on
// points with many ties, −0 and +0, over successive calls on moving points.
func TestRepairOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(51, 52))
	for trial := range 300 {
		n, d := 1+rng.IntN(60), 1+rng.IntN(3)
		pts := randomPoints(rng, n, d)
		orders := make([][]int, d)
		for j := range orders {
			orders[j] = rng.Perm(n)
		}
		for step := range 5 {
			for j, order := range orders {
				repairOrder(pts, order, j)
				want := slices.Clone(order)
				slices.SortFunc(want, func(x, y int) int {
					if c := cmp.Compare(pts[x][j], pts[y][j]); c != 0 {
						return c
					}
					return x - y
				})
				if !slices.Equal(order, want) {
					t.Fatalf("trial %d step %d objective %d: order %v, want %v", trial, step, j, order, want)
				}
			}
			for range 1 + rng.IntN(6) {
				x := float64(rng.IntN(5)) / 4
				if x == 0 && rng.IntN(2) == 0 {
					x = math.Copysign(0, -1)
				}
				pts[rng.IntN(n)][rng.IntN(d)] = x
			}
		}
	}
}

// checkDeps checks FrontTracker's witness sets against their definition:
// dep[w] holds exactly the dominated arms i with wit[i] = w, and each
// witness dominates its arm.
func checkDeps(t *testing.T, f *FrontTracker, pts [][]float64) {
	t.Helper()
	for w := range pts {
		for i := range pts {
			in := f.dep[w*f.words+i/64]>>(i%64)&1 == 1
			if want := !f.nd[i] && f.wit[i] == w; in != want {
				t.Fatalf("dep[%d] has arm %d: %v, want %v (nd %v, wit %d)", w, i, in, want, f.nd[i], f.wit[i])
			}
		}
		if !f.nd[w] && !Dominates(pts[f.wit[w]], pts[w]) {
			t.Fatalf("arm %d: witness %d does not dominate it", w, f.wit[w])
		}
	}
}
