package render

import (
	"errors"
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot/plotter"
)

// maxPlotPoints bounds the number of points drawn per line (and per band
// edge); see the package doc.
const maxPlotPoints = 1000

// seriesCurve is one series ready to plot: downsampled moving averages.
type seriesCurve struct {
	name       string
	line       plotter.XYs
	band       plotter.XYs // closed polygon: hi forwards, lo backwards
	ymin, ymax float64
	first      bool
	color      color.NRGBA
	dashed     bool
	rounds     int
}

// prepareCurves validates the input and computes the downsampled curves,
// per panel in draw order (other series in the given order, first series
// last), plus the legend entries (names in order of first appearance).
func prepareCurves(panels []Panel, opt FigureOptions) ([][]seriesCurve, []string, error) {
	if len(panels) == 0 {
		return nil, nil, errors.New("render figure: no panel")
	}
	colorIdx := map[string]int{}
	var names []string
	out := make([][]seriesCurve, len(panels))
	for p, pan := range panels {
		if len(pan.Series) == 0 {
			return nil, nil, fmt.Errorf("render figure: panel %d (%q) has no series", p, pan.Title)
		}
		seen := map[string]bool{}
		curves := make([]seriesCurve, 0, len(pan.Series))
		for i, s := range pan.Series {
			where := fmt.Sprintf("panel %d (%q), series %d (%q)", p, pan.Title, i, s.Name)
			if s.Name == "" {
				return nil, nil, fmt.Errorf("render figure: %s: empty name", where)
			}
			if seen[s.Name] {
				return nil, nil, fmt.Errorf("render figure: %s: duplicate name", where)
			}
			seen[s.Name] = true
			if len(s.HV) == 0 {
				return nil, nil, fmt.Errorf("render figure: %s: no seed", where)
			}
			T := len(s.HV[0])
			if T == 0 {
				return nil, nil, fmt.Errorf("render figure: %s: no round", where)
			}
			for k, traj := range s.HV {
				if len(traj) != T {
					return nil, nil, fmt.Errorf("render figure: %s: ragged seeds (seed 0 has %d rounds, seed %d has %d)", where, T, k, len(traj))
				}
				for t, v := range traj {
					if math.IsNaN(v) || math.IsInf(v, 0) {
						return nil, nil, fmt.Errorf("render figure: %s: seed %d round %d: non-finite HV %v", where, k, t+1, v)
					}
				}
			}
			if _, ok := colorIdx[s.Name]; !ok {
				colorIdx[s.Name] = len(names)
				names = append(names, s.Name)
			}
			mean, lo, hi := MeanCIBand(s.HV, opt.Level)
			c := downsampleCurve(MovingAverage(mean, opt.Window), MovingAverage(lo, opt.Window), MovingAverage(hi, opt.Window))
			c.name, c.first, c.rounds = s.Name, i == 0, T
			ci := colorIdx[s.Name]
			c.color, c.dashed = figurePalette[ci%len(figurePalette)], ci >= len(figurePalette)
			curves = append(curves, c)
		}
		// Draw order: the first series last (on top).
		out[p] = append(curves[1:len(curves):len(curves)], curves[0])
	}
	return out, names, nil
}

// downsampleCurve keeps every step-th round (rounds step, 2·step, …) plus
// rounds 1 and T, step = ⌈T/maxPlotPoints⌉.
func downsampleCurve(mean, lo, hi []float64) seriesCurve {
	T := len(mean)
	step := (T + maxPlotPoints - 1) / maxPlotPoints
	idx := []int{0}
	for t := step - 1; t < T; t += step {
		if t > 0 {
			idx = append(idx, t)
		}
	}
	if idx[len(idx)-1] != T-1 {
		idx = append(idx, T-1)
	}
	c := seriesCurve{
		line: make(plotter.XYs, len(idx)),
		band: make(plotter.XYs, 0, 2*len(idx)),
		ymin: math.Inf(1), ymax: math.Inf(-1),
	}
	for j, t := range idx {
		x := float64(t + 1)
		c.line[j] = plotter.XY{X: x, Y: mean[t]}
		c.band = append(c.band, plotter.XY{X: x, Y: hi[t]})
		c.ymin = math.Min(c.ymin, math.Min(lo[t], mean[t]))
		c.ymax = math.Max(c.ymax, math.Max(hi[t], mean[t]))
	}
	for j := len(idx) - 1; j >= 0; j-- {
		t := idx[j]
		c.band = append(c.band, plotter.XY{X: float64(t + 1), Y: lo[t]})
	}
	return c
}
