package stages

import (
	"fmt"

	"thv/artifacts"
)

// CollectParams gather the final runs of one algorithm on one (setting,
// geometry): the summaries of the runs at η* for every final seed, as inputs
// named "seed=<seed>".
type CollectParams struct {
	Algo  string   `json:"algo"`
	Eta   float64  `json:"eta"`
	Seeds []uint64 `json:"seeds"`
}

func init() {
	register(Kind{Name: "collect", Sources: []string{"stages/run.go", "stages/collect.go"}, Run: runCollect})
}

// SeedInputName is the input role of the final run of a seed.
func SeedInputName(seed uint64) string { return fmt.Sprintf("seed=%d", seed) }

// runCollect concatenates the final runs' summaries: output "final", one row
// per seed in the order of Seeds (the columns of the run summary).
func runCollect(params []byte, in Inputs) (Outputs, error) {
	p, err := decode[CollectParams](params)
	if err != nil {
		return nil, err
	}
	var rows []summaryRow
	for _, seed := range p.Seeds {
		b, ok := in[SeedInputName(seed)]
		if !ok {
			return nil, fmt.Errorf("collect %s: missing input %s", p.Algo, SeedInputName(seed))
		}
		r, err := decodeSummaries(b)
		if err != nil || len(r) != 1 {
			return nil, fmt.Errorf("collect %s: seed %d: bad summary (%v)", p.Algo, seed, err)
		}
		rows = append(rows, r[0])
	}
	out, err := artifacts.EncodeParquet(summaryTable(rows))
	if err != nil {
		return nil, err
	}
	return Outputs{"final": out}, nil
}

// FinalRow is one seed's metrics in a collect output.
type FinalRow struct {
	Algo string
	Eta  float64
	Seed uint64
	// Metrics in SummaryColumns order.
	HVLast, VStar, HVGreedy, VAlpha, RegretAlpha, RegretPos, RegretExact float64
}

// DecodeFinal reads a collect output.
func DecodeFinal(b []byte) ([]FinalRow, error) {
	rows, err := decodeSummaries(b)
	if err != nil {
		return nil, err
	}
	out := make([]FinalRow, len(rows))
	for i, r := range rows {
		out[i] = FinalRow{r.algo, r.eta, r.seed, r.s.HVLast, r.s.VStar, r.s.HVGreedy, r.s.VAlpha, r.s.RegretAlpha, r.s.RegretPos, r.s.RegretExact}
	}
	return out, nil
}
