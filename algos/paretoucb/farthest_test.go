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

// farthestRef is the definition of farthest in exact arithmetic on U
// (math/big): every distance max_j |U_ij − U_sj| and every sum Σ_j U_ij
// exact, the largest minimum distance taken, the lowest index on exact
// ties; with nothing chosen, the largest exact sum first.
func farthestRef(upper [][]float64, chosen, layer, out []int) {
	exact := func(x float64) *big.Float { return new(big.Float).SetPrec(1 << 13).SetFloat64(x) }
	linf := func(a, b []float64) *big.Float {
		d := exact(0)
		for j := range b {
			x := new(big.Float).SetPrec(1<<13).Sub(exact(a[j]), exact(b[j]))
			if x.Abs(x).Cmp(d) > 0 {
				d = x
			}
		}
		return d
	}
	// The sums exactly, or as computed where a vector holds ±Inf.
	sumCmp := func(a, b []float64) int {
		fa, fb := 0.0, 0.0
		for j := range a {
			fa += a[j]
			fb += b[j]
		}
		if math.IsInf(fa, 0) || math.IsInf(fb, 0) || fa != fa || fb != fb {
			switch { // a NaN (+Inf − Inf) neither wins nor ties
			case fa > fb:
				return 1
			case fa == fb:
				return 0
			}
			return -1
		}
		sa, sb := exact(0), exact(0)
		for j := range a {
			sa.Add(sa, exact(a[j]))
			sb.Add(sb, exact(b[j]))
		}
		return sa.Cmp(sb)
	}
	dist := make([]*big.Float, len(layer)) // nil: nothing folded yet (+Inf)
	taken := make([]bool, len(layer))
	nearer := func(s int) {
		for c, i := range layer {
			if taken[c] {
				continue
			}
			if x := linf(upper[i], upper[s]); dist[c] == nil || x.Cmp(dist[c]) < 0 {
				dist[c] = x
			}
		}
	}
	for _, s := range chosen {
		nearer(s)
	}
	for a := range out {
		best := -1
		for c, i := range layer {
			if taken[c] {
				continue
			}
			var cmp int
			switch {
			case best < 0:
				cmp = 1
			case a == 0 && len(chosen) == 0:
				cmp = sumCmp(upper[i], upper[layer[best]])
			case dist[c] == nil || dist[best] == nil:
				cmp = 0 // both +Inf: only when nothing is folded
			default:
				cmp = dist[c].Cmp(dist[best])
			}
			if cmp > 0 || cmp == 0 && i < layer[best] {
				best = c
			}
		}
		out[a] = layer[best]
		taken[best] = true
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
	for trial := range 5000 {
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
		farthestRef(p.upper, chosen, slices.Clone(layer), want)
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

// TestFarthestExactTie: arms 0 and 1 lie at ℓ∞ distances 1.5 − 2⁻⁵³ and
// 1.5 + 2⁻⁵³ from the chosen arm 2, both rounded to 1.5: the farther one in
// exact arithmetic, arm 1, is taken, where the lowest index on the computed
// tie would take arm 0.
func TestFarthestExactTie(t *testing.T) {
	p := New(algos.Config{Problem: algos.Problem{N: 3, D: 2, K: 1, T: 1}}, 0.1, Farthest)
	half := math.Nextafter(0.5, 1)
	copy(p.upper[0], []float64{2, 0})
	copy(p.upper[1], []float64{-1, 0})
	copy(p.upper[2], []float64{half, 0})
	if 2-half != half+1 {
		t.Fatalf("set-up: the computed distances %v and %v differ", 2-half, half+1)
	}
	out := make([]int, 1)
	p.farthest([]int{2}, []int{0, 1}, out)
	if out[0] != 1 {
		t.Fatalf("farthest = %v, want [1]", out)
	}
}
