package stages

// Paired statistics of the paper's statistical-tests table: THV-UCB against
// the second-best baseline, paired by seed. Pure, deterministic functions.
//
// Reference implementation: SciPy 1.10.1 / NumPy 1.24.2 (Debian 12), see
// testdata/gen_fixtures.py and testdata/scipy_fixtures.json.

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"strings"

	"github.com/montanaflynn/stats"
)

// PairedComparison compares a proposed method a with a baseline b over the
// same seeds (a[i], b[i]: HV_last100 of seed i).
type PairedComparison struct {
	N              int
	Delta          float64 // mean(a − b)
	CILow, CIHigh  float64 // percentile bootstrap CI of the mean difference (BootstrapMeanCI)
	CohensD        float64 // paired Cohen's d, see PairedCohensD (±Inf or 0 when sd = 0)
	WilcoxonP      float64 // one-sided Wilcoxon signed-rank p, H1: a > b (WilcoxonSignedRank)
	WilcoxonMethod string  // how WilcoxonP was computed
	Wins           int     // seeds where a > b
}

// ComparePaired computes every statistic of the statistical-tests table from
// the paired samples a and b (d[i] = a[i] − b[i]). resamples (≥ 1) and seed
// drive the bootstrap; level in (0, 1) is the CI level (0.95 in the paper).
// Errors: different lengths, no pairs, a non-finite value, resamples < 1 or
// level outside (0, 1). Otherwise every field is defined and NaN-free.
func ComparePaired(a, b []float64, resamples int, seed uint64, level float64) (PairedComparison, error) {
	if len(a) != len(b) {
		return PairedComparison{}, fmt.Errorf("paired comparison: %d values against %d", len(a), len(b))
	}
	if len(a) == 0 {
		return PairedComparison{}, errors.New("paired comparison: no pairs")
	}
	if resamples < 1 {
		return PairedComparison{}, fmt.Errorf("paired comparison: %d bootstrap resamples", resamples)
	}
	if !(level > 0 && level < 1) {
		return PairedComparison{}, fmt.Errorf("paired comparison: confidence level %v outside (0, 1)", level)
	}
	d := make([]float64, len(a))
	c := PairedComparison{N: len(a)}
	for i := range a {
		d[i] = a[i] - b[i]
		if math.IsNaN(d[i]) || math.IsInf(d[i], 0) {
			return PairedComparison{}, fmt.Errorf("paired comparison: pair %d (%v, %v) has no finite difference", i, a[i], b[i])
		}
		if d[i] > 0 {
			c.Wins++
		}
	}
	c.Delta, _ = stats.Mean(d)
	c.CILow, c.CIHigh = BootstrapMeanCI(d, resamples, seed, level)
	c.CohensD = PairedCohensD(d)
	c.WilcoxonP, c.WilcoxonMethod = WilcoxonSignedRank(d)
	return c, nil
}

// PairedCohensD returns mean(d) / sd(d) with the sample standard deviation
// (n − 1 denominator), as NumPy's mean(d) / std(d, ddof=1). Where that is
// not finite it is defined as follows (NumPy gives ±inf or nan there): when
// sd = 0 (all differences equal) or n = 1 (sd undefined), +Inf if the mean
// is positive, −Inf if negative, 0 if the mean is 0 (e.g. identical runs).
// NaN only for empty input.
func PairedCohensD(d []float64) float64 {
	m, err := stats.Mean(d)
	if err != nil {
		return math.NaN()
	}
	if len(d) < 2 {
		return cohensDInf(m)
	}
	sd, _ := stats.StandardDeviationSample(d)
	if sd == 0 {
		return cohensDInf(m)
	}
	return m / sd
}

func cohensDInf(m float64) float64 {
	switch {
	case m > 0:
		return math.Inf(1)
	case m < 0:
		return math.Inf(-1)
	}
	return 0
}

// MaxExactWilcoxonN is the largest number of nonzero, untied differences for
// which WilcoxonSignedRank uses the exact null distribution (SciPy's limit).
const MaxExactWilcoxonN = 50

