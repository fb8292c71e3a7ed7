package render

import (
	"bytes"
	"cmp"
	"fmt"
	"image/color"
	"image/png"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgpdf"
)

// FigureOptions configures Draw. Zero values take the defaults noted.
type FigureOptions struct {
	Title         string  // overall title, e.g. "d = 3, n = 60, k = 4, σ = 0.035, T = 3000, 10 seeds"; "" for none
	Window        int     // the moving average window the curves were computed with, for the y label (0 → 50)
	Width, Height float64 // figure size in inches (0 → 10 × 7.5)
	DPI           int     // PNG resolution (0 → 150)
}

// Defaults of FigureOptions.
const (
	DefaultFigureWidth  = 10.0
	DefaultFigureHeight = 7.5
	DefaultFigureDPI    = 150
)

// Format is what Draw writes.
type Format int

const (
	PNG Format = iota // rasterised at opt.DPI: the pixels may differ by CPU (package doc)
	PDF               // vector: the same bytes on every CPU
)

// Draw draws one figure of the curves ([Curves]): a grid of panels (2×2
// for four geometries, in the given order), each with one line per curve
// (the moving average of the mean) and a translucent band (that of the CI
// bounds). The first curve of each panel (THV-UCB) is drawn last, thicker.
// Colours are consistent per curve name across panels. One shared legend
// sits under the panels, the overall title above them.
//
// Errors: no panel, a panel without curves, a curve without points, with
// columns of unequal lengths, rounds not increasing from 1, or non-finite
// values, duplicate or empty curve names in a panel, invalid options, an
// unknown format.
func Draw(panels []PanelCurves, opt FigureOptions, format Format) (out []byte, err error) {
	opt, err = opt.withDefaults()
	if err != nil {
		return nil, err
	}
	curves, names, err := layoutCurves(panels)
	if err != nil {
		return nil, err
	}
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("render figure: %v", r)
		}
	}()
	w, h := vg.Length(opt.Width)*vg.Inch, vg.Length(opt.Height)*vg.Inch
	var buf bytes.Buffer
	switch format {
	case PNG:
		img := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(opt.DPI), vgimg.UseBackgroundColor(color.White))
		if err := drawFigure(draw.New(img), panels, curves, names, opt); err != nil {
			return nil, err
		}
		if err := png.Encode(&buf, img.Image()); err != nil { // BestCompression: −1.3% size, 6× time
			return nil, fmt.Errorf("render figure: png: %w", err)
		}
		return buf.Bytes(), nil
	case PDF:
		pc := &pdfOutlines{Canvas: vgpdf.New(w, h)}
		pc.EmbedFonts(false) // no font is used: text is drawn as outlines
		if err := drawFigure(draw.New(pc), panels, curves, names, opt); err != nil {
			return nil, err
		}
		if _, err := pc.WriteTo(&buf); err != nil {
			return nil, fmt.Errorf("render figure: pdf: %w", err)
		}
		return fixPDFDates(buf.Bytes()), nil
	}
	return nil, fmt.Errorf("render figure: unknown format %d", format)
}

func (opt FigureOptions) withDefaults() (FigureOptions, error) {
	opt.Window, opt.DPI = cmp.Or(opt.Window, DefaultFigureWindow), cmp.Or(opt.DPI, DefaultFigureDPI)
	opt.Width, opt.Height = cmp.Or(opt.Width, DefaultFigureWidth), cmp.Or(opt.Height, DefaultFigureHeight)
	switch {
	case opt.Window < 1:
		return opt, fmt.Errorf("render figure: window %d < 1", opt.Window)
	case !(opt.Width >= 2 && opt.Width <= 100 && opt.Height >= 2 && opt.Height <= 100):
		return opt, fmt.Errorf("render figure: size %v × %v in outside [2, 100]", opt.Width, opt.Height)
	case opt.DPI < 10 || opt.DPI > 1200:
		return opt, fmt.Errorf("render figure: dpi %d outside [10, 1200]", opt.DPI)
	}
	return opt, nil
}

// drawFigure lays the figure out on dc: title on top, panels in a grid,
// shared legend at the bottom.
func drawFigure(dc draw.Canvas, panels []PanelCurves, curves [][]seriesCurve, names []string, opt FigureOptions) error {
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
