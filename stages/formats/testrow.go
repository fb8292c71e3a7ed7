package formats

import "thv/artifacts/table"

// TestRow is one geometry's row of the tests table, a summarize task's
// tests output (summarize.Tests): the proposed method against the best baseline, paired by
// seed (the fields of stats.PairedComparison). Columns: geometry, baseline,
// delta, ci_low, ci_high, cohens_d, wilcoxon_p, wilcoxon_method, wins, n.
type TestRow struct {
	Geometry, Baseline string
	Delta              float64 // mean difference of HV_last, proposed − baseline
	CILow, CIHigh      float64 // bootstrap CI of Delta
	CohensD            float64
	WilcoxonP          float64 // one-sided
	WilcoxonMethod     string
	Wins, N            int // seeds the proposed method wins, of N
}

// EncodeTests writes a tests table.
func EncodeTests(rows []TestRow) ([]byte, error) {
	n := len(rows)
	geo, base, method := make([]string, n), make([]string, n), make([]string, n)
	delta, lo, hi, d, p := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	wins, count := make([]int64, n), make([]int64, n)
	for i, r := range rows {
		geo[i], base[i], method[i] = r.Geometry, r.Baseline, r.WilcoxonMethod
		delta[i], lo[i], hi[i], d[i], p[i] = r.Delta, r.CILow, r.CIHigh, r.CohensD, r.WilcoxonP
		wins[i], count[i] = int64(r.Wins), int64(r.N)
	}
	return encode("test row",
		table.StringColumn("geometry", geo), table.StringColumn("baseline", base),
		table.Float64Column("delta", delta), table.Float64Column("ci_low", lo), table.Float64Column("ci_high", hi),
		table.Float64Column("cohens_d", d), table.Float64Column("wilcoxon_p", p), table.StringColumn("wilcoxon_method", method),
		table.Int64Column("wins", wins), table.Int64Column("n", count))
}

// DecodeTests reads a tests table.
func DecodeTests(b []byte) ([]TestRow, error) {
	c := read("test row", b)
	geo, base := c.strings("geometry"), c.strings("baseline")
	delta, lo, hi := c.float64s("delta"), c.float64s("ci_low"), c.float64s("ci_high")
	d, p, method := c.float64s("cohens_d"), c.float64s("wilcoxon_p"), c.strings("wilcoxon_method")
	wins, n := c.int64s("wins"), c.int64s("n")
	if err := c.check(); err != nil {
		return nil, err
	}
	rows := make([]TestRow, len(geo))
	for i := range rows {
		rows[i] = TestRow{
			Geometry: geo[i], Baseline: base[i], Delta: delta[i], CILow: lo[i], CIHigh: hi[i],
			CohensD: d[i], WilcoxonP: p[i], WilcoxonMethod: method[i], Wins: int(wins[i]), N: int(n[i]),
		}
	}
	return rows, nil
}