// WilcoxonSignedRank returns the one-sided p-value of the Wilcoxon
// signed-rank test of H1: the differences d are shifted above 0 (a > b),
// and names the method used.
//
// Zero differences are dropped (zero_method "wilcox", SciPy's default);
// the |d| left are ranked from 1 with average ranks for ties; the statistic
// is W+ = the sum of the ranks of the positive differences. With n nonzero
// differences:
//
//   - n = 0 (all differences zero, e.g. identical runs): p = 1, method
//     "none: all differences zero (p = 1)". SciPy 1.10.1 raises ValueError
//     here (and returns NaN for empty input); p = 1 = P(W+ ≥ 0): no
//     evidence at all for H1. Empty d gives the same.
//   - n ≤ 50 and no ties among |d|: exact, p = P(W+ ≥ w) with W+ the sum of
//     a uniformly random subset of {1, …, n} (the null distribution, counted
//     by dynamic programming over rank sums). This is SciPy's
//     method="exact" applied to the nonzero differences; it equals
//     scipy.stats.wilcoxon(d, alternative="greater") whenever d has no zero.
//     With zeros, SciPy 1.10.1's method="auto" switches to the normal
//     approximation instead; thv keeps the exact test on the n nonzero
//     differences (Wilcoxon's own treatment of zeros), and the method
//     string says how many zeros were dropped.
//   - otherwise (ties, or n > 50): the normal approximation exactly as
//     SciPy's method="approx" with its default correction=False:
//     z = (W+ − n(n+1)/4) / sqrt((n(n+1)(2n+1) − ½ Σ (t³ − t)) / 24), the sum
//     over tie groups of size t, no continuity correction, p = 1 − Φ(z).
//     (SciPy 1.10.1's method="auto" would read the exact table at
//     int(W+) for ties without zeros, which is not an exact p-value.)
//
// A NaN difference gives p = NaN (method "undefined: NaN difference").
func WilcoxonSignedRank(d []float64) (p float64, method string) {
	nz := make([]float64, 0, len(d))
	for _, x := range d {
		if math.IsNaN(x) {
			return math.NaN(), "undefined: NaN difference"
		}
		if x != 0 {
			nz = append(nz, x)
		}
	}
	zeros := len(d) - len(nz)
	n := len(nz)
	if n == 0 {
		return 1, "none: all differences zero (p = 1)"
	}
	ranks, ties := wilcoxonAbsRanks(nz)
	var wPlus float64
	for i, x := range nz {
		if x > 0 {
			wPlus += ranks[i]
		}
	}
	var notes []string
	if zeros > 0 {
		notes = append(notes, wilcoxonCount(zeros, "zero difference")+" dropped")
	}
	if len(ties) == 0 && n <= MaxExactWilcoxonN {
		// Without ties W+ is an integer sum of ranks.
		return wilcoxonExactSF(n, int(wPlus)), wilcoxonMethodName("exact", notes)
	}
	nn := float64(n)
	mean := nn * (nn + 1) / 4
	v := nn * (nn + 1) * (2*nn + 1)
	for _, t := range ties {
		tt := float64(t)
		v -= 0.5 * (tt*tt*tt - tt)
	}
	se := math.Sqrt(v / 24) // > 0 for n ≥ 1
	z := (wPlus - mean) / se
	if len(ties) > 0 {
		notes = append(notes, wilcoxonCount(len(ties), "tie group"))
	}
	if n > MaxExactWilcoxonN {
		notes = append(notes, fmt.Sprintf("n = %d > %d", n, MaxExactWilcoxonN))
	}
	return wilcoxonNormalSF(z), wilcoxonMethodName("normal approximation (tie-corrected, no continuity correction)", notes)
}

func wilcoxonCount(k int, noun string) string {
	if k == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", k, noun)
}

