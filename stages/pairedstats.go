package stages

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"

	"github.com/montanaflynn/stats"
	"gonum.org/v1/gonum/stat/distuv"
)

// PairedComparison compares a proposed method a with a baseline b over the
// same seeds (a[i], b[i]: HV_last100 of seed i).
type PairedComparison struct {
	N              int
	Delta          float64 // mean(a − b)
	CILow, CIHigh  float64 // percentile bootstrap CI of the mean difference
	CohensD        float64 // mean(d)/sd(d), sample sd; ±Inf if sd = 0 and mean ≠ 0, 0 if both are 0
	WilcoxonP      float64 // one-sided Wilcoxon signed-rank p, H1: a > b
	WilcoxonMethod string  // how p was computed
	Wins           int     // seeds where a > b
}

// ComparePaired computes every statistic of the paper's statistical-tests
// table. resamples and seed drive the bootstrap; level is the CI level.
func ComparePaired(a, b []float64, resamples int, seed uint64, level float64) (PairedComparison, error) {
	if len(a) != len(b) {
		return PairedComparison{}, fmt.Errorf("paired comparison: %d values against %d", len(a), len(b))
	}
	if len(a) == 0 {
		return PairedComparison{}, errors.New("paired comparison: no pairs")
	}
	d := make([]float64, len(a))
	c := PairedComparison{N: len(a)}
	for i := range a {
		d[i] = a[i] - b[i]
		if d[i] > 0 {
			c.Wins++
		}
	}
	c.Delta, _ = stats.Mean(d)
	c.CILow, c.CIHigh = BootstrapMeanCI(d, resamples, seed, level)
	c.CohensD = cohensD(d)
	c.WilcoxonP, c.WilcoxonMethod = WilcoxonSignedRank(d)
	return c, nil
}

func cohensD(d []float64) float64 {
	m, _ := stats.Mean(d)
	if len(d) < 2 {
		return signInf(m)
	}
	sd, _ := stats.StandardDeviationSample(d)
	if sd == 0 {
		return signInf(m)
	}
	return m / sd
}

func signInf(m float64) float64 {
	switch {
	case m > 0:
		return math.Inf(1)
	case m < 0:
		return math.Inf(-1)
	}
	return 0
}

// WilcoxonSignedRank returns the one-sided p-value of the Wilcoxon
// signed-rank test of H1: the differences are shifted above 0, and the
// method used. Zero differences are dropped (scipy's zero_method "wilcox");
// |d| are ranked with average ranks for ties. Without ties and zeros and
// with n ≤ 50 the p-value is exact, P(W+ ≥ w) under the null distribution
// computed by counting sign assignments; otherwise it is the normal
// approximation with tie and continuity corrections (scipy's method
// "approx"). If every difference is zero, p = 1.
func WilcoxonSignedRank(d []float64) (p float64, method string) {
	var nz []float64
	zeros := 0
	for _, x := range d {
		if x == 0 {
			zeros++
		} else {
			nz = append(nz, x)
		}
	}
	n := len(nz)
	if n == 0 {
		return 1, "all differences zero (p = 1)"
	}
	ranks, tieGroups := averageRanks(nz)
	var wPlus float64
	for i, x := range nz {
		if x > 0 {
			wPlus += ranks[i]
		}
	}
	if len(tieGroups) == 0 && zeros == 0 && n <= 50 {
		return exactUpperTail(n, int(math.Round(wPlus))), "exact"
	}
	nn := float64(n)
	mean := nn * (nn + 1) / 4
	v := nn * (nn + 1) * (2*nn + 1)
	for _, t := range tieGroups {
		tt := float64(t)
		v -= 0.5 * tt * (tt*tt - 1)
	}
	se := math.Sqrt(v / 24)
	method = "normal approximation"
	if len(tieGroups) > 0 || zeros > 0 {
		method = fmt.Sprintf("normal approximation (%d zero differences dropped, %d tie groups)", zeros, len(tieGroups))
	}
	if se == 0 {
		return 0.5, method
	}
	z := (wPlus - mean - 0.5) / se
	return distuv.UnitNormal.Survival(z), method
}

// averageRanks ranks |x| from 1, averaging ties, and returns the sizes of
// the tie groups (> 1).
func averageRanks(x []float64) ([]float64, []int) {
	idx := make([]int, len(x))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return math.Abs(x[idx[a]]) < math.Abs(x[idx[b]]) })
	ranks := make([]float64, len(x))
	var groups []int
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && math.Abs(x[idx[j+1]]) == math.Abs(x[idx[i]]) {
			j++
		}
		r := float64(i+j)/2 + 1
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

// exactUpperTail returns P(W+ ≥ w) for n untied nonzero differences under
// the null: W+ is the sum of a uniformly random subset of {1, …, n}.
func exactUpperTail(n, w int) float64 {
	top := n * (n + 1) / 2
	count := make([]float64, top+1) // number of subsets with each sum
	count[0] = 1
	for r := 1; r <= n; r++ {
		for s := top; s >= r; s-- {
			count[s] += count[s-r]
		}
	}
	var tail float64
	for s := max(0, w); s <= top; s++ {
		tail += count[s]
	}
	return min(1, tail/math.Pow(2, float64(n)))
}

// BootstrapMeanCI returns the percentile bootstrap CI of the mean of d:
// resamples means of n values drawn with replacement (a PCG stream seeded
// by seed only), and their (1−level)/2 and (1+level)/2 quantiles with
// linear interpolation between order statistics (numpy's default).
func BootstrapMeanCI(d []float64, resamples int, seed uint64, level float64) (lo, hi float64) {
	n := len(d)
	if n == 0 {
		return math.NaN(), math.NaN()
	}
	if n == 1 || resamples < 1 {
		return d[0], d[0]
	}
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	means := make([]float64, resamples)
	for b := range means {
		var s float64
		for i := 0; i < n; i++ {
			s += d[rng.IntN(n)]
		}
		means[b] = s / float64(n)
	}
	sort.Float64s(means)
	return quantile(means, (1-level)/2), quantile(means, (1+level)/2)
}

// quantile of sorted xs with linear interpolation: position q·(n−1).
func quantile(xs []float64, q float64) float64 {
	pos := q * float64(len(xs)-1)
	i := int(math.Floor(pos))
	if i >= len(xs)-1 {
		return xs[len(xs)-1]
	}
	f := pos - float64(i)
	return xs[i] + f*(xs[i+1]-xs[i])
}
