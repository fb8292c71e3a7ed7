package stages

// HV trajectory figures (the paper's Figures "HV trajectories, … front" and
// fig:synthetic-fronts-d3/d4/d5): one figure per setting, a 2×2 grid of panels
// (one per front geometry), each showing, per algorithm, the moving average of
// the per-round mean HV(S_t) over seeds with a translucent 95% CI band.
//
// RenderFigure is a pure function of its arguments: it reads no file, no clock
// and no global state, and the same input gives byte-identical PNG and PDF.
// How:
//   - PNG: gonum/plot's vgimg rasteriser (fonts are the Liberation fonts
//     compiled into gonum/plot, no system fonts) encoded with image/png; both
//     are deterministic.
//   - PDF: gonum/plot's vgpdf backend (go-pdf/fpdf) has two sources of
//     non-determinism: (1) the /CreationDate and /ModDate of the info
//     dictionary come from time.Now(); (2) fonts are embedded through a
//     temporary directory and, with more than one font, emitted in Go map
//     order (fpdf sorts only when the process-global SetDefaultCatalogSort is
//     set). We avoid (2) entirely: the PDF canvas draws every string as
//     filled glyph outlines taken from the same Liberation font (pdfOutlines
//     below), so the PDF embeds no font at all (and, as a bonus, can show any
//     glyph the font has, e.g. "σ", which fpdf's cp1252 font encoding
//     cannot). For (1), the two dates are rewritten in place to a fixed value
//     of the same length (so the xref offsets stay valid). The text of the PDF
//     is consequently not selectable/searchable — acceptable for a figure.
//     (pdfOutlines also works around vgpdf writing alpha-premultiplied RGB
//     as the colour of translucent fills, which made the CI bands grey.)
//
// Byte identity holds for a given Go toolchain and gonum/plot version
// (compress/flate, image/png and the rasteriser are part of the output) and
// is expected, not proven, across CPU architectures (the compiler may fuse
// multiply-adds on arm64, which can move an antialiased pixel or a
// rounded PDF coordinate).
//
// Size: the lines and bands are downsampled to about maxPlotPoints points
// per series (every ⌈T/maxPlotPoints⌉-th round, plus rounds 1 and T: every
// 5th round for T = 5000, every 3rd for T = 3000); the moving averages are computed at full resolution before
// downsampling, so this only drops points that are visually redundant after
// a w = 50 moving average.

