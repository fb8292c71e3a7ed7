// Package figures is the stage kind "figures": the HV(S_t) trajectory figure
// of one setting, one panel per geometry, drawn by thv/stages/render from
// the trajectories of the chosen algorithms' final runs.
package figures

import (
	"context"
	"fmt"
	"strings"

	"thv/stages/formats"
	"thv/stages/render"
	"thv/stages/stage"
)

// Kind is the name of the stage kind.
const Kind = "figures"

// Params configure the trajectory figure of one setting. The inputs are the
// trajectory of every drawn (geometry, algorithm, seed), named by
// TrajectoryInputName.
type Params struct {
	Setting    formats.Setting `json:"setting"`
	Panels     []Panel         `json:"panels"` // one per geometry, in order
	Seeds      []uint64        `json:"seeds"`
	Window     int             `json:"moving_average"`
	Confidence float64         `json:"confidence"`
}

// Panel lists the algorithms drawn for one geometry, the proposed method
// first.
type Panel struct {
	Geometry   string   `json:"geometry"`
	Algorithms []string `json:"algorithms"`
}

// TrajectoryInputName is the input role of one run's trajectory.
func TrajectoryInputName(geometry, algo string, seed uint64) string {
	return fmt.Sprintf("%s/%s/seed=%d", geometry, algo, seed)
}

// Run draws the figure: outputs "<setting>.png" and "<setting>.pdf" (a "/"
// in the setting's name becomes "_").
func Run(ctx context.Context, params []byte, in stage.Inputs) (stage.Outputs, error) {
	p, err := stage.Start[Params](ctx, params)
	if err != nil {
		return nil, err
	}
	var panels []render.Panel
	for _, fp := range p.Panels {
		panel := render.Panel{Title: panelTitle(fp.Geometry)}
		for _, a := range fp.Algorithms {
			s := render.Series{Name: a}
			for _, seed := range p.Seeds {
				hv, err := stage.Read(in, TrajectoryInputName(fp.Geometry, a, seed), formats.DecodeTrajectory)
				if err != nil {
					return nil, err
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
	png, pdf, err := render.Figure(panels, render.FigureOptions{Title: title, Window: p.Window, Level: p.Confidence, Width: 11, Height: 8})
	if err != nil {
		return nil, err
	}
	name := strings.ReplaceAll(st.Name, "/", "_")
	return stage.Outputs{name + ".png": png, name + ".pdf": pdf}, nil
}

// panelTitle is a geometry's name capitalised ("concave" → "Concave").
func panelTitle(geometry string) string {
	if geometry == "" {
		return geometry
	}
	return strings.ToUpper(geometry[:1]) + geometry[1:]
}
