package render

import (
	"thv/stages/stats"
)

// MeanCIBand returns, per round t, the mean of hv[s][t] over the seeds s and
// the bounds of its two-sided Student-t confidence interval at the given
// level: stats.MeanWithCI of the round's values. With a single seed the band
// collapses to the mean. It returns nil slices when hv is empty, ragged, has
// no rounds, or level is not in (0, 1).
func MeanCIBand(hv [][]float64, level float64) (mean, lo, hi []float64) {
	if len(hv) == 0 || len(hv[0]) == 0 || !(level > 0 && level < 1) {
		return nil, nil, nil
	}
	n, T := len(hv), len(hv[0])
	for _, s := range hv {
		if len(s) != T {
			return nil, nil, nil
		}
	}
	mean, lo, hi = make([]float64, T), make([]float64, T), make([]float64, T)
	tcrit := stats.TCritical(n, level)
	round := make([]float64, n)
	for t := range T {
		for s := range hv {
			round[s] = hv[s][t]
		}
		ci := stats.MeanWithCIAt(round, tcrit)
		mean[t], lo[t], hi[t] = ci.Mean, ci.Mean-ci.HalfWidth, ci.Mean+ci.HalfWidth
	}
	return mean, lo, hi
}
