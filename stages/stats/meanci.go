package stats

import (
	"math"

	mstats "github.com/montanaflynn/stats"
)

// MeanCI is a mean with the half-width of its confidence interval.
type MeanCI struct {
	Mean, HalfWidth float64
	N               int
}

// MeanWithCI returns the mean of xs and the half-width of its two-sided
// Student-t confidence interval at the given level (0.95 for 95%): the paper
// averages 10 seeds, too few for a normal approximation. With fewer than two
// values the half-width is 0; an empty input gives NaN mean.
func MeanWithCI(xs []float64, level float64) MeanCI {
	return MeanWithCIAt(xs, TCritical(len(xs), level))
}

// MeanWithCIAt is MeanWithCI with the critical value given: tcrit must be
// TCritical(len(xs), level). It is for callers that compute many intervals
// of equally many values (one per round of a trajectory), since the
// critical value costs far more than the mean.
func MeanWithCIAt(xs []float64, tcrit float64) MeanCI {
	if len(xs) == 0 {
		return MeanCI{Mean: math.NaN()}
	}
	m, _ := mstats.Mean(xs)
	out := MeanCI{Mean: m, N: len(xs)}
	if len(xs) < 2 {
		return out
	}
	sd := sampleSD(xs)
	out.HalfWidth = tcrit * sd / math.Sqrt(float64(len(xs)))
	return out
}

// TCritical is the two-sided Student-t critical value of a CI at level for
// the mean of n ≥ 2 values (n − 1 degrees of freedom); 0 for n < 2.
func TCritical(n int, level float64) float64 {
	if n < 2 {
		return 0
	}
	return tQuantileTwoSided(n-1, level)
}
