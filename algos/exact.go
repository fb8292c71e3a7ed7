package algos

import (
	"math"
	"math/big"
)

// Exact decisions. A policy's scores are functions of the floating-point
// numbers it holds (empirical means, counts, radii, drawn directions,
// weights and samples, its UCB vectors), and it decides on their values
// in exact arithmetic: two scores equal in exact arithmetic are a tie,
// decided by the policy's documented rule (the lowest index, unless it
// says otherwise), however rounding made their computed values differ; two
// that differ are ordered by their exact values, however rounding made the
// computed ones equal or reversed. The computed value decides when it is
// far enough from the other for no rounding to reverse them (Near); only
// near ties are computed again exactly, with math/big, which is rare.

// Near reports whether computed values a and b, each within ea and eb of
// its exact value, may be equal or in either order exactly: |a − b| ≤
// ea + eb, with room for the rounding of the test itself and for values
// too small for relative bounds (below 2⁻¹⁰⁰⁰). Otherwise a and b are in
// the order of their exact values.
func Near(a, b, ea, eb float64) bool {
	return math.Abs(a-b) <= float64(float64(ea+eb)*(1+0x1p-50))+0x1p-1000
}

// ErrorBound bounds, relative to scale, the error of a value computed by
// at most ops roundings (each of relative error at most 2⁻⁵³) of terms
// whose magnitudes sum to at most terms·scale: a product or quotient of
// factors is within ErrorBound(ops, 1)·|value| of its exact value, an
// inclusion–exclusion sum of terms no larger than its first within
// ErrorBound(ops, terms)·first. Twice the first-order bound, far above the
// higher-order terms for ops·terms < 2³⁰.
func ErrorBound(ops, terms int) float64 {
	return float64(ops) * float64(terms) * 0x1p-51
}

// Rat returns the finite float x as an exact rational, in z (or a new one
// when z is nil).
func Rat(z *big.Rat, x float64) *big.Rat {
	if z == nil {
		z = new(big.Rat)
	}
	return z.SetFloat64(x)
}

// ExactSum returns Σ xs exactly, in z (or a new one when z is nil).
func ExactSum(z *big.Rat, xs ...float64) *big.Rat {
	if z == nil {
		z = new(big.Rat)
	}
	z.SetInt64(0)
	var t big.Rat
	for _, x := range xs {
		z.Add(z, t.SetFloat64(x))
	}
	return z
}

// exactPrec is a precision at which sums of finite floats and of products
// of two finite floats are exact: a product spans at most 106 bits between
// 2⁻²¹⁴⁸ and 2²⁰⁴⁸, and a sum no more than the span of its terms.
const exactPrec = 1 << 13

// Sum is an exact sum of floats and of products of two floats, for the
// comparisons of near ties that need no quotient (Rat does those). Its
// values are reused between sums, so that repeated comparisons do not
// allocate once warm.
type Sum struct {
	v, x, y big.Float
}

// Reset sets the sum to 0 and returns it.
func (s *Sum) Reset() *Sum {
	s.v.SetPrec(exactPrec).SetInt64(0)
	return s
}

// Add adds x.
func (s *Sum) Add(x float64) {
	s.v.Add(&s.v, s.x.SetPrec(exactPrec).SetFloat64(x))
}

// AddAll adds every x of xs and returns s.
func (s *Sum) AddAll(xs []float64) *Sum {
	for _, x := range xs {
		s.Add(x)
	}
	return s
}

// AddProduct adds x·y.
func (s *Sum) AddProduct(x, y float64) {
	s.x.SetPrec(exactPrec).SetFloat64(x)
	s.y.SetPrec(exactPrec).SetFloat64(y)
	s.v.Add(&s.v, s.x.Mul(&s.x, &s.y))
}

// Cmp compares s with t: −1, 0 or +1 as s <, =, > t.
func (s *Sum) Cmp(t *Sum) int { return s.v.Cmp(&t.v) }

// CompareSums returns the sign of Σa − Σb in exact arithmetic, for finite
// floats. It sums them into a floating-point expansion (Shewchuk's
// grow-expansion: sums of two floats split exactly into the rounded sum
// and its error, without products, so the same on every CPU), whose sign
// is that of its last non-zero component; without allocating for up to 32
// terms in all.
func CompareSums(a, b []float64) int {
	var buf [33]float64
	if len(a)+len(b) > len(buf)-1 {
		var x, y Sum
		return x.Reset().AddAll(a).Cmp(y.Reset().AddAll(b))
	}
	e := buf[:0]
	grow := func(x float64) {
		q := x
		for i, c := range e {
			q, e[i] = twoSum(q, c)
		}
		e = append(e, q)
	}
	for _, x := range a {
		grow(x)
	}
	for _, x := range b {
		grow(-x)
	}
	for i := len(e) - 1; i >= 0; i-- {
		switch {
		case e[i] > 0:
			return 1
		case e[i] < 0:
			return -1
		case e[i] != 0: // NaN: an overflow on the way
			var x, y Sum
			return x.Reset().AddAll(a).Cmp(y.Reset().AddAll(b))
		}
	}
	return 0
}

// twoSum returns a + b rounded and its rounding error, a + b − s, exactly
// (Knuth's TwoSum; Go evaluates every operation as written).
func twoSum(a, b float64) (s, err float64) {
	s = a + b
	bb := s - a
	err = (a - (s - bb)) + (b - bb)
	return s, err
}

// Expansion is an exact sum of floats and of products of two floats, held
// as a floating-point expansion: non-overlapping components, each the
// error of the one above, as Shewchuk's grow-expansion with zero
// elimination leaves them (TwoSum; products split exactly by math.FMA,
// the same on every CPU). Its sign is its largest component's. It holds
// up to 64 non-zero components without allocating, and stays exact while
// every term and product lies within 2⁻⁹⁰⁰ … 2⁹⁰⁰ in magnitude (or is 0):
// Ok reports whether it did, and callers fall back to math/big when not.
type Expansion struct {
	n   int
	bad bool
	e   [64]float64
}

// Reset empties x and returns it.
func (x *Expansion) Reset() *Expansion {
	x.n, x.bad = 0, false
	return x
}

// Ok reports whether the sum is exact: every term within range, and no
// more components than x holds.
func (x *Expansion) Ok() bool { return !x.bad }

// Add adds v.
func (x *Expansion) Add(v float64) {
	if v == 0 {
		return
	}
	if a := math.Abs(v); !(a >= 0x1p-900 && a <= 0x1p900) {
		x.bad = true
		return
	}
	q, m := v, 0
	for _, c := range x.e[:x.n] {
		var h float64
		q, h = twoSum(q, c)
		if h != 0 {
			x.e[m] = h
			m++
		}
	}
	if q != 0 {
		if m == len(x.e) {
			x.bad = true
			return
		}
		x.e[m] = q
		m++
	}
	x.n = m
}

// AddProduct adds a·b. A product of non-zero factors that rounds to 0
// has lost its value (and its rounding error rounds to 0 too), so it
// leaves the sum inexact rather than adding nothing.
func (x *Expansion) AddProduct(a, b float64) {
	p := a * b
	if p == 0 && a != 0 && b != 0 {
		x.bad = true
		return
	}
	x.Add(p)
	x.Add(math.FMA(a, b, -p)) // the product's rounding error, exactly
}

// Sign returns −1, 0 or +1 as the sum is negative, zero or positive.
func (x *Expansion) Sign() int {
	if x.n == 0 {
		return 0
	}
	if x.e[x.n-1] > 0 {
		return 1
	}
	return -1
}
