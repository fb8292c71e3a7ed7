package compare

import (
	"math"
	"slices"

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
		r.Low, r.High = Band(ours.Outcomes, tol.Percentile)
	} else {
		r.Agrees = r.WithinCI || r.WithinRel
		r.Low, r.High = ours.Mean-ours.CI, ours.Mean+ours.CI
	}
	return r
}

// Band is the interval of the values whose percentile rank among values
// (PercentileRank) lies in band: where a published value agrees under
// tolerance (b). Its ends are outcomes (the rank is constant between two
// of them, so an end that falls between two is shown at the nearer
// outcome on its side); NaN for no values or an empty band. With 20
// outcomes and [2.5, 97.5] it is their range.
func Band(values []float64, band [2]float64) (low, high float64) {
	low, high = math.NaN(), math.NaN()
	if len(values) == 0 {
		return low, high
	}
	s := slices.Clone(values)
	slices.Sort(s)
	in := func(x float64) bool { p := PercentileRank(s, x); return p >= band[0] && p <= band[1] }
	for i, x := range s {
		// Just below x (between the previous outcome and x), then at x.
		if i > 0 && s[i-1] < x && in(between(s[i-1], x)) || i == 0 && in(math.Inf(-1)) {
			if math.IsNaN(low) {
				low = x
				if i > 0 {
					low = s[i-1]
				}
			}
			high = x
		}
		if in(x) {
			if math.IsNaN(low) {
				low = x
			}
			high = x
		}
	}
	if last := s[len(s)-1]; in(math.Inf(1)) {
		if math.IsNaN(low) {
			low = last
		}
		high = last
	}
	return low, high
}

// between is a value strictly between a < b (their midpoint, or b's
// neighbour towards a when the midpoint rounds to an end).
func between(a, b float64) float64 {
	m := a + float64((b-a)/2)
	if m <= a || m >= b {
		return math.Nextafter(b, a)
	}
	return m
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
