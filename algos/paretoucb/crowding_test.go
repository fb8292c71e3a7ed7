package paretoucb

import (
	"cmp"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"

	"thv/algos"
)

// TestUCBVectorsBitIdentical: Select's U and Σ_j U_ij, written out for
// d = 2–5, are those of the loop over coordinates bit for bit, −0 and
// zero counts included, d = 2 to 6.
func TestUCBVectorsBitIdentical(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 4))
	for trial := range 2000 {
		d := 2 + trial%5
		n := 1 + rng.IntN(20)
		p := New(algos.Config{Problem: algos.Problem{N: n, D: d, K: 1, T: 1}}, 0.1, Crowding)
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
		den := float64(3 + rng.IntN(8)) // a grid of thirds to tenths: ties, and quotients rounded
		for i := range n {
			for j := range d {
				if rng.IntN(3) == 0 {
					p.upper[i][j] = float64(rng.IntN(int(den)+1)) / den
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
		p.order = algos.SumOrder{Points: p.upper, Sums: p.sum} // as Select sets it, |U| taken when needed
		p.crowding(layer, out)
		want, _ := crowdingRules(p, layer, len(out))
		if !slices.Equal(out, want) {
			t.Fatalf("trial %d (d = %d): crowding %v, by the exact definition %v\nlayer %v U %v", trial, d, out, want, layer, p.upper)
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

// refCrowding is the NSGA-II crowding distance of every member of layer in
// exact arithmetic on U (math/big), from the definition: per objective the
// members sorted by (value, index), the ends +Inf (nil), each interior
// member adding (next − prev)/(max − min) when max > min.
func refCrowding(upper [][]float64, layer []int) []*big.Rat {
	dist := make([]*big.Rat, len(layer))
	for c := range dist {
		dist[c] = new(big.Rat)
	}
	inf := make([]bool, len(layer))
	pos := make([]int, len(layer))
	for j := range upper[layer[0]] {
		for c := range pos {
			pos[c] = c
		}
		slices.SortFunc(pos, func(x, y int) int {
			if c := cmp.Compare(upper[layer[x]][j], upper[layer[y]][j]); c != 0 {
				return c
			}
			return layer[x] - layer[y]
		})
		m := len(pos)
		inf[pos[0]], inf[pos[m-1]] = true, true
		span := new(big.Rat).Sub(new(big.Rat).SetFloat64(upper[layer[pos[m-1]]][j]), new(big.Rat).SetFloat64(upper[layer[pos[0]]][j]))
		if span.Sign() <= 0 {
			continue
		}
		for a := 1; a < m-1; a++ {
			gap := new(big.Rat).Sub(new(big.Rat).SetFloat64(upper[layer[pos[a+1]]][j]), new(big.Rat).SetFloat64(upper[layer[pos[a-1]]][j]))
			dist[pos[a]].Add(dist[pos[a]], gap.Quo(gap, span))
		}
	}
	for c := range dist {
		if inf[c] {
			dist[c] = nil
		}
	}
	return dist
}

// compareDist compares two distances of refCrowding (nil is +Inf).
func compareDist(a, b *big.Rat) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return 1
	case b == nil:
		return -1
	}
	return a.Cmp(b)
}

// refSum is Σ_j v_j exactly.
func refSum(v []float64) *big.Rat {
	s := new(big.Rat)
	for _, x := range v {
		s.Add(s, new(big.Rat).SetFloat64(x))
	}
	return s
}

// crowdingRules returns the k members of layer ParetoUCB-Crowd must choose,
// in order: largest crowding distance, then largest Σ_j U_ij, then lowest
// index, in exact arithmetic (refCrowding, refSum); and the k the same rule
// chooses on the computed distances (Crowding.Distance) and sums.
func crowdingRules(p *Policy, layer []int, k int) (exact, computed []int) {
	choose := func(before func(x, y int) int) []int {
		order := make([]int, len(layer)) // positions, best first: the rule as a sort
		for c := range order {
			order[c] = c
		}
		slices.SortStableFunc(order, before)
		out := make([]int, k)
		for a := range out {
			out[a] = layer[order[a]]
		}
		return out
	}
	dist := refCrowding(p.upper, layer)
	exact = choose(func(x, y int) int {
		i, j := layer[x], layer[y]
		if c := compareDist(dist[y], dist[x]); c != 0 {
			return c
		}
		if c := refSum(p.upper[j]).Cmp(refSum(p.upper[i])); c != 0 {
			return c
		}
		return i - j
	})
	fdist := make([]float64, len(layer))
	p.crowd.Distance(p.upper, layer, fdist)
	computed = choose(func(x, y int) int {
		i, j := layer[x], layer[y]
		switch {
		case fdist[x] != fdist[y]:
			return cmp.Compare(fdist[y], fdist[x])
		case p.sum[i] != p.sum[j]:
			return cmp.Compare(p.sum[j], p.sum[i])
		}
		return i - j
	})
	return exact, computed
}

// TestCrowdingExactTies: ParetoUCB-Crowd on small layers with every
// coordinate on a grid of thirds to tenths, where crowding distances
// equal in exact arithmetic come out unequal, and unequal ones equal,
// after rounding: it chooses by the exact distances and sums, and the
// computed ones would often choose otherwise.
func TestCrowdingExactTies(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 26))
	rounding := 0
	for trial := range 20000 {
		d, n := 2+trial%2, 4+rng.IntN(5)
		p := New(algos.Config{Problem: algos.Problem{N: n, D: d, K: 1, T: 1}}, 0.1, Crowding)
		den := float64(3 + rng.IntN(8))
		for i := range n {
			p.sum[i] = 0
			for j := range d {
				p.upper[i][j] = float64(rng.IntN(int(den)+1)) / den
				p.sum[i] += p.upper[i][j]
			}
		}
		layer := rng.Perm(n)[:3+rng.IntN(n-2)]
		slices.Sort(layer)
		out := make([]int, 1+rng.IntN(len(layer)))
		p.order = algos.SumOrder{Points: p.upper, Sums: p.sum} // as Select sets it, |U| taken when needed
		p.crowding(layer, out)
		want, computed := crowdingRules(p, layer, len(out))
		if !slices.Equal(out, want) {
			t.Fatalf("trial %d (d = %d): crowding %v, by the exact definition %v\nlayer %v U %v", trial, d, out, want, layer, p.upper)
		}
		if !slices.Equal(computed, want) {
			rounding++
		}
	}
	if rounding == 0 {
		t.Fatal("the computed distances and sums never chose otherwise: the test does not exercise the exact rule")
	}
	t.Logf("%d of 20000 layers where the computed distances and sums would choose otherwise", rounding)
}
