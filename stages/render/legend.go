package render

import (
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

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
	height := vg.Length(float64(vg.Length(len(rowsOf)) * rowH)) // rounded: it feeds y below
	for r, row := range rowsOf {
		var total vg.Length
		for k, i := range row {
			if k > 0 {
				total += sep
			}
			total += entryW[i]
		}
		x := vg.Length(float64((area.Min.X+area.Max.X)/2)) - vg.Length(float64(total/2))
		y := area.Min.Y + height - vg.Length(float64((vg.Length(r)+0.5)*rowH))
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
