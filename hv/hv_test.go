package hv

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
)

// bruteVolume is inclusion–exclusion written from the definition, with no
// shared code: Σ over non-empty subsets of (−1)^(|T|+1) vol(min T).
func bruteVolume(pts [][]float64, ref []float64) float64 {
	if len(pts) == 0 {
		return 0
	}
	d := len(pts[0])
	if ref == nil {
		ref = make([]float64, d)
	}
	var q [][]float64
	for _, p := range pts {
		above := true
		for j := range p {
			above = above && p[j] > ref[j]
		}
		if above {
			q = append(q, p)
		}
	}
	total := 0.0
	for mask := 1; mask < 1<<len(q); mask++ {
		vol := 1.0
		for j := 0; j < d; j++ {
			m := math.Inf(1)
			for i := range q {
				if mask>>i&1 == 1 {
					m = math.Min(m, q[i][j])
				}
			}
			vol *= m - ref[j]
		}
		if bits.OnesCount(uint(mask))%2 == 1 {
			total += vol
		} else {
			total -= vol
		}
	}
	return total
}

// hso is the plain slicing algorithm (Hypervolume by Slicing Objectives):
// an independent exact method, exponential in d, for moderate sets.
func hso(pts [][]float64, ref []float64, d int) float64 {
	if len(pts) == 0 {
		return 0
	}
	if d == 1 {
		m := ref[0]
		for _, p := range pts {
			m = math.Max(m, p[0])
		}
		return m - ref[0]
	}
	s := slices.Clone(pts)
	sort.Slice(s, func(i, j int) bool { return s[i][d-1] > s[j][d-1] })
	var v float64
	for i := range s {
		next := ref[d-1]
		if i+1 < len(s) {
			next = s[i+1][d-1]
		}
		if h := s[i][d-1] - next; h > 0 {
			v += h * hso(s[:i+1], ref, d-1)
		}
	}
	return v
}

func hsoVolume(pts [][]float64, ref []float64) float64 {
	if len(pts) == 0 {
		return 0
	}
	d := len(pts[0])
	if ref == nil {
		ref = make([]float64, d)
	}
	var q [][]float64
	for _, p := range pts {
		if boxVolume(p, ref) > 0 {
			q = append(q, p)
		}
	}
	return hso(q, ref, d)
}

// concave returns n points on the positive part of the unit sphere (all
// mutually non-dominated): |N(0, I)| normalised.
func concave(n, d int, seed uint64) [][]float64 {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	pts := make([][]float64, n)
	for i := range pts {
		p := make([]float64, d)
		s := 0.0
		for j := range p {
			p[j] = math.Abs(r.NormFloat64())
			s += p[j] * p[j]
		}
		for j := range p {
			p[j] /= math.Sqrt(s)
		}
		pts[i] = p
	}
	return pts
}

// randomSet draws n points in d dimensions: uniform in [lo, lo+1) when grid
// is false, else integers in [lo, lo+4] (many exact ties and duplicates).
func randomSet(r *rand.Rand, n, d int, lo float64, grid bool) [][]float64 {
	pts := make([][]float64, n)
	for i := range pts {
		p := make([]float64, d)
		for j := range p {
			if grid {
				p[j] = lo + float64(r.IntN(5))
			} else {
				p[j] = lo + r.Float64()
			}
		}
		pts[i] = p
	}
	return pts
}

func close(a, b, rel float64) bool {
	return math.Abs(a-b) <= rel*math.Max(math.Abs(a), math.Abs(b))+1e-300
}

func TestVolumeBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	for _, tc := range []struct {
		name string
		grid bool
		lo   float64
		ref  float64
	}{
		{"uniform", false, 0, 0},
		{"grid", true, 0, 0},
		{"negative", false, -0.7, -0.5},
		{"grid-negative", true, -3, -2},
	} {
		for d := 2; d <= 6; d++ {
			t.Run(fmt.Sprintf("%s/d=%d", tc.name, d), func(t *testing.T) {
				for it := 0; it < 200; it++ {
					n := r.IntN(13)
					pts := randomSet(r, n, d, tc.lo, tc.grid)
					var ref []float64
					if tc.ref != 0 || it%2 == 1 {
						ref = make([]float64, d)
						for j := range ref {
							ref[j] = tc.ref
						}
					}
					want := bruteVolume(pts, ref)
					if got := Volume(pts, ref); !close(got, want, 1e-12) {
						t.Fatalf("n=%d: Volume = %.17g, brute force %.17g\npoints %v ref %v", n, got, want, pts, ref)
					}
				}
			})
		}
	}
}

