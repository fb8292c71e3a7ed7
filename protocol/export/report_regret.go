package export

import (
	"fmt"

	"thv/algos"
	"thv/pipeline"
	"thv/protocol"
	"thv/protocol/export/report"
	collectstage "thv/stages/collect"
	"thv/stages/figures"
	"thv/stages/formats"
)

// The page's cumulative-regret figure: for each algorithm a trajectory
// figure draws, the regret its tables' Final Regret sums, round by round,
// averaged over the seeds. It is computed at export from the figure's
// inputs (the runs' trajectories) and the collect tasks' per-seed
// summaries (the benchmark each run's regret is against), summing in the
// order algos.SummarizeWith does, so that the last point of a seed's
// curve is its Final Regret bit for bit (TestRegretCurveEndsAtFinalRegret).

// regretPoints is about how many rounds a curve is drawn at.
const regretPoints = 150

// regretFigure gathers the cumulative regret of figures task r's
// algorithms.
func (p *Project) regretFigure(r *pipeline.Result, fp figures.Params, byID map[string]*pipeline.Result) (report.RegretFigure, error) {
	f := report.RegretFigure{Setting: fp.Setting}
	kind := p.Config.Metrics.FinalRegret
	f.Regret = regretWords(kind)
	if p.Config.Metrics.RegretRounds == algos.RegretAfterInit {
		f.Note = "Summed over every round: this protocol's reading of the regret (metrics.regret_rounds: after_init) leaves the initialisation's rounds out of the Final Regret column, so the curves end above it."
	}
	greedy := p.Config.Metrics.BenchmarkD3 == algos.BenchmarkGreedy
	for _, pn := range fp.Panels {
		panel := report.RegretPanel{Geometry: pn.Geometry}
		for _, a := range pn.Algorithms {
			collect, ok := byID[protocol.CollectID(fp.Setting.Name, pn.Geometry, a)]
			if !ok {
				return f, fmt.Errorf("%s is not up to date", protocol.CollectID(fp.Setting.Name, pn.Geometry, a))
			}
			finals, err := protocol.ResultDecoded(p.Project, collect, collectstage.Final, formats.DecodeSummaries)
			if err != nil {
				return f, err
			}
			bench := map[uint64]formats.Summary{}
			for _, s := range finals {
				bench[s.Seed] = s
			}
			var sum []float64
			for _, seed := range fp.Seeds {
				hv, err := input(p, r, byID, figures.TrajectoryInputName(pn.Geometry, a, seed), formats.DecodeTrajectory)
				if err != nil {
					return f, err
				}
				s, ok := bench[seed]
				if !ok {
					return f, fmt.Errorf("%s has no summary of seed %d", collect.Task.ID, seed)
				}
				curve := CumulativeRegret(hv, kind, regretTarget(s, fp.Setting.D, greedy), s.VStar)
				if sum == nil {
					sum = make([]float64, len(curve))
				}
				if len(curve) != len(sum) {
					return f, fmt.Errorf("%s seed %d: %d rounds, other seeds %d", a, seed, len(curve), len(sum))
				}
				for t, v := range curve {
					sum[t] += v
				}
			}
			if len(sum) == 0 {
				continue
			}
			line := report.RegretLine{Algo: a}
			step := max(1, len(sum)/regretPoints)
			for t := step; ; t += step {
				if t > len(sum) {
					t = len(sum)
				}
				line.Rounds = append(line.Rounds, t)
				line.Mean = append(line.Mean, sum[t-1]/float64(len(fp.Seeds)))
				if t == len(sum) {
					break
				}
			}
			panel.Lines = append(panel.Lines, line)
		}
		f.Panels = append(f.Panels, panel)
	}
	return f, nil
}

// regretWords names the regret summed, as the Final Regret reading says.
func regretWords(kind string) string {
	switch kind {
	case "regret_alpha":
		return "cumulative α-regret, Σ (αV − HV(S_t)), signed"
	case "regret_exact":
		return "cumulative regret against V*, Σ (V* − HV(S_t))"
	}
	return "cumulative α-regret while below αV, Σ max(0, αV − HV(S_t)) (the tables' Final Regret)"
}

// regretTarget is the level s's α-regret is counted against, as
// algos.SummarizeWith takes it: α·V (V* for d = 2, HV(G*) above), or
// HV(G*) itself under the hv_greedy reading for d ≥ 3.
func regretTarget(s formats.Summary, d int, greedy bool) float64 {
	if greedy && d > 2 {
		return s.VAlpha
	}
	return float64(algos.Alpha * s.VAlpha) // rounded, as SummarizeWith's
}

// CumulativeRegret is the regret of kind (formats.RegretMetrics) summed
// over rounds 1..t for every t: its last value is the run's summary of
// that metric, over all rounds, bit for bit (the same additions in the
// same order as algos.SummarizeWith).
func CumulativeRegret(hv []float64, kind string, target, vStar float64) []float64 {
	out := make([]float64, len(hv))
	var s float64
	for t, h := range hv {
		switch kind {
		case "regret_alpha":
			s += target - h
		case "regret_exact":
			s += vStar - h
		default:
			s += max(0, target-h)
		}
		out[t] = s
	}
	return out
}
