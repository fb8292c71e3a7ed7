package render

import (
	"bytes"
	"fmt"
	"image/color"
	"image/png"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgpdf"
)

// Series is one algorithm's trajectories over seeds: HV[s][t] is HV(S_t) of
// seed s at round t+1 (all seeds same length).
type Series struct {
	Name string
	HV   [][]float64
}

// Panel is one geometry.
type Panel struct {
	Title  string
	Series []Series
}

// FigureOptions configures Figure. Zero values take the defaults noted.
type FigureOptions struct {
	Title         string  // overall title, e.g. "d = 3, n = 60, k = 4, σ = 0.035, T = 3000, 10 seeds"; "" for none
	Window        int     // moving average window w (0 → 50)
	Level         float64 // CI level (0 → 0.95)
	Width, Height float64 // figure size in inches (0 → 10 × 7.5)
	DPI           int     // PNG resolution (0 → 150)
}

// Defaults of FigureOptions.
const (
	DefaultFigureWindow = 50
	DefaultFigureLevel  = 0.95
	DefaultFigureWidth  = 10.0
	DefaultFigureHeight = 7.5
	DefaultFigureDPI    = 150
)

// Figure draws one figure: a grid of panels (2×2 for four geometries,
// in the given order), each with one line per series = the moving average
// (window w, over rounds t−w+1..t; for t < w the rounds available) of the
// per-round mean over seeds, and a translucent band = the moving average of
// the per-round CI bounds of the mean (Student t, n−1 dof). The first series
// of each panel (THV-UCB) is drawn last, thicker. Colours are consistent per
// series name across panels. One shared legend sits under the panels, the
// overall title above them. It returns PNG (opt.DPI) and PDF bytes.
//
// Errors: no panel, a panel without series, a series without seeds or
// rounds, ragged seeds, non-finite HV values, duplicate or empty series
// names in a panel, invalid options.
func Figure(panels []Panel, opt FigureOptions) (pngBytes, pdfBytes []byte, err error) {
	opt, err = opt.withDefaults()
	if err != nil {
		return nil, nil, err
	}
	curves, names, err := prepareCurves(panels, opt)
	if err != nil {
		return nil, nil, err
	}
	defer func() {
		if r := recover(); r != nil {
			pngBytes, pdfBytes, err = nil, nil, fmt.Errorf("render figure: %v", r)
		}
	}()
	w, h := vg.Length(opt.Width)*vg.Inch, vg.Length(opt.Height)*vg.Inch

	img := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(opt.DPI), vgimg.UseBackgroundColor(color.White))
	if err := drawFigure(draw.New(img), panels, curves, names, opt); err != nil {
		return nil, nil, err
	}
	var pb bytes.Buffer
	if err := png.Encode(&pb, img.Image()); err != nil { // BestCompression: −1.3% size, 6× time
		return nil, nil, fmt.Errorf("render figure: png: %w", err)
	}

	pc := &pdfOutlines{Canvas: vgpdf.New(w, h)}
	pc.EmbedFonts(false) // no font is used: text is drawn as outlines
	if err := drawFigure(draw.New(pc), panels, curves, names, opt); err != nil {
		return nil, nil, err
	}
	var db bytes.Buffer
	if _, err := pc.WriteTo(&db); err != nil {
		return nil, nil, fmt.Errorf("render figure: pdf: %w", err)
	}
	return pb.Bytes(), fixPDFDates(db.Bytes()), nil
}

func (opt FigureOptions) withDefaults() (FigureOptions, error) {
	if opt.Window == 0 {
		opt.Window = DefaultFigureWindow
	}
	if opt.Level == 0 {
		opt.Level = DefaultFigureLevel
	}
	if opt.Width == 0 {
		opt.Width = DefaultFigureWidth
	}
	if opt.Height == 0 {
		opt.Height = DefaultFigureHeight
	}
	if opt.DPI == 0 {
		opt.DPI = DefaultFigureDPI
	}
	switch {
	case opt.Window < 1:
		return opt, fmt.Errorf("render figure: window %d < 1", opt.Window)
	case !(opt.Level > 0 && opt.Level < 1):
		return opt, fmt.Errorf("render figure: CI level %v not in (0, 1)", opt.Level)
	case !(opt.Width >= 2 && opt.Width <= 100 && opt.Height >= 2 && opt.Height <= 100):
		return opt, fmt.Errorf("render figure: size %v × %v in outside [2, 100]", opt.Width, opt.Height)
	case opt.DPI < 10 || opt.DPI > 1200:
		return opt, fmt.Errorf("render figure: dpi %d outside [10, 1200]", opt.DPI)
	}
	return opt, nil
}

// drawFigure lays the figure out on dc: title on top, panels in a grid,
// shared legend at the bottom.
func drawFigure(dc draw.Canvas, panels []Panel, curves [][]seriesCurve, names []string, opt FigureOptions) error {
	margin := vg.Points(6)
	area := draw.Crop(dc, margin, -margin, margin, -margin)

	// Title.
	if opt.Title != "" {
		sty := figTextStyle(figTitleSize)
		area.FillText(sty, vg.Point{X: (area.Min.X + area.Max.X) / 2, Y: area.Max.Y}, opt.Title)
		area.Max.Y -= sty.Height(opt.Title) + vg.Points(8)
	}

	// Legend (one shared legend under the panels, wrapped in rows).
	legendH := drawLegend(area, curves, names)
	area.Min.Y += legendH + vg.Points(6)

	// Panels.
	cols := 2
	if len(panels) == 1 {
		cols = 1
	}
	rows := (len(panels) + cols - 1) / cols
	plots := make([][]*plot.Plot, rows)
	for r := range plots {
		plots[r] = make([]*plot.Plot, cols)
	}
	for i, pan := range panels {
		p, err := newPanelPlot(pan, curves[i], opt)
		if err != nil {
			return fmt.Errorf("render figure: panel %d (%q): %w", i, pan.Title, err)
		}
		plots[i/cols][i%cols] = p
	}
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Points(22), PadY: vg.Points(14), PadRight: vg.Points(8)}
	canvases := plot.Align(plots, tiles, area)
	for r := range plots {
		for c, p := range plots[r] {
			if p != nil {
				p.Draw(canvases[r][c])
			}
		}
	}
	return nil
}
