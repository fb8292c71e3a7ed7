package paretoucb

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"thv/algos"
)

// farthestRef is the definition of farthest, in floats with the builtin
// min and max, as the code was before distances were kept as bit patterns.
func farthestRef(upper [][]float64, sum []float64, chosen, layer, out []int) {
	linf := func(a, b []float64) float64 {
		d := 0.0
		for j := range b {
			d = max(d, math.Abs(a[j]-b[j]))
		}
		return d
	}
	dist := make([]float64, len(layer))
	for c := range dist {
		dist[c] = math.Inf(1)
	}
	nearer := func(s int) {
		for c, i := range layer {
			if dist[c] >= 0 {
				dist[c] = min(dist[c], linf(upper[i], upper[s]))
			}
		}
	}
	for _, s := range chosen {
		nearer(s)
	}
	for a := range out {
		best := -1
		if a == 0 && len(chosen) == 0 {
			for c, i := range layer {
				if best < 0 || sum[i] > sum[layer[best]] ||
					sum[i] == sum[layer[best]] && i < layer[best] {
					best = c
				}
			}
		} else {
			for c, x := range dist {
				if x >= 0 && (best < 0 || x > dist[best] ||
					x == dist[best] && layer[c] < layer[best]) {
					best = c
				}
			}
		}
		out[a] = layer[best]
		dist[best] = -1
		nearer(layer[best])
	}
}

// TestFarthestMatchesDefinition compares farthest with farthestRef on
// random U with many exact ties of distances: coordinates on a coarse grid
// (so equal gaps are common), exact duplicates, −0 and +0, negative values,
// one-ulp neighbours and infinities; layers in any order, with and without
// chosen arms, d = 2 to 6 (written out for 2–5, the loop for 6).
func TestFarthestMatchesDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 2))
	values := []float64{0, math.Copysign(0, -1), 0.25, -0.25, 0.5, 1, 1.5, -1,
		math.Nextafter(0.5, 1), math.Nextafter(1, 0), 1e-300, math.Inf(1), math.Inf(-1)}
	for trial := range 20000 {
		d := 2 + trial%5
		n := 2 + rng.IntN(30)
		p := New(algos.Config{Problem: algos.Problem{N: n, D: d, K: 1, T: 1}}, 0.1, Farthest)
		for i := range n {
			if i > 0 && rng.IntN(5) == 0 { // an exact duplicate
				copy(p.upper[i], p.upper[rng.IntN(i)])
			} else {
				for j := range d {
					if rng.IntN(3) == 0 {
						p.upper[i][j] = rng.Float64()
					} else {
						p.upper[i][j] = values[rng.IntN(len(values))]
					}
				}
			}
		}
		// At most one arm may hold infinities (Inf − Inf is NaN).
		inf := -1
		for i := range n {
			for j := range d {
				if math.IsInf(p.upper[i][j], 0) {
					if inf >= 0 && inf != i {
						p.upper[i][j] = 2
					} else {
						inf = i
					}
				}
			}
		}
		for i := range n {
			s := 0.0
			for _, x := range p.upper[i] {
				s += x
			}
			p.sum[i] = s
		}
		arms := rng.Perm(n)
		nc := rng.IntN(n - 1)
		if rng.IntN(2) == 0 {
			nc = 0
		}
		chosen, layer := arms[:nc], arms[nc:]
		if rng.IntN(2) == 0 {
			slices.Sort(layer)
		}
		k := 1 + rng.IntN(len(layer))
		got, want := make([]int, k), make([]int, k)
		farthestRef(p.upper, p.sum, chosen, slices.Clone(layer), want)
		p.farthest(chosen, slices.Clone(layer), got)
		if !slices.Equal(got, want) {
			t.Fatalf("trial %d (d=%d): farthest %v, definition %v\nchosen %v layer %v\nU %v", trial, d, got, want, chosen, layer, p.upper)
		}
	}
}

