package algos

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

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
