package algos

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// rankLayers peels every layer with the rank pass, marking each layer taken
// as Peel does.
func rankLayers(l *Layers, points [][]float64) [][]int {
	if !l.prepareRanks(points) {
		return nil
	}
	var out [][]int
	for left := len(points); left > 0; {
		layer := l.maximalRanks(points)
		if len(layer) == 0 {
			break
		}
		for _, i := range layer {
			l.taken[i] = true
			l.ranks.take(i)
		}
		out = append(out, slices.Clone(layer))
		left -= len(layer)
	}
	return out
}

// checkRankState compares the kept state with one formed from scratch:
// every order sorted, every count and geq bit what the coordinates say.
func checkRankState(t *testing.T, l *Layers, points [][]float64, what string) {
	t.Helper()
	r := &l.ranks
	n, d := r.n, r.d
	for j := range d {
		ord, off := r.ord[j*n:j*n+n], r.off[j*n:j*n+n]
		for a, i := range ord {
			if off[a] != int32(d*int(i)+j) {
				t.Fatalf("%s: coordinate %d, rank %d: offset %d, arm %d", what, j, a, off[a], i)
			}
			if a > 0 && points[i][j] < points[ord[a-1]][j] {
				t.Fatalf("%s: coordinate %d not sorted at rank %d", what, j, a)
			}
		}
	}
	for i := range n {
		size := 0
		for a := range n {
			want := 0
			if a != i {
				for j := range d {
					if points[a][j] >= points[i][j] {
						want++
					}
				}
			}
			if got := int(r.count[i*n+a]); got != want {
				t.Fatalf("%s: count[%d][%d] = %d, want %d", what, i, a, got, want)
			}
			if in := r.geq[i*r.words+a>>6]&(1<<(a&63)) != 0; in != (want == d) {
				t.Fatalf("%s: arm %d in geq(%d) = %v, count %d of %d", what, a, i, in, want, d)
			}
			if want == d {
				size++
			}
		}
		if got := int(r.geqSize[i]); got != size {
			t.Fatalf("%s: geqSize[%d] = %d, geq(%d) holds %d arms", what, i, got, i, size)
		}
	}
}

// TestRanksMatchDefinition: for d = 4–9 the rank pass finds every layer
// the definition finds, and keeps exactly the relations the coordinates
// give, on points with many equal coordinates, exact duplicates,
// duplicates up to the sign of zero, negative coordinates and ulp-level
// differences, over successive calls on points that move a little (swaps),
// become or stop being equal (ties), move a lot (the full sort) or change
// in number or dimension (reset), with arm counts across word boundaries.
func TestRanksMatchDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(51, 52))
	sizes := []int{1, 2, 3, 17, 63, 64, 65, 127, 128, 129, 150}
	l := Layers{Ranks: true}
	for trial := range 400 {
		n, d := sizes[rng.IntN(len(sizes))], 4+rng.IntN(6)
		if n > 64 && trial%4 != 0 {
			n = 1 + rng.IntN(40) // most trials small: the checks are O(n²·d)
		}
		pts := signedPoints(rng, n, d)
		for step := range 6 {
			what := func() string { return fmt.Sprintf("trial %d step %d", trial, step) }
			got := rankLayers(&l, pts)
			checkRankState(t, &l, pts, what())
			if want := bruteLayers(pts); !slices.EqualFunc(got, want, slices.Equal) {
				t.Fatalf("%s (n = %d, d = %d) %v: ranks %v, definition %v", what(), n, d, pts, got, want)
			}
			moves := 1 + rng.IntN(4)
			if step == 3 {
				moves = 4 * n // past insertion sort's budget
			}
			movePoints(rng, pts, moves, true)
		}
	}
}