// TestVolumeHSO checks the sweeps and WFG on sets too large for brute force
// (past the inclusion–exclusion and one-word sweep thresholds).
func TestVolumeHSO(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 2))
	for _, tc := range []struct {
		d, n int
		grid bool
	}{
		{2, 300, false}, {2, 300, true},
		{3, 300, false}, {3, 300, true},
		{4, 120, false}, {4, 120, true},
		{5, 45, false}, {5, 60, true},
		{6, 22, false}, {6, 30, true},
	} {
		t.Run(fmt.Sprintf("d=%d/n=%d/grid=%v", tc.d, tc.n, tc.grid), func(t *testing.T) {
			for it := 0; it < 5; it++ {
				pts := randomSet(r, tc.n, tc.d, 0, tc.grid)
				if it%2 == 0 { // a concave front: nothing dominated
					pts = concave(tc.n, tc.d, uint64(it))
				}
				want := hsoVolume(pts, nil)
				if got := Volume(pts, nil); !close(got, want, 1e-12) {
					t.Fatalf("Volume = %.17g, HSO %.17g", got, want)
				}
			}
		})
	}
	// Cylinders: a concave front in the first d−1 coordinates and a random
	// last one, so that nothing is ever dropped: the kept sets of WFG hold
	// every earlier point and the 3-D fronts of HV4D+ grow to every point.
	for _, tc := range []struct{ d, n int }{{4, 200}, {5, 80}} {
		t.Run(fmt.Sprintf("cylinder/d=%d/n=%d", tc.d, tc.n), func(t *testing.T) {
			pts := concave(tc.n, tc.d-1, 5)
			for i := range pts {
				pts[i] = append(pts[i], r.Float64())
			}
			want := hsoVolume(pts, nil)
			if got := Volume(pts, nil); !close(got, want, 1e-12) {
				t.Fatalf("Volume = %.17g, HSO %.17g", got, want)
			}
		})
	}
}

// TestVolumeMonteCarlo compares large sets with the fraction of uniform
// samples of the bounding box that the set dominates.
func TestVolumeMonteCarlo(t *testing.T) {
	samples := 1_000_000
	if testing.Short() {
		samples = 200_000
	}
	for d := 3; d <= 5; d++ {
		t.Run(fmt.Sprintf("d=%d", d), func(t *testing.T) {
			pts := concave(2000, d, uint64(d))
			// Shrink every other point so that some are dominated.
			for i := 0; i < len(pts); i += 2 {
				for j := range pts[i] {
					pts[i][j] *= 0.9
				}
			}
			got := Volume(pts, nil)
			tree := newDomTree(pts)
			r := rand.New(rand.NewPCG(uint64(d), 99))
			s := make([]float64, d)
			hits := 0
			for range samples {
				for j := range s {
					s[j] = r.Float64()
				}
				if tree.dominated(s) {
					hits++
				}
			}
			p := float64(hits) / float64(samples)
			se := math.Sqrt(p * (1 - p) / float64(samples))
			if math.Abs(got-p) > 5*se {
				t.Errorf("Volume = %.6f, Monte Carlo %.6f ± %.6f (5 s.e.)", got, p, 5*se)
			}
		})
	}
}

// domTree answers "does some point weakly dominate s?" for Monte Carlo: a
// k-d tree whose nodes know the componentwise max and min of their points.
type domTree struct {
	lo, hi      []float64
	left, right *domTree
	pts         [][]float64 // leaves only
}

func newDomTree(pts [][]float64) *domTree {
	d := len(pts[0])
	t := &domTree{lo: slices.Clone(pts[0]), hi: slices.Clone(pts[0])}
	for _, p := range pts {
		for j := range p {
			t.lo[j], t.hi[j] = math.Min(t.lo[j], p[j]), math.Max(t.hi[j], p[j])
		}
	}
	if len(pts) <= 8 {
		t.pts = pts
		return t
	}
	axis := 0
	for j := range d {
		if t.hi[j]-t.lo[j] > t.hi[axis]-t.lo[axis] {
			axis = j
		}
	}
	pts = slices.Clone(pts)
	slices.SortFunc(pts, func(a, b []float64) int {
		switch {
		case a[axis] < b[axis]:
			return -1
		case a[axis] > b[axis]:
			return 1
		}
		return 0
	})
	t.left, t.right = newDomTree(pts[:len(pts)/2]), newDomTree(pts[len(pts)/2:])
	return t
}

