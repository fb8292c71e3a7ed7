package compare

import (
	"math"

	"thv/stages/formats"
)

// Ours is what our results say about one (setting, geometry, algorithm,
// metric): the mean and 95% CI half-width over the seeds, and the
// per-instance outcomes (one per seed when each seed draws its own
// instance; the cell means of many instances in AcrossInstances).
type Ours struct {
	Mean, CI float64
	Outcomes []float64
}

// Row is the comparison of one published value with ours.
type Row = formats.Comparison

// CompareValue judges ours against one published value under both kinds
// of tolerance; agrees reports kind (a) unless byPercentile.
func CompareValue(ours Ours, published, publishedCI float64, tol Tolerance, byPercentile bool) Row {
	r := Row{Published: published, PublishedCI: publishedCI, Ours: ours.Mean, OursCI: ours.CI, Seeds: len(ours.Outcomes)}
	r.Diff = ours.Mean - published
	if published != 0 {
		r.RelDiff = r.Diff / math.Abs(published)
	}
	// Two intervals [m ± h] meet iff their centres are at most the sum of
	// the half-widths apart.
	r.WithinCI = math.Abs(r.Diff) <= ours.CI+publishedCI
	// Explicit conversions round each product: no CPU may fuse it (the
	// verdict is hashed; docs/reproducibility.md).
	r.WithinRel = math.Abs(r.Diff) <= float64(tol.Relative*math.Abs(published))
	r.Percentile = PercentileRank(ours.Outcomes, published)
	r.InBand = r.Percentile >= tol.Percentile[0] && r.Percentile <= tol.Percentile[1]
	if byPercentile {
		r.Agrees = r.InBand
	} else {
		r.Agrees = r.WithinCI || r.WithinRel
	}
	return r
}

// PercentileRank is the percentile (0–100) of x among values: the share
// of values below x, ties counting half (the mid-rank definition, so a
// value equal to the median of an odd sample ranks 50). NaN for no values.
func PercentileRank(values []float64, x float64) float64 {
	if len(values) == 0 {
		return math.NaN()
	}
	below, equal := 0, 0
	for _, v := range values {
		switch {
		case v < x:
			below++
		case v == x:
			equal++
		}
	}
	return 100 * (float64(below) + float64(float64(equal)/2)) / float64(len(values))
}
