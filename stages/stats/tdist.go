package stats

import (
	"math"

	"thv/envs/fmath"
)

// tQuantileTwoSided returns the t > 0 with P(|T| < t) = level for Student's
// T with nu ≥ 1 degrees of freedom, by bisection on tTwoSided. It replaces
// gonum's distuv.StudentsT.Quantile, whose incomplete-beta inversion is
// fused into multiply-adds differently on each architecture: this one gives
// the same bits everywhere (TestTQuantileAccuracy checks it against a
// math/big evaluation and against gonum).
func tQuantileTwoSided(nu int, level float64) float64 {
	if nu < 1 || !(level > 0 && level < 1) {
		return math.NaN()
	}
	lo, hi := 0.0, 1.0
	for tTwoSided(hi, nu) < level {
		lo, hi = hi, 2*hi
		if math.IsInf(hi, 1) {
			return hi
		}
	}
	// The smallest float64 t whose computed probability reaches level.
	for {
		mid := lo + float64((hi-lo)/2) // rounded: / 2 becomes * 0.5, fusable
		if mid <= lo || mid >= hi {
			return hi
		}
		if tTwoSided(mid, nu) < level {
			lo = mid
		} else {
			hi = mid
		}
	}
}

// tTwoSided is P(|T| < t), t ≥ 0, for Student's T with nu degrees of
// freedom, by the finite series of Abramowitz and Stegun 26.7.3–4 in
// θ = atan(t/√nu): sin θ · Σ a_k cos^{2k} θ for even nu, and
// (2/π)(θ + sin θ cos θ · Σ b_k cos^{2k} θ) for odd nu.
func tTwoSided(t float64, nu int) float64 {
	n := float64(nu)
	r := n + float64(t*t)
	sin := t / math.Sqrt(r)
	cos2 := n / r
	if nu%2 == 0 {
		sum, term := 1.0, 1.0
		for k := 1; k <= nu/2-1; k++ {
			term = float64(term*cos2) * float64(2*k-1) / float64(2*k)
			sum += term
		}
		return sin * sum
	}
	theta := fmath.Atan(t / math.Sqrt(n))
	if nu == 1 {
		return theta * (2 / math.Pi)
	}
	sum, term := 1.0, 1.0
	for k := 1; k <= (nu-3)/2; k++ {
		term = float64(term*cos2) * float64(2*k) / float64(2*k+1)
		sum += term
	}
	return (2 / math.Pi) * (theta + float64(sin*math.Sqrt(cos2)*sum))
}
