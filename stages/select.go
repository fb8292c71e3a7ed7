package stages

import (
	"fmt"
	"slices"
	"sort"

	"thv/artifacts"
)

// SelectParams describe one η grid search: Runs names the input summaries,
// one per (η, seed), as "eta=<η>/seed=<seed>" — see RunInputName.
type SelectParams struct {
	Algo  string    `json:"algo"`
	Etas  []float64 `json:"etas"`
	Seeds []uint64  `json:"seeds"`
}

func init() {
	register(Kind{Name: "select", Sources: []string{"stages/select.go"}, Run: runSelect})
}

// RunInputName is the input role of the summary of the run at (η, seed).
func RunInputName(eta float64, seed uint64) string {
	return fmt.Sprintf("eta=%g/seed=%d", eta, seed)
}

// runSelect picks η* maximising the mean HV_last over the grid seeds (the
// smallest η on exact ties): output "selection" (eta, mean_hv_last, runs,
// selected 0/1), one row per η in increasing order.
func runSelect(params []byte, in Inputs) (Outputs, error) {
	p, err := decode[SelectParams](params)
	if err != nil {
		return nil, err
	}
	etas := slices.Clone(p.Etas)
	sort.Float64s(etas)
	means := make([]float64, len(etas))
	counts := make([]int64, len(etas))
	best := -1
	for e, eta := range etas {
		var sum float64
		for _, seed := range p.Seeds {
			name := RunInputName(eta, seed)
			b, ok := in[name]
			if !ok {
				return nil, fmt.Errorf("select %s: missing input %s", p.Algo, name)
			}
			rows, err := decodeSummaries(b)
			if err != nil || len(rows) != 1 {
				return nil, fmt.Errorf("select %s: input %s: bad summary (%v)", p.Algo, name, err)
			}
			sum += rows[0].s.HVLast
		}
		means[e] = sum / float64(len(p.Seeds))
		counts[e] = int64(len(p.Seeds))
		if best < 0 || means[e] > means[best] {
			best = e
		}
	}
	selected := make([]int64, len(etas))
	if best >= 0 {
		selected[best] = 1
	}
	out, err := artifacts.EncodeParquet(artifacts.Table{Columns: []artifacts.Column{
		{Name: "eta", Float64: etas}, {Name: "mean_hv_last", Float64: means}, {Name: "runs", Int64: counts}, {Name: "selected", Int64: selected},
	}})
	if err != nil {
		return nil, err
	}
	return Outputs{"selection": out}, nil
}

// SelectedEta reads η* from a selection output.
func SelectedEta(selection []byte) (float64, error) {
	t, err := artifacts.DecodeParquet(selection)
	if err != nil {
		return 0, err
	}
	eta, err1 := floatCol(t, "eta")
	sel, err2 := intCol(t, "selected")
	if err := firstErr(err1, err2); err != nil {
		return 0, err
	}
	for i := range sel {
		if sel[i] == 1 {
			return eta[i], nil
		}
	}
	return 0, fmt.Errorf("selection has no selected η")
}
