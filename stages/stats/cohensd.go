package stats

import (
	"math"

	mstats "github.com/montanaflynn/stats"
)

// PairedCohensD returns mean(d) / sd(d) with the sample standard deviation
// (n − 1 denominator), as NumPy's mean(d) / std(d, ddof=1). Where that is
// not finite it is defined as follows (NumPy gives ±inf or nan there): when
// sd = 0 (all differences equal) or n = 1 (sd undefined), +Inf if the mean
// is positive, −Inf if negative, 0 if the mean is 0 (e.g. identical runs).
// NaN only for empty input.
func PairedCohensD(d []float64) float64 {
	m, err := mstats.Mean(d)
	if err != nil {
		return math.NaN()
	}
	if len(d) < 2 {
		return cohensDInf(m)
	}
	sd := sampleSD(d)
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
