package algos

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// allLayers peels every layer of n points with next, each ascending.
func allLayers(l *Layers, n int, next func() []int) [][]int {
	var out [][]int
	for left := n; left > 0; {
		layer := next()
		if len(layer) == 0 {
			break
		}
		for _, i := range layer {
			l.taken[i] = true
		}
		out = append(out, slices.Sorted(slices.Values(layer)))
		left -= len(layer)
	}
	return out
}

// archiveLayers peels every layer with the archive pass (maximal), the
// path Peel takes for d ≠ 2, 3.
func archiveLayers(l *Layers, points [][]float64) [][]int {
	l.prepare(points)
	l.sortOrder()
	return allLayers(l, len(points), func() []int { return l.maximal(points) })
}

// sweepLayers peels every layer with the sweep.
func sweepLayers(l *Layers, points [][]float64) [][]int {
	if !l.prepareSweep(points) {
		return nil
	}
	d := len(points[0])
	return allLayers(l, len(points), func() []int { return l.maximalSweep(d) })
}

// signedPoints is randomPoints with −0 for half the zeros and an eighth of
// the coordinates negated.
func signedPoints(rng *rand.Rand, n, d int) [][]float64 {
	pts := randomPoints(rng, n, d)
	for _, p := range pts {
		for j := range p {
			if p[j] == 0 && rng.IntN(2) == 0 {
				p[j] = math.Copysign(0, -1)
			}
			if rng.IntN(8) == 0 {
				p[j] = -p[j] // negative coordinates too
			}
		}
	}
	return pts
}

// movePoints makes moves random changes to pts, as a bandit's vectors
// move: a step of a quarter, one ulp, a copy of another point (an exact
// duplicate) and, with ties, one coordinate copied from another point.
func movePoints(rng *rand.Rand, pts [][]float64, moves int, ties bool) {
	kinds := 3
	if ties {
		kinds = 4
	}
	n := len(pts)
	for range moves {
		p := pts[rng.IntN(n)]
		switch j := rng.IntN(len(p)); rng.IntN(kinds) {
		case 0:
			p[j] += float64(rng.IntN(3)-1) / 4
		case 1:
			p[j] = math.Nextafter(p[j], math.Inf(rng.IntN(2)*2-1))
		case kinds - 1:
			copy(p, pts[rng.IntN(n)])
		default:
			p[j] = pts[rng.IntN(n)][j] // a tie in one coordinate
		}
	}
}

// TestSweepMatchesArchive: for d = 2, 3 the sweep finds every layer the
// archive pass and the definition find, on points with many equal
// coordinates, exact duplicates, duplicates up to the sign of zero, and
// ulp-level differences, over successive calls on moving points (the kept
// order repaired) and after changes of n (the order reset).
func TestSweepMatchesArchive(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	var sw, ar Layers
	for trial := range 2000 {
		n, d := 1+rng.IntN(40), 2+rng.IntN(2)
		pts := signedPoints(rng, n, d)
		for step := range 4 {
			want := bruteLayers(pts)
			got := sweepLayers(&sw, pts)
			if !slices.EqualFunc(got, want, slices.Equal) {
				t.Fatalf("trial %d step %d (d = %d) %v: sweep %v, definition %v", trial, step, d, pts, got, want)
			}
			// The repaired order is the order from scratch: lexicographically
			// descending, the lower index first on equal vectors.
			lex := slices.Clone(sw.lex)
			slices.SortFunc(lex, func(x, y int) int {
				if c := slices.Compare(pts[y], pts[x]); c != 0 {
					return c
				}
				return x - y
			})
			if !slices.Equal(sw.lex, lex) {
				t.Fatalf("trial %d step %d (d = %d) %v: kept order %v, want %v", trial, step, d, pts, sw.lex, lex)
			}
			if a := archiveLayers(&ar, pts); !slices.EqualFunc(a, want, slices.Equal) {
				t.Fatalf("trial %d step %d: archive %v, definition %v", trial, step, a, want)
			}
			movePoints(rng, pts, 1+rng.IntN(4), false)
		}
	}
}

// TestSweepOnlyForTwoAndThree: other dimensions, and ragged points, take
// the archive pass.
func TestSweepOnlyForTwoAndThree(t *testing.T) {
	var l Layers
	for _, pts := range [][][]float64{
		nil,
		{{1}, {2}},
		{{1, 2, 3, 4}, {2, 1, 0, 0}},
		{{1, 2}, {2, 1, 0}},
	} {
		if l.prepareSweep(pts) {
			t.Errorf("prepareSweep(%v) = true, want false", pts)
		}
	}
	if !l.prepareSweep([][]float64{{1, 2}, {2, 1}}) || !l.prepareSweep([][]float64{{1, 2, 3}}) {
		t.Error("prepareSweep refused d = 2 or 3")
	}
}

func TestSweepDoesNotAllocate(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, d := range []int{2, 3} {
		pts := frontPoints(rng, 150, d)
		var l Layers
		l.Reserve(150)
		if a := testing.AllocsPerRun(50, func() {
			l.Peel(pts, 150)
			pts[3][1] += 0.01
		}); a != 0 {
			t.Fatalf("d = %d: Peel allocates %v times per call", d, a)
		}
	}
}

// TestPeelFlat: PeelFlat on the points stored one after the other returns
// what Peel returns on them (whole layers, overflow, FullLayer), over
// successive calls on moving points and changes of n, k and d (1 to 6),
// with and without Ranks, on a new array each call or the same one
// rewritten (the rows PeelFlat keeps).
func TestPeelFlat(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	var a, b Layers
	for trial := range 1000 {
		n, d := 1+rng.IntN(40), 1+rng.IntN(6)
		a.Ranks = trial%3 != 0
		b.Ranks = a.Ranks
		pts := randomPoints(rng, n, d)
		reuse := rng.IntN(2) == 0
		flat := make([]float64, 0, n*d)
		for step := range 4 {
			if !reuse {
				flat = make([]float64, 0, n*d)
			}
			flat = flat[:0]
			for _, p := range pts {
				flat = append(flat, p...)
			}
			k := 1 + rng.IntN(n+2)
			wf, wo := a.Peel(pts, k)
			gf, go_ := b.PeelFlat(flat, d, k)
			if !slices.Equal(gf, wf) || !slices.Equal(go_, wo) || (go_ == nil) != (wo == nil) {
				t.Fatalf("trial %d step %d (d = %d, k = %d) %v: PeelFlat %v %v, Peel %v %v", trial, step, d, k, pts, gf, go_, wf, wo)
			}
			if a.FullLayers() != b.FullLayers() {
				t.Fatalf("trial %d step %d: %d whole layers, Peel %d", trial, step, b.FullLayers(), a.FullLayers())
			}
			for r := range a.FullLayers() {
				if !slices.Equal(a.FullLayer(r), b.FullLayer(r)) {
					t.Fatalf("trial %d step %d: layer %d %v, Peel %v", trial, step, r, b.FullLayer(r), a.FullLayer(r))
				}
			}
			for range 1 + rng.IntN(4) {
				p := pts[rng.IntN(n)]
				p[rng.IntN(d)] += float64(rng.IntN(3)-1) / 4
			}
		}
	}
}
