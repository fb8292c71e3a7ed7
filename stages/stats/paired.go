package stats

import (
	"errors"
	"fmt"
	"math"

	mstats "github.com/montanaflynn/stats"
)

// PairedComparison compares a proposed method a with a baseline b over the
// same seeds (a[i], b[i]: HV_last of seed i).
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
	c.Delta, _ = mstats.Mean(d)
	c.CILow, c.CIHigh = BootstrapMeanCI(d, resamples, seed, level)
	c.CohensD = PairedCohensD(d)
	c.WilcoxonP, c.WilcoxonMethod = WilcoxonSignedRank(d)
	return c, nil
}
