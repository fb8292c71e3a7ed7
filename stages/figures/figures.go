// Package figures is the stage kind "figures": the HV(S_t) trajectory figure
// of one setting, one panel per geometry. A task computes the curves the
// figure draws from the trajectories of the chosen algorithms' final runs
// (thv/stages/render.Curves) and outputs them as a Parquet table with the
// PDF drawn from that table. The PNG is drawn from the same table outside
// any task, when results/ is written (RenderPNG): its pixels depend on the
// CPU, and a task's outputs may not (docs/reproducibility.md).
package figures

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"thv/stages/formats"
	"thv/stages/render"
	"thv/stages/stage"
)

// Kind is the name of the stage kind.
const Kind = "figures"

// The kind's input roles and outputs.
const (
	// TrajectoryRole is the trajectory of one run: TrajectoryInputName.
	TrajectoryRole stage.Role = "*/*/seed=*"
	// Curves is what the figure of setting * draws (formats.CurvePoint
	// rows): Params.CurvesOutput.
	Curves stage.OutputName = "*.curves.parquet"
	// PDF is the figure drawn from them: Params.PDFOutput.
	PDF stage.OutputName = "*.pdf"
)

// Declared is what the kind reads and writes.
var Declared = stage.Declaration{
	Reads: []stage.Role{TrajectoryRole},
	Outputs: []stage.Output{
		{Name: Curves, Results: "figures", Doc: "the data the figure of setting * draws (Parquet): per geometry, algorithm and drawn round, " +
			"the moving average of the mean HV(S_t) over seeds (mean) and of its CI bounds (ci_low, ci_high)"},
		{Name: PDF, Results: "figures", Doc: "HV(S_t) trajectories (moving average, 95% CI band), the proposed method vs the best of each family, setting *"},
	},
}

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
	return TrajectoryRole.With(geometry, algo, strconv.FormatUint(seed, 10))
}

// FileBase is the base of the figure's file names: the setting's name, a
// "/" in it as "_".
func (p Params) FileBase() string { return strings.ReplaceAll(p.Setting.Name, "/", "_") }

// CurvesOutput is the name of the output holding the curves
// (formats.CurvePoint rows): "<setting>.curves.parquet".
func (p Params) CurvesOutput() string { return Curves.With(p.FileBase()) }

// PDFOutput is the name of the PDF output: "<setting>.pdf".
func (p Params) PDFOutput() string { return PDF.With(p.FileBase()) }

// PNGName is the name of the PNG that RenderPNG draws: "<setting>.png".
func (p Params) PNGName() string { return p.FileBase() + ".png" }

// Run computes the figure's curves and draws it: outputs CurvesOutput and
// PDFOutput, the PDF drawn from the encoded curves.
func Run(ctx context.Context, params []byte, in stage.Inputs) (stage.Outputs, error) {
	p, err := stage.Start[Params](ctx, params)
	if err != nil {
		return nil, err
	}
	var panels []render.Panel
	for _, fp := range p.Panels {
		panel := render.Panel{Title: fp.Geometry}
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
	curves, err := render.Curves(panels, render.CurveOptions{Window: p.Window, Level: p.Confidence})
	if err != nil {
		return nil, err
	}
	var rows []formats.CurvePoint
	for _, pc := range curves {
		for _, c := range pc.Curves {
			for j, t := range c.Rounds {
				rows = append(rows, formats.CurvePoint{Geometry: pc.Title, Algo: c.Name, Round: t, Mean: c.Mean[j], CILow: c.Lo[j], CIHigh: c.Hi[j]})
			}
		}
	}
	table, err := formats.EncodeCurves(rows)
	if err != nil {
		return nil, err
	}
	pdf, err := draw(p, table, render.PDF)
	if err != nil {
		return nil, err
	}
	return stage.Outputs{p.CurvesOutput(): table, p.PDFOutput(): pdf}, nil
}

// RenderPNG draws the figure of a figures task with these params (JSON, as
// the task received them) as PNG from its curves output. It runs in no
// task: the same curves give the same PNG bytes on one machine, but not
// necessarily on another CPU.
func RenderPNG(params, curves []byte) ([]byte, error) {
	p, err := stage.Decode[Params](params)
	if err != nil {
		return nil, err
	}
	return draw(p, curves, render.PNG)
}

// draw draws the figure of p from a curves table, which must hold p's
// panels and algorithms in p's order.
func draw(p Params, curvesTable []byte, format render.Format) ([]byte, error) {
	rows, err := formats.DecodeCurves(curvesTable)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p.CurvesOutput(), err)
	}
	curves, err := panelCurves(p, rows)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p.CurvesOutput(), err)
	}
	st := p.Setting
	title := fmt.Sprintf("HV(S_t), d = %d, n = %d, k = %d, σ = %g, T = %d, %d seeds: THV-UCB and the best of each family",
		st.D, st.N, st.K, st.Sigma, st.T, st.Seeds)
	return render.Draw(curves, render.FigureOptions{Title: title, Window: p.Window, Width: 11, Height: 8}, format)
}

// panelCurves groups the rows into p's panels and curves, checking that
// they come in p's order: each (geometry, algorithm) one run of rows.
func panelCurves(p Params, rows []formats.CurvePoint) ([]render.PanelCurves, error) {
	var out []render.PanelCurves
	i := 0
	for _, fp := range p.Panels {
		pc := render.PanelCurves{Title: panelTitle(fp.Geometry)}
		for _, a := range fp.Algorithms {
			c := render.Curve{Name: a}
			for ; i < len(rows) && rows[i].Geometry == fp.Geometry && rows[i].Algo == a; i++ {
				r := rows[i]
				c.Rounds = append(c.Rounds, r.Round)
				c.Mean, c.Lo, c.Hi = append(c.Mean, r.Mean), append(c.Lo, r.CILow), append(c.Hi, r.CIHigh)
			}
			if len(c.Rounds) == 0 {
				return nil, fmt.Errorf("no rows of %s/%s where the figure draws it (row %d)", fp.Geometry, a, i)
			}
			pc.Curves = append(pc.Curves, c)
		}
		out = append(out, pc)
	}
	if i < len(rows) {
		return nil, fmt.Errorf("row %d (%s/%s, round %d) is not in the figure, or out of its order", i, rows[i].Geometry, rows[i].Algo, rows[i].Round)
	}
	return out, nil
}

// panelTitle is a geometry's name capitalised ("concave" → "Concave").
func panelTitle(geometry string) string {
	if geometry == "" {
		return geometry
	}
	return strings.ToUpper(geometry[:1]) + geometry[1:]
}