func (t *domTree) dominated(s []float64) bool {
	if !weaklyDominates(t.hi, s) {
		return false // no point here reaches s in some coordinate
	}
	if weaklyDominates(t.lo, s) {
		return true // every point here dominates s
	}
	if t.pts != nil {
		for _, p := range t.pts {
			if weaklyDominates(p, s) {
				return true
			}
		}
		return false
	}
	return t.right.dominated(s) || t.left.dominated(s)
}

func TestVolumeClosedForms(t *testing.T) {
	staircase := func(n int) [][]float64 {
		var pts [][]float64
		for i := 1; i <= n; i++ {
			pts = append(pts, []float64{float64(i), float64(n + 1 - i)})
		}
		return pts
	}
	// cross: d points with a in coordinate j and b elsewhere, which cover
	// the cube b^d plus d disjoint slabs (a−b)·b^(d−1).
	cross := func(d int, a, b float64) [][]float64 {
		var pts [][]float64
		for j := 0; j < d; j++ {
			p := make([]float64, d)
			for i := range p {
				p[i] = b
			}
			p[j] = a
			pts = append(pts, p)
		}
		return pts
	}
	lift := func(pts [][]float64, extra int) [][]float64 {
		var out [][]float64
		for _, p := range pts {
			q := slices.Clone(p)
			for range extra {
				q = append(q, 1)
			}
			out = append(out, q)
		}
		return out
	}
	for _, tc := range []struct {
		name string
		pts  [][]float64
		ref  []float64
		want float64
	}{
		{"empty", nil, nil, 0},
		{"empty with ref", nil, []float64{1, 2}, 0},
		{"one box", [][]float64{{2, 3, 4}}, nil, 24},
		{"one box ref", [][]float64{{2, 3, 4, 5, 6}}, []float64{1, 1, 1, 1, 1}, 1 * 2 * 3 * 4 * 5},
		{"d=1", [][]float64{{3}, {5}, {-1}}, nil, 5},
		{"d=1 ref", [][]float64{{3}, {5}}, []float64{4}, 1},
		{"d=1 below", [][]float64{{3}}, []float64{4}, 0},
		{"staircase 2", staircase(2), nil, 3},
		{"staircase 10", staircase(10), nil, 55},
		{"staircase 1000", staircase(1000), nil, 500500},
		{"staircase lifted to 3", lift(staircase(100), 1), nil, 5050},
		{"staircase lifted to 4", lift(staircase(100), 2), nil, 5050},
		{"staircase lifted to 5", lift(staircase(30), 3), nil, 465},
		{"cross 3", cross(3, 3, 1), nil, 1 + 3*2},
		{"cross 4", cross(4, 2, 0.5), nil, 0.0625 + 4*1.5*0.125},
		{"cross 6", cross(6, 2, 1), nil, 7},
		{"cross 8", cross(8, 3, 1), nil, 17},
		{"nested boxes", [][]float64{{1, 1, 1, 1}, {2, 2, 2, 2}, {3, 3, 3, 3}}, nil, 81},
		{"duplicates", [][]float64{{1, 2, 3}, {1, 2, 3}, {1, 2, 3}}, nil, 6},
		{"on the reference plane", [][]float64{{0, 5, 5}, {5, 0, 5}, {1, 1, 1}}, nil, 1},
		{"below ref", [][]float64{{1, 1}, {2, 0.5}}, []float64{1, 1}, 0},
		{"negative ref", [][]float64{{-1, -1}, {-2, 0}}, []float64{-3, -3}, 2*2 + 1*1},
		{"negative ref 3", [][]float64{{-1, -1, -1}}, []float64{-3, -3, -2}, 4},
		{"NaN ignored", [][]float64{{math.NaN(), 1}, {2, 2}}, nil, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Volume(tc.pts, tc.ref); !close(got, tc.want, 1e-13) {
				t.Errorf("Volume = %.17g, want %.17g", got, tc.want)
			}
		})
	}
}

