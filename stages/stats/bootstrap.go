package stats

import (
	"math"
	"math/bits"
	"math/rand/v2"
)

// bootstrapStream is the PCG stream constant of BootstrapMeanCI; the state
// depends on the seed argument only.
const bootstrapStream = 0x9e3779b97f4a7c15

// BootstrapMeanCI returns the percentile bootstrap CI of the mean of d at the
// given level: `resamples` resamples of len(d) values drawn with replacement,
// the mean of each, and the (1−level)/2 and (1+level)/2 quantiles of those
// means. Quantiles are Hyndman–Fan type 7 (linear interpolation between
// order statistics at position q·(B−1), NumPy's default "linear"), computed
// as montanaflynn/stats.Percentile does (percentile, spread.go).
//
// Randomness: a PCG-DXSM generator (math/rand/v2.PCG) seeded with
// (seed, bootstrapStream); indices are drawn from its Uint64 output by
// Lemire's multiply-and-reject method implemented here, so the result
// depends on seed and d only and not on math/rand/v2's helper methods.
//
// Defined cases: if every d[i] is equal (including n = 1), lo = hi = d[0].
// Empty d, a NaN in d, resamples < 1 or level outside (0, 1): NaN, NaN.
func BootstrapMeanCI(d []float64, resamples int, seed uint64, level float64) (lo, hi float64) {
	n := len(d)
	if n == 0 || resamples < 1 || !(level > 0 && level < 1) {
		return math.NaN(), math.NaN()
	}
	allEqual := true
	for _, x := range d {
		if math.IsNaN(x) {
			return math.NaN(), math.NaN()
		}
		if x != d[0] {
			allEqual = false
		}
	}
	if allEqual {
		return d[0], d[0]
	}
	src := rand.NewPCG(seed, bootstrapStream)
	means := make([]float64, resamples)
	for b := range means {
		var s float64
		for range n {
			s += d[bootstrapIndex(src, uint64(n))]
		}
		means[b] = s / float64(n)
	}
	q := float64((1 - level) / 2) // rounded: it feeds 1 − q
	return percentile(means, 100*q), percentile(means, 100*(1-q))
}

// bootstrapIndex returns a uniform integer in [0, n), n ≥ 1, from src by
// Lemire's nearly-divisionless method ("Fast random integer generation in
// an interval", 2019).
func bootstrapIndex(src *rand.PCG, n uint64) int {
	hi, lo := bits.Mul64(src.Uint64(), n)
	if lo < n {
		thresh := -n % n
		for lo < thresh {
			hi, lo = bits.Mul64(src.Uint64(), n)
		}
	}
	return int(hi)
}
