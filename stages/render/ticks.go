package render

import (
	"math"
	"strconv"

	"gonum.org/v1/plot"

	"thv/envs/fmath"
)

// niceTicks places about target major ticks at multiples of 1, 2, 2.5 or 5
// × 10^k (labelled with just the decimals the step needs) and one unlabelled
// minor tick between consecutive major ones.
type niceTicks struct{ target int }

func (nt niceTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		return nil
	}
	// The step among {1, 2, 2.5, 5} × 10^k whose tick count is closest to
	// the target (ties: the larger step).
	mag := fmath.Pow(10, math.Floor(fmath.Log10((hi-lo)/float64(nt.target))))
	var step float64
	var decimals int
	bestDiff := math.Inf(1)
	for _, e := range []float64{0.1, 1, 10} {
		for _, m := range []float64{1, 2, 2.5, 5} {
			s := m * mag * e
			n := math.Floor(hi/s+1e-9) - math.Ceil(lo/s-1e-9) + 1
			if d := math.Abs(n - float64(nt.target)); d <= bestDiff {
				step, bestDiff = s, d
				decimals = -int(math.Floor(float64(fmath.Log10(mag*e)) + 1e-9))
				if m == 2.5 {
					decimals++
				}
			}
		}
	}
	decimals = max(decimals, 0)
	var ticks []plot.Tick
	first := math.Ceil(lo/step-1e-9) - 1 // one before, for the minor tick
	for i := first; float64(i*step) <= hi+float64(step*1e-9); i++ {
		v := float64(i * step) // rounded: it feeds v + step/2
		if v >= lo-float64(step*1e-9) {
			label := strconv.FormatFloat(v, 'f', decimals, 64)
			if v == 0 || label == "-"+strconv.FormatFloat(0, 'f', decimals, 64) {
				label = strconv.FormatFloat(0, 'f', decimals, 64)
			}
			ticks = append(ticks, plot.Tick{Value: v, Label: label})
		}
		if m := v + float64(step/2); m >= lo && m <= hi {
			ticks = append(ticks, plot.Tick{Value: m})
		}
	}
	return ticks
}
