package stages

import (
	"math"

	"github.com/montanaflynn/stats"
	"gonum.org/v1/gonum/stat/distuv"
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
	if len(xs) == 0 {
		return MeanCI{Mean: math.NaN()}
	}
	m, _ := stats.Mean(xs)
	out := MeanCI{Mean: m, N: len(xs)}
	if len(xs) < 2 {
		return out
	}
	sd, _ := stats.StandardDeviationSample(xs)
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(len(xs) - 1)}.Quantile(1 - (1-level)/2)
	out.HalfWidth = t * sd / math.Sqrt(float64(len(xs)))
	return out
}
