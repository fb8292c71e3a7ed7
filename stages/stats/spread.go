package stats

import (
	"math"
	"sort"
)

// The two montanaflynn/stats functions below are owned because their sums
// of products (variance += d*d, c[k] + f*(c[k+1] − c[k])) are fused into
// multiply-adds on arm64 and other CPUs, so their last bits depend on the
// architecture. They compute what montanaflynn/stats v0.14 computes, in the
// same order, with every product rounded on its own: on amd64 (GOAMD64=v1)
// they give its bits exactly (TestOwnedMatchMontanaflynn). mstats.Mean, a
// plain sum, stays.

// sampleSD is the sample standard deviation of xs (n − 1 denominator), as
// mstats.StandardDeviationSample: deviations scaled by a power of two near
// the largest magnitude (exact), so squaring cannot overflow. len(xs) ≥ 2.
func sampleSD(xs []float64) float64 {
	var largest float64
	for _, v := range xs {
		largest = math.Max(largest, math.Abs(v))
	}
	_, e := math.Frexp(largest)
	e = max(e, -1021)
	f := math.Ldexp(1, -e)
	var sum float64
	for _, v := range xs {
		sum += v
	}
	m := sum / float64(len(xs))
	if math.IsInf(sum, 0) { // as mstats.Mean: sum again, scaled down
		_, le := math.Frexp(float64(len(xs)))
		sum = 0
		for _, v := range xs {
			sum += math.Ldexp(v, -le)
		}
		m = math.Ldexp(sum/float64(len(xs)), le)
	}
	m = float64(m * f) // rounded: it feeds v·f − m
	var variance float64
	for _, v := range xs {
		d := float64(v*f) - m
		variance += float64(d * d)
	}
	return math.Ldexp(math.Sqrt(variance/float64(len(xs)-1)), e)
}

// percentile is mstats.Percentile: linear interpolation between order
// statistics at rank (percent/100)·(n − 1) (Hyndman–Fan type 7, NumPy's
// "linear"), for 0 < percent ≤ 100 and xs non-empty without NaN. xs is not
// modified.
func percentile(xs []float64, percent float64) float64 {
	if len(xs) == 1 {
		return xs[0]
	}
	c := append([]float64(nil), xs...)
	sort.Float64s(c)
	rank := float64(float64(percent/100) * float64(len(c)-1)) // rounded: it feeds rank − k
	k := int(rank)
	f := rank - float64(k)
	if k+1 < len(c) && f != 0 && c[k+1] != c[k] {
		delta := c[k+1] - c[k]
		if math.IsInf(delta, 1) {
			return float64((1-f)*c[k]) + float64(f*c[k+1])
		}
		return c[k] + float64(f*delta)
	}
	return c[k]
}