import (
	"bytes"
	"errors"
	"fmt"
	"image/color"
	"image/png"
	"math"
	"regexp"
	"strconv"

	"golang.org/x/image/font/sfnt"
	"golang.org/x/image/math/fixed"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
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

// FigureOptions configures RenderFigure. Zero values take the defaults noted.
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

// maxPlotPoints bounds the number of points drawn per line (and per band
// edge); see the file comment at the top.
const maxPlotPoints = 1000

// figurePalette is a fixed colour palette (matplotlib's "tab10", with red
// first so that the highlighted first series, THV-UCB, stands out). Colours
// are assigned to series names in order of first appearance (first panel
// first); past ten names they cycle with a dashed line style.
var figurePalette = []color.NRGBA{
	{0xd6, 0x27, 0x28, 0xff}, // red
	{0x1f, 0x77, 0xb4, 0xff}, // blue
	{0x2c, 0xa0, 0x2c, 0xff}, // green
	{0xff, 0x7f, 0x0e, 0xff}, // orange
	{0x94, 0x67, 0xbd, 0xff}, // purple
	{0x8c, 0x56, 0x4b, 0xff}, // brown
	{0xe3, 0x77, 0xc2, 0xff}, // pink
	{0x7f, 0x7f, 0x7f, 0xff}, // grey
	{0xbc, 0xbd, 0x22, 0xff}, // olive
	{0x17, 0xbe, 0xcf, 0xff}, // cyan
}

// Styling, in points.
const (
	figLineWidth      = 1.3
	figFirstLineWidth = 2.4
	figBandAlpha      = 0.16
	figFirstBandAlpha = 0.22
	figTitleSize      = 14
	figPanelTitleSize = 13
	figAxisLabelSize  = 11
	figTickLabelSize  = 10
	figLegendSize     = 11
)

var figFont = font.Font{Typeface: "Liberation", Variant: "Sans"}

// MovingAverage returns the trailing moving average of x with window w:
// out[t] is the mean of x[t−w+1..t], and of x[0..t] while t < w−1 (the rounds
// available). w ≤ 1 returns a copy of x.
func MovingAverage(x []float64, w int) []float64 {
	out := make([]float64, len(x))
	if w < 1 {
		w = 1
	}
	for t := range x {
		lo := max(0, t-w+1)
		s := 0.0
		for _, v := range x[lo : t+1] {
			s += v
		}
		out[t] = s / float64(t+1-lo)
	}
	return out
}

// MeanCIBand returns, per round t, the mean of hv[s][t] over the seeds s and
// the bounds of its two-sided Student-t confidence interval at the given
// level (t quantile with n−1 degrees of freedom, sample standard deviation;
// the same formula as MeanWithCI). With a single seed the band collapses to
// the mean. It returns nil slices when hv is empty, ragged, has no rounds, or
// level is not in (0, 1).
func MeanCIBand(hv [][]float64, level float64) (mean, lo, hi []float64) {
	if len(hv) == 0 || len(hv[0]) == 0 || !(level > 0 && level < 1) {
		return nil, nil, nil
	}
	n, T := len(hv), len(hv[0])
	for _, s := range hv {
		if len(s) != T {
			return nil, nil, nil
		}
	}
	mean, lo, hi = make([]float64, T), make([]float64, T), make([]float64, T)
	q := TCritical(n, level)
	for t := range T {
		sum := 0.0
		for _, s := range hv {
			sum += s[t]
		}
		m := sum / float64(n)
		h := 0.0
		if n > 1 {
			ss := 0.0
			for _, s := range hv {
				d := s[t] - m
				ss += d * d
			}
			h = q * math.Sqrt(ss/float64(n-1)) / math.Sqrt(float64(n))
		}
		mean[t], lo[t], hi[t] = m, m-h, m+h
	}
	return mean, lo, hi
}

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

// RenderFigure draws one figure: a grid of panels (2×2 for four geometries,
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
func RenderFigure(panels []Panel, opt FigureOptions) (pngBytes, pdfBytes []byte, err error) {
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

func figTextStyle(size float64) text.Style {
	return text.Style{
		Color:   color.Black,
		Font:    font.From(figFont, vg.Points(size)),
		XAlign:  draw.XCenter,
		YAlign:  draw.YTop,
		Handler: plot.DefaultTextHandler,
	}
}

// newPanelPlot builds the gonum plot of one panel.
func newPanelPlot(pan Panel, curves []seriesCurve, opt FigureOptions) (*plot.Plot, error) {
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

func seriesLineStyle(c seriesCurve) draw.LineStyle {
	ls := draw.LineStyle{Color: c.color, Width: vg.Points(figLineWidth)}
	if c.first {
		ls.Width = vg.Points(figFirstLineWidth)
	}
	if c.dashed {
		ls.Dashes = []vg.Length{vg.Points(5), vg.Points(2)}
	}
	return ls
}

func withAlpha(c color.NRGBA, a float64) color.NRGBA {
	c.A = uint8(math.Round(a * 255))
	return c
}

// niceTicks places about target major ticks at multiples of 1, 2, 2.5 or 5
// × 10^k (labelled with just the decimals the step needs) and one unlabelled
// minor tick between consecutive major ones.
type niceTicks struct{ target int }

func (nt niceTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		return nil
	}
	// The step among {1, 2, 2.5, 5} × 10^k whose tick count is closest to
	// the target (ties: the larger step).
	mag := math.Pow(10, math.Floor(math.Log10((hi-lo)/float64(nt.target))))
	var step float64
	var decimals int
	bestDiff := math.Inf(1)
	for _, e := range []float64{0.1, 1, 10} {
		for _, m := range []float64{1, 2, 2.5, 5} {
			s := m * mag * e
			n := math.Floor(hi/s+1e-9) - math.Ceil(lo/s-1e-9) + 1
			if d := math.Abs(n - float64(nt.target)); d <= bestDiff {
				step, bestDiff = s, d
				decimals = -int(math.Floor(math.Log10(mag*e) + 1e-9))
				if m == 2.5 {
					decimals++
				}
			}
		}
	}
	decimals = max(decimals, 0)
	var ticks []plot.Tick
	first := math.Ceil(lo/step-1e-9) - 1 // one before, for the minor tick
	for i := first; i*step <= hi+step*1e-9; i++ {
		v := i * step
		if v >= lo-step*1e-9 {
			label := strconv.FormatFloat(v, 'f', decimals, 64)
			if v == 0 || label == "-"+strconv.FormatFloat(0, 'f', decimals, 64) {
				label = strconv.FormatFloat(0, 'f', decimals, 64)
			}
			ticks = append(ticks, plot.Tick{Value: v, Label: label})
		}
		if m := v + step/2; m >= lo && m <= hi {
			ticks = append(ticks, plot.Tick{Value: m})
		}
	}
	return ticks
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

// drawLegend draws the shared legend at the bottom of area, centred, in as
// many rows as needed, and returns its height.
func drawLegend(area draw.Canvas, curves [][]seriesCurve, names []string) vg.Length {
	// One representative curve per name, for its style (first-series-ness
	// decides the thickness; take it from the first panel where the name
	// appears).
	rep := map[string]seriesCurve{}
	for _, cs := range curves {
		for _, c := range cs {
			if _, ok := rep[c.name]; !ok {
				rep[c.name] = c
			}
		}
	}
	sty := figTextStyle(figLegendSize)
	sty.XAlign, sty.YAlign = draw.XLeft, draw.YCenter
	fnt := sty.Handler.Cache().Lookup(sty.Font, sty.Font.Size)
	var (
		swatchW = vg.Points(26)
		swatchH = vg.Points(9)
		gap     = vg.Points(5)  // swatch ↔ text
		sep     = vg.Points(18) // entry ↔ entry
		rowH    = sty.Font.Size * 1.5
		avail   = area.Max.X - area.Min.X
	)
	entryW := make([]vg.Length, len(names))
	for i, n := range names {
		entryW[i] = swatchW + gap + fnt.Width(n)
	}
	// Greedy row filling.
	var rowsOf [][]int
	var cur []int
	var curW vg.Length
	for i := range names {
		w := entryW[i]
		if len(cur) > 0 && curW+sep+w > avail {
			rowsOf = append(rowsOf, cur)
			cur, curW = nil, 0
		}
		if len(cur) > 0 {
			curW += sep
		}
		cur = append(cur, i)
		curW += w
	}
	if len(cur) > 0 {
		rowsOf = append(rowsOf, cur)
	}
	height := vg.Length(len(rowsOf)) * rowH
	for r, row := range rowsOf {
		var total vg.Length
		for k, i := range row {
			if k > 0 {
				total += sep
			}
			total += entryW[i]
		}
		x := (area.Min.X+area.Max.X)/2 - total/2
		y := area.Min.Y + height - (vg.Length(r)+0.5)*rowH
		for _, i := range row {
			c := rep[names[i]]
			alpha := figBandAlpha
			if c.first {
				alpha = figFirstBandAlpha
			}
			area.FillPolygon(withAlpha(c.color, alpha), []vg.Point{
				{X: x, Y: y - swatchH/2}, {X: x + swatchW, Y: y - swatchH/2},
				{X: x + swatchW, Y: y + swatchH/2}, {X: x, Y: y + swatchH/2},
			})
			area.StrokeLine2(seriesLineStyle(c), x, y, x+swatchW, y)
			area.FillText(sty, vg.Point{X: x + swatchW + gap, Y: y}, names[i])
			x += entryW[i] + sep
		}
	}
	return height
}

// pdfOutlines is the vgpdf canvas with text drawn as filled glyph outlines
// instead of embedded fonts (see the file comment at the top).
type pdfOutlines struct {
	*vgpdf.Canvas
	buf sfnt.Buffer
}

// SetColor works around vgpdf treating the alpha-premultiplied components
// returned by color.Color.RGBA as straight RGB (a translucent colour would
// come out darkened, e.g. grey bands): it hands vgpdf a colour whose RGBA
// method returns the straight (non-premultiplied) components.
func (c *pdfOutlines) SetColor(clr color.Color) {
	if clr == nil {
		clr = color.Black
	}
	c.Canvas.SetColor(straightColor(color.NRGBAModel.Convert(clr).(color.NRGBA)))
}

// straightColor is an NRGBA whose RGBA method returns the straight
// components; only for vgpdf's SetColor (see pdfOutlines.SetColor).
type straightColor color.NRGBA

func (s straightColor) RGBA() (r, g, b, a uint32) {
	return uint32(s.R) * 0x101, uint32(s.G) * 0x101, uint32(s.B) * 0x101, uint32(s.A) * 0x101
}

// FillString draws str with its baseline starting at pt, as the plain text
// handler and vgimg do, using the glyph outlines of fnt (no hinting; the same
// advances and kerning as font.Face.Width).
func (c *pdfOutlines) FillString(fnt font.Face, pt vg.Point, str string) {
	if fnt.Font.Size == 0 || fnt.Face == nil || str == "" {
		return
	}
	f := fnt.Face
	ppem := fixed.Int26_6(f.UnitsPerEm())
	scale := fnt.Font.Size / vg.Length(ppem)
	var (
		path    vg.Path
		x       fixed.Int26_6
		prev    sfnt.GlyphIndex
		hasPrev bool
	)
	at := func(p fixed.Point26_6) vg.Point {
		return vg.Point{X: pt.X + vg.Length(x+p.X)*scale, Y: pt.Y - vg.Length(p.Y)*scale}
	}
	for _, r := range str {
		idx, err := f.GlyphIndex(&c.buf, r)
		if err != nil {
			panic(fmt.Errorf("glyph index of %q: %v", r, err))
		}
		if hasPrev {
			if k, err := f.Kern(&c.buf, prev, idx, ppem, 0); err == nil {
				x += k
			}
		}
		segs, err := f.LoadGlyph(&c.buf, idx, ppem, nil)
		if err != nil {
			panic(fmt.Errorf("glyph outline of %q: %v", r, err))
		}
		open := false
		for _, s := range segs {
			switch s.Op {
			case sfnt.SegmentOpMoveTo:
				if open {
					path.Close()
				}
				path.Move(at(s.Args[0]))
				open = true
			case sfnt.SegmentOpLineTo:
				path.Line(at(s.Args[0]))
			case sfnt.SegmentOpQuadTo:
				path.QuadTo(at(s.Args[0]), at(s.Args[1]))
			case sfnt.SegmentOpCubeTo:
				path.CubeTo(at(s.Args[0]), at(s.Args[1]), at(s.Args[2]))
			}
		}
		if open {
			path.Close()
		}
		adv, err := f.GlyphAdvance(&c.buf, idx, ppem, 0)
		if err != nil {
			panic(fmt.Errorf("glyph advance of %q: %v", r, err))
		}
		x += adv
		prev, hasPrev = idx, true
	}
	if len(path) > 0 {
		c.Fill(path)
	}
}

// pdfDate matches the info-dictionary dates fpdf writes from time.Now().
var pdfDate = regexp.MustCompile(`/(CreationDate|ModDate) \(D:[0-9]{14}\)`)

// fixPDFDates rewrites the creation and modification dates to a fixed
// timestamp of the same length, keeping the xref table valid.
func fixPDFDates(b []byte) []byte {
	return pdfDate.ReplaceAllFunc(b, func(m []byte) []byte {
		key := m[:bytes.IndexByte(m, ' ')]
		return fmt.Appendf(nil, "%s (D:20000101000000)", key)
	})
}
