package stats

import (
	"fmt"
	"math"
	"strings"

	"thv/envs/fmath"
)

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
	mean := float64(nn * (nn + 1) / 4)
	v := float64(nn * (nn + 1) * (2*nn + 1))
	for _, t := range ties {
		tt := float64(t)
		v -= float64(0.5 * (float64(tt*tt*tt) - tt))
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
		return 0.5 + float64(0.5*fmath.Erf(x))
	}
	y := 0.0 // Cephes erfc underflows to 0 once x² > MAXLOG = log(max float64)
	if ax := math.Abs(x); ax*ax <= 7.09782712893383996843e2 {
		y = 0.5 * fmath.Erfc(ax)
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
		r := float64(float64(i+j)/2) + 1 // average of ranks i+1 … j+1
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