func wilcoxonMethodName(method string, notes []string) string {
	if len(notes) == 0 {
		return method
	}
	return method + "; " + strings.Join(notes, ", ")
}

// wilcoxonNormalSF is P(Z > z) for a standard normal Z, computed as SciPy's
// norm.sf (Cephes ndtr(−z)): through erf near 0, erfc in the tails, and 0
// beyond z ≈ 37.7 where Cephes' erfc underflows (Go's would be subnormal).
func wilcoxonNormalSF(z float64) float64 {
	const sqrtHalf = 1 / math.Sqrt2
	x := -z * sqrtHalf
	if math.Abs(x) < sqrtHalf {
		return 0.5 + 0.5*math.Erf(x)
	}
	y := 0.0 // Cephes erfc underflows to 0 once x² > MAXLOG = log(max float64)
	if ax := math.Abs(x); ax*ax <= 7.09782712893383996843e2 {
		y = 0.5 * math.Erfc(ax)
	}
	if x > 0 {
		return 1 - y
	}
	return y
}

// wilcoxonAbsRanks ranks |x| from 1 with average ranks for ties, and returns the
// sizes (> 1) of the tie groups, in increasing order of |x|.
func wilcoxonAbsRanks(x []float64) ([]float64, []int) {
	idx := make([]int, len(x))
	for i := range idx {
		idx[i] = i
	}
	// Insertion sort by |x|, then index: deterministic and n is small.
	for i := 1; i < len(idx); i++ {
		for j := i; j > 0 && math.Abs(x[idx[j]]) < math.Abs(x[idx[j-1]]); j-- {
			idx[j], idx[j-1] = idx[j-1], idx[j]
		}
	}
	ranks := make([]float64, len(x))
	var groups []int
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && math.Abs(x[idx[j+1]]) == math.Abs(x[idx[i]]) {
			j++
		}
		r := float64(i+j)/2 + 1 // average of ranks i+1 … j+1
		for k := i; k <= j; k++ {
			ranks[idx[k]] = r
		}
		if j > i {
			groups = append(groups, j-i+1)
		}
		i = j + 1
	}
	return ranks, groups
}

// wilcoxonExactCounts returns c[s] = the number of subsets of {1, …, n}
// whose sum is s, s = 0 … n(n+1)/2: the null distribution of W+ times 2^n.
// Exact in uint64 for n ≤ 63 (every count is below 2^n).
func wilcoxonExactCounts(n int) []uint64 {
	top := n * (n + 1) / 2
	c := make([]uint64, top+1)
	c[0] = 1
	for r := 1; r <= n; r++ {
		for s := r * (r + 1) / 2; s >= r; s-- {
			c[s] += c[s-r]
		}
	}
	return c
}

// wilcoxonExactSF returns P(W+ ≥ w) under the null for n ≤ 50 untied
// nonzero differences. The tail count is an exact integer below 2^50 and the
// division by 2^n is exact, so the p-value is the exact dyadic rational.
func wilcoxonExactSF(n, w int) float64 {
	c := wilcoxonExactCounts(n)
	var tail uint64
	for s := max(0, w); s < len(c); s++ {
		tail += c[s]
	}
	return math.Ldexp(float64(tail), -n)
}

// bootstrapStream is the PCG stream constant of BootstrapMeanCI; the state
// depends on the seed argument only.
const bootstrapStream = 0x9e3779b97f4a7c15

// BootstrapMeanCI returns the percentile bootstrap CI of the mean of d at the
// given level: `resamples` resamples of len(d) values drawn with replacement,
// the mean of each, and the (1−level)/2 and (1+level)/2 quantiles of those
// means. Quantiles are Hyndman–Fan type 7 (linear interpolation between
// order statistics at position q·(B−1), NumPy's default "linear"), computed
// by montanaflynn/stats.Percentile.
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
	q := (1 - level) / 2
	lo, _ = stats.Percentile(means, 100*q)
	hi, _ = stats.Percentile(means, 100*(1-q))
	return lo, hi
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
