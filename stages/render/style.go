package render

import (
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

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

func figTextStyle(size float64) text.Style {
	return text.Style{
		Color:   color.Black,
		Font:    font.From(figFont, vg.Points(size)),
		XAlign:  draw.XCenter,
		YAlign:  draw.YTop,
		Handler: plot.DefaultTextHandler,
	}
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