// TestAlgorithmsAgree measures the same sets through different paths:
// inclusion–exclusion against the sweeps, the one-word 3-D sweep against
// the bit-tree one, and the 2-D and 3-D sweeps against WFG by lifting the
// points with constant coordinates (which multiplies the volume by 1).
func TestAlgorithmsAgree(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	var c Calculator
	for it := 0; it < 300; it++ {
		d := 2 + it%4
		n := 1 + r.IntN(14)
		pts := randomSet(r, n, d, 0, it%3 == 0)
		c.Volume(pts, nil)
		if c.n == 0 {
			continue
		}
		want := c.iex(slices.Clone(c.pts), c.n, d)
		if got := c.volume(); !close(got, want, 1e-12) {
			t.Fatalf("d=%d n=%d: volume %.17g, inclusion–exclusion %.17g", d, n, got, want)
		}
	}
	for _, d := range []int{2, 3} {
		for it := 0; it < 40; it++ {
			pts := randomSet(r, 1+r.IntN(400), d, 0, it%2 == 0)
			want := Volume(pts, nil)
			for extra := 1; extra <= 6-d; extra++ {
				var lifted [][]float64
				for _, p := range pts {
					q := slices.Clone(p)
					for range extra {
						q = append(q, 1)
					}
					lifted = append(lifted, q)
				}
				if got := Volume(lifted, nil); !close(got, want, 1e-12) {
					t.Fatalf("d=%d lifted to %d: %.17g, want %.17g", d, d+extra, got, want)
				}
			}
		}
	}
}

func TestProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	for d := 2; d <= 5; d++ {
		t.Run(fmt.Sprintf("d=%d", d), func(t *testing.T) {
			for it := 0; it < 60; it++ {
				n := 2 + r.IntN(40)
				pts := randomSet(r, n, d, 0, it%3 == 0)
				v := Volume(pts, nil)

				// Permutation invariance.
				perm := slices.Clone(pts)
				r.Shuffle(len(perm), func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
				if pv := Volume(perm, nil); !close(pv, v, 1e-12) {
					t.Fatalf("permuted: %.17g, want %.17g", pv, v)
				}

				// Monotone, and Contribution is the difference of volumes.
				small := pts[:n/2]
				p := pts[n-1]
				vs := Volume(small, nil)
				vsp := Volume(append(slices.Clone(small), p), nil)
				if vsp < vs*(1-1e-12) {
					t.Fatalf("adding a point decreased the volume: %.17g < %.17g", vsp, vs)
				}
				cp := Contribution(p, small, nil)
				if math.Abs(cp-(vsp-vs)) > 1e-12*vsp {
					t.Fatalf("Contribution %.17g, volume difference %.17g", cp, vsp-vs)
				}

				// Submodular: the contribution to a superset is not larger.
				if cbig := Contribution(p, pts[:n-1], nil); cbig > cp+1e-12*vsp {
					t.Fatalf("contribution to a superset %.17g > to a subset %.17g", cbig, cp)
				}

				// A dominated point adds exactly nothing.
				q := slices.Clone(pts[r.IntN(n)])
				for j := range q {
					q[j] *= r.Float64()
				}
				if c := Contribution(q, pts, nil); c != 0 {
					t.Fatalf("dominated point contributes %g", c)
				}
				if dv := Volume(append(slices.Clone(pts), q), nil); !close(dv, v, 1e-12) {
					t.Fatalf("with a dominated point: %.17g, want %.17g", dv, v)
				}
			}
		})
	}
}

func TestContribution(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	for _, tc := range []struct {
		name string
		p    []float64
		set  [][]float64
		ref  []float64
		want float64
	}{
		{"empty set", []float64{2, 3}, nil, nil, 6},
		{"below ref", []float64{2, 3}, nil, []float64{2, 0}, 0},
		{"duplicate", []float64{2, 3}, [][]float64{{2, 3}}, nil, 0},
		{"dominated", []float64{2, 3}, [][]float64{{2, 4}}, nil, 0},
		{"disjoint part", []float64{2, 1}, [][]float64{{1, 2}}, nil, 1},
		{"negative ref", []float64{-1, -1, -1}, [][]float64{{-2, -2, -2}}, []float64{-3, -3, -3}, 7},
		{"set below ref", []float64{1, 1}, [][]float64{{-1, 5}}, nil, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Contribution(tc.p, tc.set, tc.ref); !close(got, tc.want, 1e-14) {
				t.Errorf("Contribution = %g, want %g", got, tc.want)
			}
		})
	}
	// Against the brute-force volume difference, sets of every size path.
	for it := 0; it < 300; it++ {
		d := 2 + it%5
		n := r.IntN(12)
		set := randomSet(r, n, d, -0.5, it%4 == 0)
		p := randomSet(r, 1, d, -0.5, it%4 == 0)[0]
		ref := make([]float64, d)
		for j := range ref {
			ref[j] = -0.5
		}
		want := bruteVolume(append(slices.Clone(set), p), ref) - bruteVolume(set, ref)
		if got := Contribution(p, set, ref); math.Abs(got-want) > 1e-12 {
			t.Fatalf("d=%d n=%d: Contribution %.17g, brute force %.17g", d, n, got, want)
		}
	}
}

