package algos

import (
	"math"
	"math/rand/v2"
)

// PickUniform fills out with a uniformly random subset of cand of size
// len(out), by a partial Fisher–Yates shuffle of cand (which it reorders).
// It draws len(out) integers from rng.
func PickUniform(cand, out []int, rng *rand.Rand) {
	for a := range out {
		r := a + rng.IntN(len(cand)-a)
		cand[a], cand[r] = cand[r], cand[a]
		out[a] = cand[a]
	}
}

// PickLargest fills out with the len(out) members of cand of largest
// score[i] (score is indexed by arm), in decreasing order, the lowest arm
// index first among equal scores. It reorders cand.
func PickLargest(score []float64, cand, out []int) {
	for a := range out {
		best := a
		for c := a + 1; c < len(cand); c++ {
			i, b := cand[c], cand[best]
			if score[i] > score[b] || score[i] == score[b] && i < b {
				best = c
			}
		}
		cand[a], cand[best] = cand[best], cand[a]
		out[a] = cand[a]
	}
}

// PickLargestSum is PickLargest on the coordinate sums of o's points, in
// exact arithmetic (SumOrder): the len(out) members of cand of largest
// Σ_j points[i][j], in decreasing order, the lowest index first among
// exactly equal sums. It reorders cand.
func PickLargestSum(o *SumOrder, cand, out []int) {
	for a := range out {
		best := a
		for c := a + 1; c < len(cand); c++ {
			if o.Before(cand[c], cand[best]) {
				best = c
			}
		}
		cand[a], cand[best] = cand[best], cand[a]
		out[a] = cand[a]
	}
}

// SumOrder orders arms by the coordinate sums of their vectors in exact
// arithmetic, larger first, the lower index first on exact ties: the sums
// formed in coordinate order (CoordSums) decide unless they lie within
// their rounding errors of each other; then the exact sums do
// (CompareSums).
type SumOrder struct {
	Points [][]float64
	Sums   []float64 // Σ_j points[i][j] as CoordSums forms it
	Abs    []float64 // Σ_j |points[i][j]|, the scale of each sum's error; nil: computed when needed
}

// Before reports whether arm i comes before arm j. Sums that are not
// finite (a vector holding ±Inf) are taken as computed.
func (o *SumOrder) Before(i, j int) bool {
	if o.Abs != nil { // far apart, the common case, decided inline: 2⁻⁴⁰ is above every error bound near uses
		diff, m := o.Sums[i]-o.Sums[j], 0x1p-40*(o.Abs[i]+o.Abs[j])
		if diff > m {
			return true
		} else if diff < -m {
			return false
		}
	}
	return o.before(i, j)
}

// First returns the position in arms (not empty) of the arm that comes
// first: what a scan keeping the arm that comes before the best so far
// returns, as Before is an order. The arm of the largest computed sum is
// found first; with Abs given, an arm that Before's inline test puts after
// it is skipped (as it comes after the first too), so Before runs only on
// the arms whose sums lie near the largest.
func (o *SumOrder) First(arms []int) int {
	sums := o.Sums
	top, ts := 0, sums[arms[0]]
	for c, i := range arms {
		if s := sums[i]; s > ts {
			top, ts = c, s
		}
	}
	t, best := arms[top], -1
	if abs := o.Abs; abs != nil {
		at := abs[t]
		for c, i := range arms {
			if ts-sums[i] > 0x1p-40*(at+abs[i]) { // Before(t, i), as it tests
				continue
			}
			if best < 0 || o.Before(i, arms[best]) {
				best = c
			}
		}
		return best
	}
	for c, i := range arms {
		if best < 0 || o.Before(i, arms[best]) {
			best = c
		}
	}
	return best
}

func (o *SumOrder) before(i, j int) bool {
	si, sj := o.Sums[i], o.Sums[j]
	if math.Abs(si) <= math.MaxFloat64 && math.Abs(sj) <= math.MaxFloat64 && o.near(i, j) {
		c := CompareSums(o.Points[i], o.Points[j])
		return c > 0 || c == 0 && i < j
	}
	return si > sj || si == sj && i < j
}

// near reports whether the computed sums of arms i and j may be equal or
// in either order exactly: each is within ErrorBound(d, 1)·Σ_j |v_j| of
// its exact value (d − 1 roundings, the first addition to +0 being exact).
func (o *SumOrder) near(i, j int) bool {
	rel := ErrorBound(len(o.Points[i]), 1)
	return Near(o.Sums[i], o.Sums[j], float64(rel*o.abs(i)), float64(rel*o.abs(j)))
}

func (o *SumOrder) abs(i int) float64 {
	if o.Abs != nil {
		return o.Abs[i]
	}
	s := 0.0
	for _, x := range o.Points[i] {
		s += math.Abs(x)
	}
	return s
}

// sort sorts arms (in order of computed sum, larger first, lower index on
// equal sums) by Before: an insertion sort, which moves only members whose
// computed sums are near ties.
func (o *SumOrder) sort(arms []int) {
	for a := 1; a < len(arms); a++ {
		x := arms[a]
		b := a
		for ; b > 0 && o.Before(x, arms[b-1]); b-- {
			arms[b] = arms[b-1]
		}
		arms[b] = x
	}
}

// CoordSums writes the coordinate sum Σ_j v_ij of every vector into out
// (len(vectors)), summing in coordinate order.
func CoordSums(vectors [][]float64, out []float64) {
	for i, v := range vectors {
		s := 0.0
		for _, x := range v {
			s += x
		}
		out[i] = s
	}
}
