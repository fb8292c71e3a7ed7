package formats

import "thv/artifacts/table"

// CurvePoint is one drawn point of a trajectory figure, a row of a figures
// task's "<setting>.curves.parquet" output: the data the figure draws,
// exactly. Rows come panel by panel (geometry) in the figure's order, then
// algorithm by algorithm in the panel's order (the proposed method first),
// then by increasing round. Columns: geometry, algo, round, mean, ci_low,
// ci_high.
type CurvePoint struct {
	Geometry, Algo string
	Round          int     // from 1; only the drawn rounds
	Mean           float64 // the line: moving average of the per-round mean HV(S_t) over seeds
	CILow, CIHigh  float64 // the band: moving averages of the per-round CI bounds of that mean
}

// EncodeCurves writes a curves table.
func EncodeCurves(rows []CurvePoint) ([]byte, error) {
	n := len(rows)
	geo := make([]string, n)
	algo := make([]string, n)
	round := make([]int64, n)
	mean := make([]float64, n)
	lo := make([]float64, n)
	hi := make([]float64, n)
	for i, r := range rows {
		geo[i], algo[i], round[i], mean[i], lo[i], hi[i] = r.Geometry, r.Algo, int64(r.Round), r.Mean, r.CILow, r.CIHigh
	}
	return encode("curves",
		table.StringColumn("geometry", geo), table.StringColumn("algo", algo), table.Int64Column("round", round),
		table.Float64Column("mean", mean), table.Float64Column("ci_low", lo), table.Float64Column("ci_high", hi))
}

// DecodeCurves reads a curves table.
func DecodeCurves(b []byte) ([]CurvePoint, error) {
	c := read("curves", b)
	geo, algo, round := c.strings("geometry"), c.strings("algo"), c.int64s("round")
	mean, lo, hi := c.float64s("mean"), c.float64s("ci_low"), c.float64s("ci_high")
	if err := c.check(); err != nil {
		return nil, err
	}
	rows := make([]CurvePoint, len(geo))
	for i := range rows {
		rows[i] = CurvePoint{Geometry: geo[i], Algo: algo[i], Round: int(round[i]), Mean: mean[i], CILow: lo[i], CIHigh: hi[i]}
	}
	return rows, nil
}