func TestCalculator(t *testing.T) {
	r := rand.New(rand.NewPCG(6, 6))
	var c Calculator
	// The same Calculator across sizes and dimensions, in any order.
	for it := 0; it < 200; it++ {
		d := 1 + r.IntN(5)
		pts := randomSet(r, r.IntN(300), d, 0, it%2 == 0)
		if got, want := c.Volume(pts, nil), Volume(pts, nil); got != want {
			t.Fatalf("Calculator.Volume %.17g, Volume %.17g", got, want)
		}
		if len(pts) > 0 {
			p := pts[0]
			if got, want := c.Contribution(p, pts[1:], nil), Contribution(p, pts[1:], nil); got != want {
				t.Fatalf("Calculator.Contribution %.17g, Contribution %.17g", got, want)
			}
		}
	}
	// The hot path does not allocate.
	for d := 2; d <= 5; d++ {
		slate := concave(6, d, 1)
		ref := make([]float64, d)
		c.Volume(slate, ref)
		c.Contribution(slate[0], slate[1:], ref)
		if a := testing.AllocsPerRun(100, func() { c.Volume(slate, ref) }); a != 0 {
			t.Errorf("d=%d: Calculator.Volume allocates %v times", d, a)
		}
		if a := testing.AllocsPerRun(100, func() { c.Contribution(slate[0], slate[1:], ref) }); a != 0 {
			t.Errorf("d=%d: Calculator.Contribution allocates %v times", d, a)
		}
	}
	big := concave(500, 4, 2)
	c.Volume(big, nil)
	if a := testing.AllocsPerRun(5, func() { c.Volume(big, nil) }); a != 0 {
		t.Errorf("Calculator.Volume on 500 points allocates %v times", a)
	}
}

func TestInputsNotModified(t *testing.T) {
	pts := concave(50, 4, 3)
	ref := []float64{-0.1, -0.1, -0.1, -0.1}
	orig := make([][]float64, len(pts))
	for i := range pts {
		orig[i] = slices.Clone(pts[i])
	}
	origRef := slices.Clone(ref)
	Volume(pts, ref)
	Contribution(pts[0], pts[1:], ref)
	Greedy(pts, 5, ref)
	LazyGreedy(pts, 5, ref)
	BestSubset(pts[:20], 3, ref)
	NonDominated(pts)
	for i := range pts {
		if !slices.Equal(pts[i], orig[i]) {
			t.Fatalf("point %d modified", i)
		}
	}
	if !slices.Equal(ref, origRef) {
		t.Fatal("ref modified")
	}
}

func TestDimensionMismatchPanics(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    func()
	}{
		{"ragged points", func() { Volume([][]float64{{1, 2}, {1}}, nil) }},
		{"ref", func() { Volume([][]float64{{1, 2}}, []float64{0}) }},
		{"contribution ref", func() { Contribution([]float64{1, 2}, nil, []float64{0}) }},
		{"contribution set", func() { Contribution([]float64{1, 2}, [][]float64{{1}}, nil) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Error("no panic")
				}
			}()
			tc.f()
		})
	}
}

// bruteNonDominated follows the definition.
func bruteNonDominated(pts [][]float64) []int {
	out := []int{}
	for i, p := range pts {
		keep := true
		for j, q := range pts {
			if j == i {
				continue
			}
			if weaklyDominates(q, p) && (!slices.Equal(q, p) || j < i) {
				keep = false
				break
			}
		}
		if keep {
			out = append(out, i)
		}
	}
	return out
}

