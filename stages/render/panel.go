package render

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// newPanelPlot builds the gonum plot of one panel.
func newPanelPlot(pan PanelCurves, curves []seriesCurve, opt FigureOptions) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = pan.Title
	p.Title.TextStyle = figTextStyle(figPanelTitleSize)
	p.Title.Padding = vg.Points(6)
	p.X.Label.Text = "round t"
	p.Y.Label.Text = fmt.Sprintf("HV(S_t) (moving average, w = %d)", opt.Window)
	for _, ax := range []*plot.Axis{&p.X, &p.Y} {
		ax.Label.TextStyle.Font = font.From(figFont, vg.Points(figAxisLabelSize))
		ax.Tick.Label.Font = font.From(figFont, vg.Points(figTickLabelSize))
		ax.Tick.Length = vg.Points(4)
		ax.Padding = vg.Points(3)
		ax.Label.Padding = vg.Points(2)
		ax.Tick.Marker = niceTicks{target: 6}
	}

	grid := plotter.NewGrid()
	grid.Vertical.Color = color.Gray{Y: 0xe0}
	grid.Horizontal.Color = color.Gray{Y: 0xe0}
	grid.Vertical.Width = vg.Points(0.5)
	grid.Horizontal.Width = vg.Points(0.5)
	p.Add(grid)

	ymin, ymax, T := math.Inf(1), math.Inf(-1), 0
	for _, c := range curves {
		ymin, ymax, T = math.Min(ymin, c.ymin), math.Max(ymax, c.ymax), max(T, c.rounds)
	}
	for _, c := range curves {
		band, err := plotter.NewPolygon(c.band)
		if err != nil {
			return nil, err
		}
		alpha := figBandAlpha
		if c.first {
			alpha = figFirstBandAlpha
		}
		band.Color = withAlpha(c.color, alpha)
		band.LineStyle.Width = 0
		p.Add(band)
	}
	for _, c := range curves {
		l, err := plotter.NewLine(c.line)
		if err != nil {
			return nil, err
		}
		l.LineStyle = seriesLineStyle(c)
		p.Add(l)
	}
	pad := (ymax - ymin) * 0.04
	if !(pad > 0) {
		pad = math.Max(math.Abs(ymax)*0.05, 1e-6)
	}
	p.Y.Min, p.Y.Max = ymin-pad, ymax+pad
	p.X.Min, p.X.Max = 0, float64(T)
	return p, nil
}