// TestPeelWithRanks: Peel with Ranks set returns what it returns without
// (whole layers, overflow, FullLayer) for every k, over the rounds of a
// bandit whose UCB vectors move a little each round, as in ParetoUCB.
func TestPeelWithRanks(t *testing.T) {
	rng := rand.New(rand.NewPCG(53, 54))
	for _, c := range []struct{ n, d int }{{100, 4}, {150, 5}, {40, 6}} {
		mean := frontPoints(rng, c.n, c.d)
		pulls := make([]int, c.n)
		upper := make([][]float64, c.n)
		for i := range upper {
			upper[i] = make([]float64, c.d)
			pulls[i] = 1 + rng.IntN(3)
		}
		ranked := Layers{Ranks: true}
		ranked.ReserveRanks(c.n, c.d)
		var plain Layers
		distinct := 0
		for round := range 300 {
			b := math.Sqrt(math.Log(float64(round + 2)))
			for i, m := range mean {
				for j, x := range m {
					upper[i][j] = x + b/math.Sqrt(float64(pulls[i]))
				}
			}
			k := 1 + rng.IntN(c.n)
			wantFull, wantOver := plain.Peel(upper, k)
			gotFull, gotOver := ranked.Peel(upper, k)
			if !slices.Equal(gotFull, wantFull) || !slices.Equal(gotOver, wantOver) ||
				ranked.FullLayers() != plain.FullLayers() {
				t.Fatalf("n = %d, d = %d, round %d, k = %d: ranks %v + %v, archive %v + %v", c.n, c.d, round, k, gotFull, gotOver, wantFull, wantOver)
			}
			for r := range plain.FullLayers() {
				if !slices.Equal(ranked.FullLayer(r), plain.FullLayer(r)) {
					t.Fatalf("round %d: layer %d differs", round, r)
				}
			}
			if !ranked.ranks.ready || ranked.ranks.n != c.n {
				t.Fatalf("round %d: Peel did not take the rank pass", round)
			}
			if ranked.ranks.distinct {
				distinct++ // dominators taken without the exact test
			}
			for range 1 + rng.IntN(6) { // play a few arms
				i := rng.IntN(c.n)
				pulls[i]++
				for j := range mean[i] {
					mean[i][j] += (rng.Float64() - 0.5) / float64(8*pulls[i])
				}
			}
		}
		checkRankState(t, &ranked, upper, "after the rounds")
		if distinct == 0 {
			t.Errorf("n = %d, d = %d: no round without equal coordinates", c.n, c.d)
		}
	}
}

// TestRanksOnlyWhenAsked: without Ranks, below d = 4, past the bounds and
// for ragged points, Peel does not take the rank pass.
func TestRanksOnlyWhenAsked(t *testing.T) {
	four := [][]float64{{1, 2, 3, 4}, {2, 1, 0, 0}}
	var plain Layers
	if plain.prepareRanks(four) {
		t.Error("prepareRanks without Ranks = true")
	}
	wide := make([][]float64, rankMaxArms+1)
	for i := range wide {
		wide[i] = []float64{float64(i), 0, 0, 0}
	}
	l := Layers{Ranks: true}
	for _, pts := range [][][]float64{
		nil,
		{{1, 2, 3}, {3, 2, 1}},
		{{1, 2, 3, 4}, {2, 1, 0}},
		wide,
		{make([]float64, rankMaxDims+1)},
	} {
		if l.prepareRanks(pts) {
			t.Errorf("prepareRanks(%d points, the first of %d coordinates) = true, want false", len(pts), len(slices.Concat(pts[:min(1, len(pts))]...)))
		}
	}
	if !l.prepareRanks(four) {
		t.Error("prepareRanks refused d = 4 with Ranks set")
	}
}

func TestRanksDoNotAllocate(t *testing.T) {
	rng := rand.New(rand.NewPCG(55, 56))
	for _, d := range []int{4, 5} {
		pts := frontPoints(rng, 150, d)
		l := Layers{Ranks: true}
		l.Reserve(150)
		l.ReserveRanks(150, d)
		if a := testing.AllocsPerRun(50, func() {
			l.Peel(pts, 150)
			pts[3][1] += 0.01
			pts[7][2] = pts[9][2] // a tie
		}); a != 0 {
			t.Fatalf("d = %d: Peel allocates %v times per call", d, a)
		}
	}
}