func TestNonDominated(t *testing.T) {
	for _, tc := range []struct {
		name string
		pts  [][]float64
		want []int
	}{
		{"empty", nil, []int{}},
		{"one", [][]float64{{1, 1}}, []int{0}},
		{"duplicates keep the first", [][]float64{{1, 2}, {2, 1}, {1, 2}, {2, 1}}, []int{0, 1}},
		{"dominated", [][]float64{{1, 1}, {2, 2}, {0, 3}}, []int{1, 2}},
		{"weakly dominated", [][]float64{{1, 2}, {1, 3}}, []int{1}},
		{"NaN kept", [][]float64{{1, math.NaN()}, {2, 2}}, []int{0, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := NonDominated(tc.pts)
			if !slices.Equal(got, tc.want) && !(len(got) == 0 && len(tc.want) == 0) {
				t.Errorf("NonDominated = %v, want %v", got, tc.want)
			}
		})
	}
	r := rand.New(rand.NewPCG(7, 7))
	for it := 0; it < 300; it++ {
		d := 1 + r.IntN(5)
		pts := randomSet(r, r.IntN(60), d, 0, it%2 == 0)
		if got, want := NonDominated(pts), bruteNonDominated(pts); !slices.Equal(got, want) && len(want) > 0 {
			t.Fatalf("NonDominated = %v, want %v\n%v", got, want, pts)
		}
	}
}

