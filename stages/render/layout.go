package render

import (
	"errors"
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot/plotter"
)

// seriesCurve is one curve ready to plot.
type seriesCurve struct {
	name       string
	line       plotter.XYs
	band       plotter.XYs // closed polygon: hi forwards, lo backwards
	ymin, ymax float64
	first      bool
	color      color.NRGBA
	dashed     bool
	rounds     int // the last round drawn: the x axis ends there
}

// layoutCurves checks the curves and turns them into plottable ones, per
// panel in draw order (other curves in the given order, the first curve
// last), plus the legend entries (names in order of first appearance, which
// also assigns the colours).
func layoutCurves(panels []PanelCurves) ([][]seriesCurve, []string, error) {
	if len(panels) == 0 {
		return nil, nil, errors.New("render figure: no panel")
	}
	colorIdx := map[string]int{}
	var names []string
	out := make([][]seriesCurve, len(panels))
	for p, pan := range panels {
		if len(pan.Curves) == 0 {
			return nil, nil, fmt.Errorf("render figure: panel %d (%q) has no curve", p, pan.Title)
		}
		seen := map[string]bool{}
		curves := make([]seriesCurve, 0, len(pan.Curves))
		for i, c := range pan.Curves {
			if err := checkCurve(c, seen); err != nil {
				return nil, nil, fmt.Errorf("render figure: panel %d (%q), curve %d (%q): %w", p, pan.Title, i, c.Name, err)
			}
			if _, ok := colorIdx[c.Name]; !ok {
				colorIdx[c.Name] = len(names)
				names = append(names, c.Name)
			}
			sc := plottable(c)
			sc.first = i == 0
			ci := colorIdx[c.Name]
			sc.color, sc.dashed = figurePalette[ci%len(figurePalette)], ci >= len(figurePalette)
			curves = append(curves, sc)
		}
		// Draw order: the first curve last (on top).
		out[p] = append(curves[1:len(curves):len(curves)], curves[0])
	}
	return out, names, nil
}

// checkCurve rejects a curve that cannot be drawn: no name, a name seen
// before in the panel (recorded in seen), no point, columns of different
// lengths, rounds not increasing from 1 on, a non-finite value.
func checkCurve(c Curve, seen map[string]bool) error {
	n := len(c.Rounds)
	switch {
	case c.Name == "":
		return errors.New("empty name")
	case seen[c.Name]:
		return errors.New("duplicate name")
	case n == 0:
		return errors.New("no point")
	case len(c.Mean) != n || len(c.Lo) != n || len(c.Hi) != n:
		return fmt.Errorf("%d rounds but %d means, %d lower and %d upper bounds", n, len(c.Mean), len(c.Lo), len(c.Hi))
	}
	seen[c.Name] = true
	for j, t := range c.Rounds {
		if t < 1 || j > 0 && t <= c.Rounds[j-1] {
			return fmt.Errorf("round %d at point %d: rounds must increase from 1 on", t, j)
		}
		for _, v := range [...]float64{c.Mean[j], c.Lo[j], c.Hi[j]} {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("round %d: non-finite value %v", t, v)
			}
		}
	}
	return nil
}

// plottable is the line and band polygon of a checked curve, with its
// vertical extent.
func plottable(c Curve) seriesCurve {
	n := len(c.Rounds)
	sc := seriesCurve{
		name:   c.Name,
		line:   make(plotter.XYs, n),
		band:   make(plotter.XYs, 0, 2*n),
		ymin:   math.Inf(1),
		ymax:   math.Inf(-1),
		rounds: c.Rounds[n-1],
	}
	for j, t := range c.Rounds {
		x := float64(t)
		sc.line[j] = plotter.XY{X: x, Y: c.Mean[j]}
		sc.band = append(sc.band, plotter.XY{X: x, Y: c.Hi[j]})
		sc.ymin = math.Min(sc.ymin, math.Min(c.Lo[j], c.Mean[j]))
		sc.ymax = math.Max(sc.ymax, math.Max(c.Hi[j], c.Mean[j]))
	}
	for j := n - 1; j >= 0; j-- {
		sc.band = append(sc.band, plotter.XY{X: float64(c.Rounds[j]), Y: c.Lo[j]})
	}
	return sc
}
