package formats

import "thv/artifacts/table"

// SelectionRow is one η of the selection table, a select task's output: one
// row per η of the grid in increasing order, with columns eta,
// mean_hv_last, runs and selected (0/1).
type SelectionRow struct {
	Eta        float64
	MeanHVLast float64 // mean HV_last over the grid seeds
	Runs       int     // how many runs the mean is over
	Selected   bool    // η* (one row)
}

// EncodeSelection writes a selection table.
func EncodeSelection(rows []SelectionRow) ([]byte, error) {
	n := len(rows)
	eta := make([]float64, n)
	mean := make([]float64, n)
	runs := make([]int64, n)
	selected := make([]int64, n)
	for i, r := range rows {
		eta[i], mean[i], runs[i] = r.Eta, r.MeanHVLast, int64(r.Runs)
		if r.Selected {
			selected[i] = 1
		}
	}
	return encode("selection",
		table.Float64Column("eta", eta), table.Float64Column("mean_hv_last", mean),
		table.Int64Column("runs", runs), table.Int64Column("selected", selected))
}

// DecodeSelection reads a selection table.
func DecodeSelection(b []byte) ([]SelectionRow, error) {
	c := read("selection", b)
	eta, mean, runs, selected := c.float64s("eta"), c.float64s("mean_hv_last"), c.int64s("runs"), c.int64s("selected")
	if err := c.check(); err != nil {
		return nil, err
	}
	rows := make([]SelectionRow, len(eta))
	for i := range rows {
		rows[i] = SelectionRow{Eta: eta[i], MeanHVLast: mean[i], Runs: int(runs[i]), Selected: selected[i] == 1}
	}
	return rows, nil
}
