package export

import (
	"math/rand/v2"
	"slices"
	"testing"
	"thv/algos"
	"thv/stages/formats"
)

// TestRegretCurveEndsAtFinalRegret: the cumulative regret the page draws
// ends, bit for bit, at the regret algos.SummarizeWith computes, for each
// of the three regrets, on random trajectories.
func TestRegretCurveEndsAtFinalRegret(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 50 {
		hv := make([]float64, 1+rng.IntN(3000))
		for j := range hv {
			hv[j] = rng.Float64() * 0.9
		}
		vStar, greedy := 0.7+rng.Float64()*0.2, 0.6+rng.Float64()*0.1
		d := 2 + i%3
		s := algos.SummarizeWith(hv, d, vStar, greedy, 100, algos.RegretReading{GreedyBenchmark: i%2 == 0})
		sum := summaryOf(s)
		target := regretTarget(sum, d, i%2 == 0)
		for kind, want := range map[string]float64{"regret_alpha_pos": s.RegretPos, "regret_alpha": s.RegretAlpha, "regret_exact": s.RegretExact} {
			curve := CumulativeRegret(hv, kind, target, vStar)
			if got := curve[len(curve)-1]; got != want {
				t.Fatalf("run %d, %s: the curve ends at %v, the summary says %v", i, kind, got, want)
			}
		}
		if slices.IsSorted(CumulativeRegret(hv, "regret_alpha_pos", target, vStar)) == false {
			t.Fatalf("run %d: the positive part's cumulative sum decreases", i)
		}
	}
}

// summaryOf is a run's summary as the run stage stores it.
func summaryOf(s algos.Summary) formats.Summary {
	return formats.Summary{HVLast: s.HVLast, VStar: s.VStar, HVGreedy: s.HVGreedy, VAlpha: s.VAlpha, RegretAlpha: s.RegretAlpha, RegretPos: s.RegretPos, RegretExact: s.RegretExact}
}
