package stages

import (
	"fmt"
	"strings"

	"thv/artifacts"
)

// FiguresParams configure the trajectory figure of one setting. Inputs: the
// trajectory of every drawn (geometry, algorithm, seed), named by
// TrajectoryInputName.
type FiguresParams struct {
	Setting    SettingInfo   `json:"setting"`
	Panels     []FigurePanel `json:"panels"` // one per geometry, in order
	Seeds      []uint64      `json:"seeds"`
	Window     int           `json:"moving_average"`
	Confidence float64       `json:"confidence"`
}

// FigurePanel lists the algorithms drawn for one geometry, the proposed
// method first.
type FigurePanel struct {
	Geometry   string   `json:"geometry"`
	Algorithms []string `json:"algorithms"`
}

func init() {
	register(Kind{Name: "figures", Sources: []string{"stages/plots.go", "stages/figures.go"}, Run: runFigures})
}

// TrajectoryInputName is the input role of one run's trajectory.
func TrajectoryInputName(geometry, algo string, seed uint64) string {
	return fmt.Sprintf("%s/%s/seed=%d", geometry, algo, seed)
}

// runFigures draws HV(S_t) trajectories, one panel per geometry: outputs
// "<setting>.png" and "<setting>.pdf".
func runFigures(params []byte, in Inputs) (Outputs, error) {
	p, err := decode[FiguresParams](params)
	if err != nil {
		return nil, err
	}
	var panels []Panel
	for _, fp := range p.Panels {
		panel := Panel{Title: titleCase(fp.Geometry)}
		for _, a := range fp.Algorithms {
			s := Series{Name: a}
			for _, seed := range p.Seeds {
				name := TrajectoryInputName(fp.Geometry, a, seed)
				b, ok := in[name]
				if !ok {
					return nil, fmt.Errorf("figures: missing input %s", name)
				}
				t, err := artifacts.DecodeParquet(b)
				if err != nil {
					return nil, fmt.Errorf("figures: %s: %w", name, err)
				}
				hv, err := floatCol(t, "hv")
				if err != nil {
					return nil, fmt.Errorf("figures: %s: %w", name, err)
				}
				s.HV = append(s.HV, hv)
			}
			panel.Series = append(panel.Series, s)
		}
		panels = append(panels, panel)
	}
	st := p.Setting
	title := fmt.Sprintf("HV(S_t), d = %d, n = %d, k = %d, σ = %g, T = %d, %d seeds: THV-UCB and the best of each family",
		st.D, st.N, st.K, st.Sigma, st.T, st.Seeds)
	png, pdf, err := RenderFigure(panels, FigureOptions{Title: title, Window: p.Window, Level: p.Confidence, Width: 11, Height: 8})
	if err != nil {
		return nil, fmt.Errorf("figures %s: %w", st.Name, err)
	}
	name := strings.ReplaceAll(st.Name, "/", "_")
	return Outputs{name + ".png": png, name + ".pdf": pdf}, nil
}
