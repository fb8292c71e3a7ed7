package stats

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	mstats "github.com/montanaflynn/stats"
)

// TestOwnedMatchMontanaflynn checks the owned sample SD and percentile
// against montanaflynn/stats: within 2 ulps everywhere (its own code is
// fused on some CPUs; for the percentile, 16 ulps of the largest |x|, as
// its interpolation lower + (upper−lower)·f cancels), bit for bit on amd64
// GOAMD64=v1 where it is not fused (owned_amd64v1_test.go sets exactOwned).
func TestOwnedMatchMontanaflynn(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for trial := range 2000 {
		n := 2 + rng.IntN(40)
		xs := make([]float64, n)
		scale := math.Ldexp(1, rng.IntN(40)-20)
		for i := range xs {
			xs[i] = (rng.Float64() - 0.3) * scale
		}
		want, _ := mstats.StandardDeviationSample(xs)
		check(t, "sampleSD", trial, sampleSD(xs), want, math.Abs(want), 2)
		p := 100 * rng.Float64()
		if p == 0 {
			p = 50
		}
		wantP, _ := mstats.Percentile(xs, p)
		largest := 0.0
		for _, x := range xs {
			largest = max(largest, math.Abs(x))
		}
		check(t, "percentile", trial, percentile(xs, p), wantP, largest, 16)
	}
}

// check: got equals want bit for bit where exactOwned, else is within ulps
// ulps of scale (16 for the percentile: a fused index fraction moves the
// interpolation by an ulp of 1 times upper − lower).
func check(t *testing.T, name string, trial int, got, want, scale, ulps float64) {
	t.Helper()
	ulp := math.Nextafter(scale, math.Inf(1)) - scale
	if exactOwned && got != want || math.Abs(got-want) > ulps*ulp {
		t.Fatalf("%s, trial %d: %v, montanaflynn/stats gives %v", name, trial, got, want)
	}
}

// TestTQuantileAccuracy checks the two-sided Student-t critical values
// against the exact quantile: bisection on the distribution function
// evaluated in math/big at 300 bits. The float64 series behind the result
// has rounding errors of a few ulps, divided by the density where it is
// inverted: the error is small at the CI levels used (0.9–0.99) and grows
// in the far tail (0.999, one or five degrees of freedom).
func TestTQuantileAccuracy(t *testing.T) {
	worst := map[float64]float64{}
	for _, nu := range []int{1, 2, 3, 4, 5, 9, 10, 19, 29, 99} {
		for _, level := range []float64{0.5, 0.9, 0.95, 0.99, 0.999} {
			q := tQuantileTwoSided(nu, level)
			lo, hi := 0.0, 2*q
			for range 80 {
				mid := (lo + hi) / 2
				if bigTTwoSided(mid, nu).Cmp(big.NewFloat(level)) < 0 {
					lo = mid
				} else {
					hi = mid
				}
			}
			ulp := math.Nextafter(hi, math.Inf(1)) - hi
			e := math.Abs(q-hi) / ulp
			worst[level] = max(worst[level], e)
			if rel := math.Abs(q-hi) / hi; rel > 1e-12 || level <= 0.95 && e > 16 {
				t.Errorf("nu = %d, level = %v: t = %v, exact %v (%.1f ulp)", nu, level, q, hi, e)
			}
		}
	}
	t.Logf("largest error in ulps by level: %v", worst)
}

// bigTTwoSided is P(|T| < t) by the series of tTwoSided in 300-bit
// arithmetic, with atan by argument halving and its Taylor series.
func bigTTwoSided(t float64, nu int) *big.Float {
	const p = 300
	f := func(v float64) *big.Float { return new(big.Float).SetPrec(p).SetFloat64(v) }
	T, n := f(t), f(float64(nu))
	r := new(big.Float).SetPrec(p).Mul(T, T)
	r.Add(r, n)
	sin := new(big.Float).SetPrec(p).Quo(T, new(big.Float).SetPrec(p).Sqrt(r))
	cos2 := new(big.Float).SetPrec(p).Quo(n, r)
	sum, term := f(1), f(1)
	if nu%2 == 0 {
		for k := 1; k <= nu/2-1; k++ {
			term.Mul(term, cos2)
			term.Mul(term, f(float64(2*k-1)))
			term.Quo(term, f(float64(2*k)))
			sum.Add(sum, term)
		}
		return sum.Mul(sum, sin)
	}
	// θ = atan(x), x = t/√ν, halved 4 times: atan x = 2 atan(x/(1+√(1+x²))).
	x := new(big.Float).SetPrec(p).Quo(T, new(big.Float).SetPrec(p).Sqrt(n))
	for range 4 {
		s := new(big.Float).SetPrec(p).Mul(x, x)
		s.Add(s, f(1))
		s.Sqrt(s)
		s.Add(s, f(1))
		x.Quo(x, s)
	}
	theta, pow := new(big.Float).SetPrec(p).Set(x), new(big.Float).SetPrec(p).Set(x)
	x2 := new(big.Float).SetPrec(p).Mul(x, x)
	for k := 1; k < 2000; k++ {
		pow.Mul(pow, x2)
		pow.Neg(pow)
		tk := new(big.Float).SetPrec(p).Quo(pow, f(float64(2*k+1)))
		theta.Add(theta, tk)
		if tk.Sign() == 0 || tk.MantExp(nil) < -p-8 {
			break
		}
	}
	theta.Mul(theta, f(16))
	// π by Machin's formula is not needed: 2/π = 1/(2·atan(1)·2), and
	// atan(1) = π/4 by the same series after halving.
	one := f(1)
	for range 4 {
		s := new(big.Float).SetPrec(p).Mul(one, one)
		s.Add(s, f(1))
		s.Sqrt(s)
		s.Add(s, f(1))
		one.Quo(one, s)
	}
	quarterPi, pw := new(big.Float).SetPrec(p).Set(one), new(big.Float).SetPrec(p).Set(one)
	o2 := new(big.Float).SetPrec(p).Mul(one, one)
	for k := 1; k < 2000; k++ {
		pw.Mul(pw, o2)
		pw.Neg(pw)
		tk := new(big.Float).SetPrec(p).Quo(pw, f(float64(2*k+1)))
		quarterPi.Add(quarterPi, tk)
		if tk.Sign() == 0 || tk.MantExp(nil) < -p-8 {
			break
		}
	}
	quarterPi.Mul(quarterPi, f(16))
	if nu > 1 {
		for k := 1; k <= (nu-3)/2; k++ {
			term.Mul(term, cos2)
			term.Mul(term, f(float64(2*k)))
			term.Quo(term, f(float64(2*k+1)))
			sum.Add(sum, term)
		}
		c := new(big.Float).SetPrec(p).Sqrt(cos2)
		sum.Mul(sum, c)
		sum.Mul(sum, sin)
		theta.Add(theta, sum)
	}
	// (2/π)·θ = θ / (2·(π/4))
	return theta.Quo(theta, quarterPi.Mul(quarterPi, f(2)))
}
