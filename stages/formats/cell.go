package formats

import "thv/artifacts/table"

// Estimate is a mean over seeds with the half-width of its confidence
// interval.
type Estimate struct {
	Mean, HalfWidth float64
}

// Cell is one (geometry, algorithm) row of the cells table, a summarize
// task's cells output (summarize.Cells): the statistics over seeds of the algorithm's final
// runs at η*. Columns: geometry, algo, eta_star, seeds, v_star_mean,
// hv_greedy_mean, then <metric>_mean and <metric>_ci for the metrics
// hv_last, regret_alpha_pos, regret_alpha and regret_exact.
type Cell struct {
	Geometry, Algo string
	EtaStar        float64
	Seeds          int     // how many seeds the statistics are over
	VStar          float64 // mean V* over the seeds
	HVGreedy       float64 // mean HV(G*) over the seeds

	HVLast      Estimate
	RegretPos   Estimate // the α-regret's positive part, what the paper's tables print
	RegretAlpha Estimate
	RegretExact Estimate
}

// cellMetrics are the estimated metrics of a cell, in column order.
var cellMetrics = []metric[Cell, Estimate]{
	{"hv_last", func(c *Cell) *Estimate { return &c.HVLast }},
	{"regret_alpha_pos", func(c *Cell) *Estimate { return &c.RegretPos }},
	{"regret_alpha", func(c *Cell) *Estimate { return &c.RegretAlpha }},
	{"regret_exact", func(c *Cell) *Estimate { return &c.RegretExact }},
}

// EncodeCells writes a cells table.
func EncodeCells(cells []Cell) ([]byte, error) {
	n := len(cells)
	geo := make([]string, n)
	algo := make([]string, n)
	eta := make([]float64, n)
	seeds := make([]int64, n)
	vstar := make([]float64, n)
	hvg := make([]float64, n)
	for i, c := range cells {
		geo[i], algo[i], eta[i], seeds[i], vstar[i], hvg[i] = c.Geometry, c.Algo, c.EtaStar, int64(c.Seeds), c.VStar, c.HVGreedy
	}
	cols := []table.Column{
		table.StringColumn("geometry", geo), table.StringColumn("algo", algo), table.Float64Column("eta_star", eta),
		table.Int64Column("seeds", seeds), table.Float64Column("v_star_mean", vstar), table.Float64Column("hv_greedy_mean", hvg),
	}
	for _, metric := range cellMetrics {
		mean := make([]float64, n)
		half := make([]float64, n)
		for i := range cells {
			e := metric.field(&cells[i])
			mean[i], half[i] = e.Mean, e.HalfWidth
		}
		cols = append(cols, table.Float64Column(metric.name+"_mean", mean), table.Float64Column(metric.name+"_ci", half))
	}
	return encode("cell", cols...)
}

// DecodeCells reads a cells table.
func DecodeCells(b []byte) ([]Cell, error) {
	c := read("cell", b)
	geo, algo, eta, seeds := c.strings("geometry"), c.strings("algo"), c.float64s("eta_star"), c.int64s("seeds")
	vstar, hvg := c.float64s("v_star_mean"), c.float64s("hv_greedy_mean")
	means := make([][]float64, len(cellMetrics))
	halves := make([][]float64, len(cellMetrics))
	for m, metric := range cellMetrics {
		means[m], halves[m] = c.float64s(metric.name+"_mean"), c.float64s(metric.name+"_ci")
	}
	if err := c.check(); err != nil {
		return nil, err
	}
	cells := make([]Cell, len(geo))
	for i := range cells {
		cells[i] = Cell{Geometry: geo[i], Algo: algo[i], EtaStar: eta[i], Seeds: int(seeds[i]), VStar: vstar[i], HVGreedy: hvg[i]}
		for m, metric := range cellMetrics {
			*metric.field(&cells[i]) = Estimate{Mean: means[m][i], HalfWidth: halves[m][i]}
		}
	}
	return cells, nil
}

// CellOf returns the cell of (geometry, algo) in cells.
func CellOf(cells []Cell, geometry, algo string) (Cell, bool) {
	for _, c := range cells {
		if c.Geometry == geometry && c.Algo == algo {
			return c, true
		}
	}
	return Cell{}, false
}

// RegretMetrics are the names of our cumulative regrets, the first the one
// the paper's tables print (docs/fidelity.md).
var RegretMetrics = []string{"regret_alpha_pos", "regret_alpha", "regret_exact"}

// Metric returns the estimate of the named metric (a cells column name
// without _mean/_ci) and whether the cell has it.
func (c *Cell) Metric(name string) (Estimate, bool) { return metricOf(cellMetrics, c, name) }