func TestGreedy(t *testing.T) {
	for _, tc := range []struct {
		name string
		pts  [][]float64
		k    int
		want []int
	}{
		{"k=0", [][]float64{{1, 1}}, 0, []int{}},
		{"k>n", [][]float64{{1, 1}, {2, 2}}, 5, []int{1, 0}},
		{"largest box first", [][]float64{{1, 3}, {2, 2}, {3, 1}}, 1, []int{1}},
		{"tie to lowest index", [][]float64{{1, 3}, {3, 1}, {2, 1}}, 2, []int{0, 1}},
		{"duplicates", [][]float64{{1, 1}, {1, 1}, {1, 1}}, 3, []int{0, 1, 2}},
		{"second pick by contribution", [][]float64{{4, 1}, {1, 4}, {2.1, 2.1}, {1.5, 1.5}}, 2, []int{2, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Greedy(tc.pts, tc.k, nil); !slices.Equal(got, tc.want) {
				t.Errorf("Greedy = %v, want %v", got, tc.want)
			}
			if got := LazyGreedy(tc.pts, tc.k, nil); !slices.Equal(got, tc.want) {
				t.Errorf("LazyGreedy = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestLazyGreedyEqualsGreedy(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 8))
	iters := 400
	if testing.Short() {
		iters = 150
	}
	for it := 0; it < iters; it++ {
		d := 2 + it%4
		n := 1 + r.IntN(60)
		var pts [][]float64
		switch it % 4 {
		case 0:
			pts = randomSet(r, n, d, 0, false)
		case 1: // grid: exact ties everywhere
			pts = randomSet(r, n, d, 0, true)
		case 2: // a front with exact duplicates
			pts = concave(n, d, uint64(it))
			for i := 0; i < n/3; i++ {
				pts = append(pts, slices.Clone(pts[r.IntN(n)]))
			}
		case 3: // a symmetric front: permutations of one point
			for i := 0; i < n; i++ {
				p := make([]float64, d)
				for j := range p {
					p[j] = float64(1 + (i+j)%d)
				}
				pts = append(pts, p)
			}
		}
		k := 1 + r.IntN(min(len(pts)+2, 12))
		g, lg := Greedy(pts, k, nil), LazyGreedy(pts, k, nil)
		if !slices.Equal(g, lg) {
			t.Fatalf("it %d (d=%d n=%d k=%d): Greedy %v, LazyGreedy %v", it, d, len(pts), k, g, lg)
		}
	}
}

// bruteBest enumerates every size-k subset in lexicographic order and keeps
// the first of maximal brute-force volume.
func bruteBest(pts [][]float64, k int) ([]int, float64) {
	var best []int
	bestV := -1.0
	cur := make([]int, 0, k)
	var rec func(start int)
	rec = func(start int) {
		if len(cur) == k {
			sub := make([][]float64, k)
			for j, i := range cur {
				sub[j] = pts[i]
			}
			if v := bruteVolume(sub, nil); v > bestV {
				best, bestV = slices.Clone(cur), v
			}
			return
		}
		for i := start; i <= len(pts)-(k-len(cur)); i++ {
			cur = append(cur, i)
			rec(i + 1)
			cur = cur[:len(cur)-1]
		}
	}
	rec(0)
	return best, bestV
}

func TestBestSubset(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	alpha := 1 - 1/math.E
	for d := 2; d <= 5; d++ {
		t.Run(fmt.Sprintf("d=%d", d), func(t *testing.T) {
			for it := 0; it < 40; it++ {
				n := 1 + r.IntN(14)
				k := 1 + r.IntN(5)
				grid := it%2 == 1
				pts := randomSet(r, n, d, 0, grid)
				if it%4 == 0 {
					pts = concave(n, d, uint64(it))
				}
				idx, v := BestSubset(pts, k, nil)
				if cidx, cv := bestSubset(pts, k, nil, false); !slices.Equal(cidx, idx) || cv != v {
					t.Fatalf("n=%d k=%d: without incumbent %v %.17g, with %v %.17g", n, k, cidx, cv, idx, v)
				}
				if len(idx) != min(k, n) || !slices.IsSorted(idx) {
					t.Fatalf("n=%d k=%d: BestSubset = %v", n, k, idx)
				}
				sub := make([][]float64, len(idx))
				for j, i := range idx {
					sub[j] = pts[i]
				}
				if hv := Volume(sub, nil); hv != v {
					t.Fatalf("value %.17g, Volume of the subset %.17g", v, hv)
				}
				if k >= n {
					continue
				}
				want, wv := bruteBest(pts, k)
				if grid && v != wv || !close(v, wv, 1e-12) {
					t.Fatalf("n=%d k=%d: V* = %.17g (%v), brute force %.17g (%v)", n, k, v, idx, wv, want)
				}
				// Integer coordinates make every volume exact, so ties are
				// exact, and among the subsets of candidates (non-dominated, above the
				// reference point) the
				// lexicographically smallest must win.
				var nd []int
				for _, i := range NonDominated(pts) {
					if boxVolume(pts[i], nil) > 0 {
						nd = append(nd, i)
					}
				}
				if grid && len(nd) > k {
					ci, _ := bruteBest(pick(pts, nd), k)
					for j := range ci {
						ci[j] = nd[ci[j]]
					}
					if !slices.Equal(idx, ci) {
						t.Fatalf("n=%d k=%d: tie broken to %v, want %v", n, k, idx, ci)
					}
				}
				if g := Volume(pick(pts, Greedy(pts, k, nil)), nil); g < alpha*v*(1-1e-12) {
					t.Fatalf("HV(greedy) = %g < (1 − 1/e) V* = %g", g, alpha*v)
				}
			}
		})
	}
}

func pick(pts [][]float64, idx []int) [][]float64 {
	out := make([][]float64, len(idx))
	for j, i := range idx {
		out[j] = pts[i]
	}
	return out
}

func TestBestSubsetEdges(t *testing.T) {
	for _, tc := range []struct {
		name string
		pts  [][]float64
		k    int
		ref  []float64
		want []int
		v    float64
	}{
		{"k=0", [][]float64{{1, 1}}, 0, nil, []int{}, 0},
		{"empty", nil, 3, nil, []int{}, 0},
		{"k=n", [][]float64{{1, 2}, {2, 1}}, 2, nil, []int{0, 1}, 3},
		{"k>n", [][]float64{{1, 2}, {2, 1}}, 4, nil, []int{0, 1}, 3},
		// One non-dominated point: padded with the largest boxes, then the
		// lowest index; the point on the reference plane has box 0.
		{"pad", [][]float64{{0, 9}, {3, 3}, {1, 1}, {2, 2}, {2, 2}}, 3, nil, []int{1, 3, 4}, 9},
		{"pad below ref", [][]float64{{5, 5}, {0.5, 0.5}, {0.2, 3}}, 2, []float64{1, 1}, []int{0, 1}, 16},
		{"duplicates skipped", [][]float64{{2, 2}, {2, 2}, {1, 3}, {3, 1}}, 2, nil, []int{0, 2}, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			idx, v := BestSubset(tc.pts, tc.k, tc.ref)
			if !slices.Equal(idx, tc.want) || v != tc.v {
				t.Errorf("BestSubset = %v, %g; want %v, %g", idx, v, tc.want, tc.v)
			}
		})
	}
}

// TestBestSubsetPaperSizes runs the largest setting of the paper (a d = 5
// front of 52 points, k = 6) against greedy, and a d = 3 one against brute
// force.
func TestBestSubsetPaperSizes(t *testing.T) {
	pts := concave(21, 3, 11)
	idx, v := BestSubset(pts, 4, nil)
	want, wv := bruteBest(pts, 4)
	if !close(v, wv, 1e-12) {
		t.Fatalf("V* = %.17g (%v), brute force %.17g (%v)", v, idx, wv, want)
	}
	pts = concave(52, 5, 12)
	_, v = BestSubset(pts, 6, nil)
	g := Volume(pick(pts, Greedy(pts, 6, nil)), nil)
	if v < g*(1-1e-12) {
		t.Fatalf("V* = %.17g below greedy %.17g", v, g)
	}
}

// TestBestSubsetTies uses the permutations of (1, 2, 3, 4): mutually
// non-dominated, integer (so every volume is exact), and symmetric, so that
// many subsets tie and the lexicographically smallest must be returned.
func TestBestSubsetTies(t *testing.T) {
	var pts [][]float64
	var perm func(p []float64, i int)
	perm = func(p []float64, i int) {
		if i == len(p) {
			pts = append(pts, slices.Clone(p))
			return
		}
		for j := i; j < len(p); j++ {
			p[i], p[j] = p[j], p[i]
			perm(p, i+1)
			p[i], p[j] = p[j], p[i]
		}
	}
	perm([]float64{1, 2, 3, 4}, 0)
	r := rand.New(rand.NewPCG(10, 10))
	for it := 0; it < 6; it++ {
		r.Shuffle(len(pts), func(i, j int) { pts[i], pts[j] = pts[j], pts[i] })
		sub := pts[:12]
		for k := 1; k <= 4; k++ {
			want, wv := bruteBest(sub, k)
			for _, warm := range []bool{true, false} {
				if idx, v := bestSubset(sub, k, nil, warm); !slices.Equal(idx, want) || v != wv {
					t.Fatalf("k=%d warm=%v: %v %g, want %v %g", k, warm, idx, v, want, wv)
				}
			}
		}
	}
}

// simplex returns n points of the linear front Σ x = 1, where subsets
// differ little and bounds are loose: a hard case for the search.
func simplex(n, d int, seed uint64) [][]float64 {
	pts := concave(n, d, seed)
	for _, p := range pts {
		s := 0.0
		for _, x := range p {
			s += x
		}
		for j := range p {
			p[j] /= s
		}
	}
	return pts
}

// TestBestSubsetSearch checks the branch and bound alone (no incumbent)
// against brute force on many small instances.
func TestBestSubsetSearch(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 11))
	iters := 300
	if testing.Short() {
		iters = 120
	}
	for it := 0; it < iters; it++ {
		d := 2 + it%4
		n := 8 + r.IntN(7)
		k := 2 + r.IntN(4)
		var pts [][]float64
		switch it % 3 {
		case 0:
			pts = concave(n, d, uint64(it))
		case 1:
			pts = randomSet(r, n, d, 0, false)
		default:
			pts = simplex(n, d, uint64(it))
		}
		idx, v := bestSubset(pts, k, nil, false)
		want, wv := bruteBest(pts, k)
		if !close(v, wv, 1e-12) {
			t.Fatalf("it %d (d=%d n=%d k=%d): %v %.17g, brute force %v %.17g", it, d, n, k, idx, v, want, wv)
		}
	}
}

// TestConcurrent calls the package-level functions, which share pooled
// scratch space, from several goroutines (run with -race).
func TestConcurrent(t *testing.T) {
	sets := make([][][]float64, 8)
	want := make([]float64, len(sets))
	wantC := make([]float64, len(sets))
	for i := range sets {
		sets[i] = concave(5+40*i, 2+i%4, uint64(i))
		want[i] = Volume(sets[i], nil)
		wantC[i] = Contribution(sets[i][0], sets[i][1:], nil)
	}
	done := make(chan error)
	for g := 0; g < 4; g++ {
		go func() {
			for it := 0; it < 20; it++ {
				i := (g + it) % len(sets)
				if v := Volume(sets[i], nil); v != want[i] {
					done <- fmt.Errorf("set %d: Volume %.17g, want %.17g", i, v, want[i])
					return
				}
				if v := Contribution(sets[i][0], sets[i][1:], nil); v != wantC[i] {
					done <- fmt.Errorf("set %d: Contribution %.17g, want %.17g", i, v, wantC[i])
					return
				}
			}
			done <- nil
		}()
	}
	for range 4 {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}