// TestUCBVectorsBitIdentical: Select's U and Σ_j U_ij, written out for
// d = 2–5, are those of the loop over coordinates bit for bit, −0 and
// zero counts included, d = 2 to 6.
func TestUCBVectorsBitIdentical(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 4))
	for trial := range 2000 {
		d := 2 + trial%5
		n := 1 + rng.IntN(20)
		p := New(algos.Config{Problem: algos.Problem{N: n, D: d, K: 1, T: 1}}, 0.1, Farthest)
		for i := range n {
			p.Count[i] = rng.IntN(4)
			for j := range d {
				switch rng.IntN(4) {
				case 0:
					p.Mean[i][j] = math.Copysign(0, -1)
				case 1:
					p.Mean[i][j] = -rng.Float64()
				default:
					p.Mean[i][j] = rng.Float64()
				}
			}
		}
		tt := 1 + rng.IntN(1000)
		p.Select(tt, make([]int, 1))
		c := 2 * p.eta * logTerm(tt, d, p.front.Size(p.Mean))
		for i, m := range p.Mean {
			b := math.Sqrt(c / float64(max(1, p.Count[i])))
			s := 0.0
			for j, x := range m {
				u := x + b
				if math.Float64bits(p.upper[i][j]) != math.Float64bits(u) {
					t.Fatalf("trial %d: U[%d][%d] = %v, want %v", trial, i, j, p.upper[i][j], u)
				}
				s += u
			}
			if math.Float64bits(p.sum[i]) != math.Float64bits(s) {
				t.Fatalf("trial %d (d = %d): Σ U[%d] = %v, want %v", trial, d, i, p.sum[i], s)
			}
		}
	}
}

// TestCrowdingShortcut: the crowding tie-break chooses the same members in
// the same order as picking by Distance's distances, whether or not the
// boundary members are enough (both happen here), on U vectors with ties
// and duplicates.
func TestCrowdingShortcut(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	shortcuts, slow := 0, 0
	for trial := range 3000 {
		d := 2 + trial%4
		n := 2 + rng.IntN(40)
		p := New(algos.Config{Problem: algos.Problem{N: n, D: d, K: 1, T: 1}}, 0.1, Crowding)
		for i := range n {
			for j := range d {
				if rng.IntN(3) == 0 {
					p.upper[i][j] = float64(rng.IntN(4)) / 4 // ties
				} else {
					p.upper[i][j] = rng.Float64()
				}
			}
			if rng.IntN(8) == 0 {
				copy(p.upper[i], p.upper[rng.IntN(n)]) // duplicates
			}
			for _, u := range p.upper[i] {
				p.sum[i] += u
			}
		}
		layer := rng.Perm(n)[:1+rng.IntN(n)]
		slices.Sort(layer)
		out := make([]int, 1+rng.IntN(len(layer)))
		p.crowding(layer, out)
		dist := make([]float64, len(layer))
		p.crowd.Distance(p.upper, layer, dist)
		order := make([]int, len(layer)) // positions, best first: the rule as a sort
		for c := range order {
			order[c] = c
		}
		slices.SortStableFunc(order, func(x, y int) int {
			i, j := layer[x], layer[y]
			switch {
			case dist[x] != dist[y]:
				return cmp.Compare(dist[y], dist[x])
			case p.sum[i] != p.sum[j]:
				return cmp.Compare(p.sum[j], p.sum[i])
			}
			return i - j
		})
		want := make([]int, len(out))
		for a := range want {
			want[a] = layer[order[a]]
		}
		if !slices.Equal(out, want) {
			t.Fatalf("trial %d (d = %d): crowding %v, by Distance %v\nlayer %v U %v", trial, d, out, want, layer, p.upper)
		}
		if bound, _ := p.crowd.Boundary(p.upper, layer, nil); len(bound) >= len(out) {
			shortcuts++
		} else {
			slow++
		}
	}
	if shortcuts < 300 || slow < 300 {
		t.Fatalf("shortcut taken %d times, not %d times: both paths need exercising", shortcuts, slow)
	}
}
