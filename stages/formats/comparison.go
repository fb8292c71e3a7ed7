package formats

import "thv/artifacts/table"

// Comparison is one row of a compare task's "comparison" output: one
// published value against ours (stages/compare). Columns: setting,
// geometry, algorithm, metric, published, published_ci, missing, ours,
// ours_ci, seeds, diff, rel_diff, within_ci, within_rel, percentile,
// in_band, agrees (flags as 0/1), low, high, not_comparable.
type Comparison struct {
	Setting, Geometry, Algorithm, Metric string
	Published, PublishedCI               float64
	Missing                              bool // no result of ours for this cell
	Ours, OursCI                         float64
	Seeds                                int
	Diff                                 float64 // ours − published
	RelDiff                              float64 // Diff / |published|
	// (a): within the union of both 95% CIs; within the relative tolerance.
	WithinCI, WithinRel bool
	// (b): the percentile (0–100) of the published value among our
	// per-instance outcomes, and whether it lies in the central band.
	Percentile float64
	InBand     bool
	Agrees     bool // under the tolerance the reference applies
	// Low and High bound our interval the verdict uses: mean ± CI under
	// (a), the band of our per-instance outcomes whose percentile lies
	// in the tolerance's under (b). NaN when missing.
	Low, High float64
	// NotComparable says why the protocol cannot reproduce the published
	// value ("T 300 vs 2000"): it is then not judged (Agrees false,
	// Diff and Percentile NaN). "" for a value that is judged.
	NotComparable string
}

// ClaimCheck is one row of a compare task's "claims" output.
type ClaimCheck struct {
	ID, Kind, Text string
	Holds          bool
	Detail         string
	// NotComparable says why the claim is not judged (it ranges over
	// settings the protocol does not reproduce); Holds is then false.
	NotComparable string
}

func flag(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// EncodeComparisons writes a comparison table.
func EncodeComparisons(rows []Comparison) ([]byte, error) {
	n := len(rows)
	set, geo, alg, met := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	pub, pubCI, ours, oursCI, diff, rel, pct := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	missing, seeds, wci, wrel, band, agrees := make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n)
	low, high, notComparable := make([]float64, n), make([]float64, n), make([]string, n)
	for i, r := range rows {
		low[i], high[i], notComparable[i] = r.Low, r.High, r.NotComparable
		set[i], geo[i], alg[i], met[i] = r.Setting, r.Geometry, r.Algorithm, r.Metric
		pub[i], pubCI[i], ours[i], oursCI[i], diff[i], rel[i], pct[i] = r.Published, r.PublishedCI, r.Ours, r.OursCI, r.Diff, r.RelDiff, r.Percentile
		missing[i], seeds[i], wci[i], wrel[i], band[i], agrees[i] = flag(r.Missing), int64(r.Seeds), flag(r.WithinCI), flag(r.WithinRel), flag(r.InBand), flag(r.Agrees)
	}
	return encode("comparison",
		table.StringColumn("setting", set), table.StringColumn("geometry", geo), table.StringColumn("algorithm", alg), table.StringColumn("metric", met),
		table.Float64Column("published", pub), table.Float64Column("published_ci", pubCI), table.Int64Column("missing", missing),
		table.Float64Column("ours", ours), table.Float64Column("ours_ci", oursCI), table.Int64Column("seeds", seeds),
		table.Float64Column("diff", diff), table.Float64Column("rel_diff", rel),
		table.Int64Column("within_ci", wci), table.Int64Column("within_rel", wrel),
		table.Float64Column("percentile", pct), table.Int64Column("in_band", band), table.Int64Column("agrees", agrees),
		table.Float64Column("low", low), table.Float64Column("high", high), table.StringColumn("not_comparable", notComparable))
}

// DecodeComparisons reads a comparison table.
func DecodeComparisons(b []byte) ([]Comparison, error) {
	c := read("comparison", b)
	set, geo, alg, met := c.strings("setting"), c.strings("geometry"), c.strings("algorithm"), c.strings("metric")
	pub, pubCI, missing := c.float64s("published"), c.float64s("published_ci"), c.int64s("missing")
	ours, oursCI, seeds := c.float64s("ours"), c.float64s("ours_ci"), c.int64s("seeds")
	diff, rel, wci, wrel := c.float64s("diff"), c.float64s("rel_diff"), c.int64s("within_ci"), c.int64s("within_rel")
	pct, band, agrees := c.float64s("percentile"), c.int64s("in_band"), c.int64s("agrees")
	low, high, notComparable := c.float64s("low"), c.float64s("high"), c.strings("not_comparable")
	if err := c.check(); err != nil {
		return nil, err
	}
	rows := make([]Comparison, len(set))
	for i := range rows {
		rows[i] = Comparison{Setting: set[i], Geometry: geo[i], Algorithm: alg[i], Metric: met[i],
			Published: pub[i], PublishedCI: pubCI[i], Missing: missing[i] != 0, Ours: ours[i], OursCI: oursCI[i], Seeds: int(seeds[i]),
			Diff: diff[i], RelDiff: rel[i], WithinCI: wci[i] != 0, WithinRel: wrel[i] != 0,
			Percentile: pct[i], InBand: band[i] != 0, Agrees: agrees[i] != 0,
			Low: low[i], High: high[i], NotComparable: notComparable[i]}
	}
	return rows, nil
}

// EncodeClaims writes a claims table: id, kind, text, holds (0/1),
// detail, not_comparable.
func EncodeClaims(rows []ClaimCheck) ([]byte, error) {
	n := len(rows)
	id, kind, text, detail, holds := make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]int64, n)
	notComparable := make([]string, n)
	for i, r := range rows {
		id[i], kind[i], text[i], detail[i], holds[i], notComparable[i] = r.ID, r.Kind, r.Text, r.Detail, flag(r.Holds), r.NotComparable
	}
	return encode("claims", table.StringColumn("id", id), table.StringColumn("kind", kind), table.StringColumn("text", text),
		table.Int64Column("holds", holds), table.StringColumn("detail", detail), table.StringColumn("not_comparable", notComparable))
}

// DecodeClaims reads a claims table.
func DecodeClaims(b []byte) ([]ClaimCheck, error) {
	c := read("claims", b)
	id, kind, text, holds, detail := c.strings("id"), c.strings("kind"), c.strings("text"), c.int64s("holds"), c.strings("detail")
	notComparable := c.strings("not_comparable")
	if err := c.check(); err != nil {
		return nil, err
	}
	rows := make([]ClaimCheck, len(id))
	for i := range rows {
		rows[i] = ClaimCheck{ID: id[i], Kind: kind[i], Text: text[i], Holds: holds[i] != 0, Detail: detail[i], NotComparable: notComparable[i]}
	}
	return rows, nil
}
