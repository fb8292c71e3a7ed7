package paretodiv

import (
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

// TestFarthestMatchesDefinition compares Choose with farthestRef on
// random U with many exact ties of distances: coordinates on a coarse grid
// (so equal gaps are common), exact duplicates, −0 and +0, negative values,
// one-ulp neighbours and infinities; layers in any order, with and without
// chosen arms, d = 2 to 6 (written out for 2–5, the loop for 6), folding
// in eagerly and lazily.
func TestFarthestMatchesDefinition(t *testing.T) {
	defer func(from int) { lazyFrom = from }(lazyFrom)
	rng := rand.New(rand.NewPCG(21, 2))
	values := []float64{0, math.Copysign(0, -1), 0.25, -0.25, 0.5, 1, 1.5, -1,
		math.Nextafter(0.5, 1), math.Nextafter(1, 0), 1e-300, math.Inf(1), math.Inf(-1)}
	for trial := range 5000 {
		d := 2 + trial%5
		n := 2 + rng.IntN(30)
		lazyFrom = []int{1 << 30, 0}[trial/5%2]
		f := newFarthest(n)
		upper, flat, sum := ucb(n, d)
		for i := range n {
			if i > 0 && rng.IntN(5) == 0 { // an exact duplicate
				copy(upper[i], upper[rng.IntN(i)])
			} else {
				for j := range d {
					if rng.IntN(3) == 0 {
						upper[i][j] = rng.Float64()
					} else {
						upper[i][j] = values[rng.IntN(len(values))]
					}
				}
			}
		}
		// At most one arm may hold infinities (Inf − Inf is NaN).
		inf := -1
		for i := range n {
			for j := range d {
				if math.IsInf(upper[i][j], 0) {
					if inf >= 0 && inf != i {
						upper[i][j] = 2
					} else {
						inf = i
					}
				}
			}
		}
		for i := range n {
			s := 0.0
			for _, x := range upper[i] {
				s += x
			}
			sum[i] = s
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
		farthestRef(upper, chosen, slices.Clone(layer), want)
		order := algos.SumOrder{Points: upper, Sums: sum} // as Select sets it, |U| taken when needed
		f.Choose(flat, d, &order, chosen, slices.Clone(layer), got)
		if !slices.Equal(got, want) {
			t.Fatalf("trial %d (d=%d): farthest %v, definition %v\nchosen %v layer %v\nU %v", trial, d, got, want, chosen, layer, upper)
		}
	}
}

// TestFarthestExactTie: arms 0 and 1 lie at ℓ∞ distances 1.5 − 2⁻⁵³ and
// 1.5 + 2⁻⁵³ from the chosen arm 2, both rounded to 1.5: the farther one in
// exact arithmetic, arm 1, is taken, where the lowest index on the computed
// tie would take arm 0.
func TestFarthestExactTie(t *testing.T) {
	f := newFarthest(3)
	upper, flat, sum := ucb(3, 2)
	half := math.Nextafter(0.5, 1)
	copy(upper[0], []float64{2, 0})
	copy(upper[1], []float64{-1, 0})
	copy(upper[2], []float64{half, 0})
	if 2-half != half+1 {
		t.Fatalf("set-up: the computed distances %v and %v differ", 2-half, half+1)
	}
	out := make([]int, 1)
	order := algos.SumOrder{Points: upper, Sums: sum} // as Select sets it, |U| taken when needed
	f.Choose(flat, 2, &order, []int{2}, []int{0, 1}, out)
	if out[0] != 1 {
		t.Fatalf("farthest = %v, want [1]", out)
	}
}

// ucb returns U for n arms in d objectives, zero: as rows (upper) over
// the flat backing that Choose reads, and the sums Σ_j U_ij.
func ucb(n, d int) (upper [][]float64, flat, sum []float64) {
	flat = make([]float64, n*d)
	upper = make([][]float64, n)
	for i := range upper {
		upper[i] = flat[i*d : (i+1)*d : (i+1)*d]
	}
	return upper, flat, make([]float64, n)
}
