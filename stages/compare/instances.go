package compare

import "thv/stages/formats"

// AcrossInstances judges every value of the reference against our results
// on many fixed instances (instances.mode = fixed, one protocol run per
// instance seed; perInstance holds each run's results). If the paper drew
// one random instance per (setting, geometry) and averaged its seeds on
// it, the right population for tolerance (b) is the cell mean of each
// instance, not the seeds of one: a published value agrees if it lies in
// the band of the per-instance cell means. Ours is the mean of those
// means; our CI is the median over instances of the cell's CI half-width
// (what one instance's seeds give, as the paper's CI is), which tolerance
// (a) uses.
func AcrossInstances(ref *Reference, proto Protocol, perInstance []Results, regret string) []formats.Comparison {
	return judge(ref, proto, regret, func(c RefRow, metric string) (Ours, bool) {
		var means, halves []float64
		for _, res := range perInstance {
			est, ok := cellEstimate(res, c, metric)
			if !ok {
				return Ours{}, false // missing on one instance: missing
			}
			means = append(means, est.Mean)
			halves = append(halves, est.HalfWidth)
		}
		if len(means) == 0 {
			return Ours{}, false
		}
		sum := 0.0
		for _, x := range means {
			sum += x
		}
		return Ours{Mean: sum / float64(len(means)), CI: median(halves), Outcomes: means}, true
	})
}

// cellEstimate is our estimate of one of our metrics for a reference cell.
func cellEstimate(res Results, c RefRow, metric string) (formats.Estimate, bool) {
	for i := range res[c.Setting] {
		if x := &res[c.Setting][i]; x.Geometry == c.Geometry && x.Algo == c.Algorithm {
			return x.Metric(metric)
		}
	}
	return formats.Estimate{}, false
}
