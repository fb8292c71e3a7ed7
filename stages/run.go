package stages

import (
	"thv/algos"
	"thv/artifacts"
)

// RunParams fully determine one bandit run (with its two inputs).
type RunParams struct {
	Algo      string             `json:"algo"`
	Eta       float64            `json:"eta"`
	Params    map[string]float64 `json:"params"`
	K         int                `json:"k"`
	T         int                `json:"T"`
	Sigma     float64            `json:"sigma"`
	Seed      uint64             `json:"seed"`
	MinPulls  int                `json:"min_pulls"`
	Reference float64            `json:"reference"`
	Window    int                `json:"hv_window"`
}

func init() {
	register(Kind{Name: "run", Sources: []string{"hv", "envs", "algos", "stages/run.go"}, Run: runRun})
}

// RunSources is the code a run of algo executes beyond the run kind's own:
// its family package. Editing one family reruns only its runs.
func RunSources(algo string) ([]string, error) {
	spec, err := algos.Lookup(algo)
	if err != nil {
		return nil, err
	}
	return []string{"algos/" + spec.Family}, nil
}

// SummaryColumns are the per-run metrics, in table order.
var SummaryColumns = []string{"hv_last", "v_star", "hv_greedy", "v_alpha", "regret_alpha", "regret_alpha_pos", "regret_exact"}

// runRun simulates one run on the input instance against the input
// benchmark: outputs "summary" (one row: algo, eta, seed, window and
// SummaryColumns) and "trajectory" (round, hv: HV(S_t) on the true means).
func runRun(params []byte, in Inputs) (Outputs, error) {
	p, err := decode[RunParams](params)
	if err != nil {
		return nil, err
	}
	inst, err := decodeInstance(in["instance"])
	if err != nil {
		return nil, err
	}
	bench, err := decodeBenchmark(in["benchmark"])
	if err != nil {
		return nil, err
	}
	tr, s, err := algos.Run(algos.RunSpec{
		Algo: p.Algo, Eta: p.Eta, Params: p.Params, Instance: inst,
		K: p.K, T: p.T, Sigma: p.Sigma, Seed: p.Seed, MinPulls: p.MinPulls,
		Ref: refPoint(p.Reference, inst.D()), Window: p.Window,
	}, bench)
	if err != nil {
		return nil, err
	}
	rounds := make([]int64, len(tr.HV))
	for t := range rounds {
		rounds[t] = int64(t + 1)
	}
	traj, err := artifacts.EncodeParquet(artifacts.Table{Columns: []artifacts.Column{
		{Name: "round", Int64: rounds}, {Name: "hv", Float64: tr.HV},
	}})
	if err != nil {
		return nil, err
	}
	sum, err := artifacts.EncodeParquet(summaryTable([]summaryRow{{p.Algo, p.Eta, p.Seed, s}}))
	if err != nil {
		return nil, err
	}
	return Outputs{"summary": sum, "trajectory": traj}, nil
}

type summaryRow struct {
	algo string
	eta  float64
	seed uint64
	s    algos.Summary
}

func summaryTable(rows []summaryRow) artifacts.Table {
	n := len(rows)
	algo := make([]string, n)
	eta := make([]float64, n)
	seed := make([]int64, n)
	window := make([]int64, n)
	vals := make([][]float64, len(SummaryColumns))
	for c := range vals {
		vals[c] = make([]float64, n)
	}
	for r, row := range rows {
		algo[r], eta[r], seed[r], window[r] = row.algo, row.eta, int64(row.seed), int64(row.s.Window)
		for c, v := range []float64{row.s.HVLast, row.s.VStar, row.s.HVGreedy, row.s.VAlpha, row.s.RegretAlpha, row.s.RegretPos, row.s.RegretExact} {
			vals[c][r] = v
		}
	}
	cols := []artifacts.Column{{Name: "algo", String: algo}, {Name: "eta", Float64: eta}, {Name: "seed", Int64: seed}, {Name: "window", Int64: window}}
	for c, name := range SummaryColumns {
		cols = append(cols, artifacts.Column{Name: name, Float64: vals[c]})
	}
	return artifacts.Table{Columns: cols}
}

func decodeSummaries(b []byte) ([]summaryRow, error) {
	t, err := artifacts.DecodeParquet(b)
	if err != nil {
		return nil, err
	}
	algo, err1 := stringCol(t, "algo")
	eta, err2 := floatCol(t, "eta")
	seed, err3 := intCol(t, "seed")
	window, err4 := intCol(t, "window")
	if err := firstErr(err1, err2, err3, err4); err != nil {
		return nil, err
	}
	vals := make([][]float64, len(SummaryColumns))
	for c, name := range SummaryColumns {
		if vals[c], err = floatCol(t, name); err != nil {
			return nil, err
		}
	}
	rows := make([]summaryRow, len(algo))
	for r := range rows {
		rows[r] = summaryRow{algo: algo[r], eta: eta[r], seed: uint64(seed[r])}
		s := &rows[r].s
		s.Window = int(window[r])
		s.HVLast, s.VStar, s.HVGreedy, s.VAlpha = vals[0][r], vals[1][r], vals[2][r], vals[3][r]
		s.RegretAlpha, s.RegretPos, s.RegretExact = vals[4][r], vals[5][r], vals[6][r]
	}
	return rows, nil
}
