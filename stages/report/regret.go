package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"thv/stages/formats"
)

// RegretFigure is the cumulative regret against round t of the algorithms
// a trajectory figure draws, on one setting: the paper is about regret,
// and its tables give only the last point. The export computes it from
// the figure's trajectories (stages/protocol); it is drawn here as SVG.
type RegretFigure struct {
	Setting formats.Setting
	// Regret names what is summed, in words; Note says how its last
	// point relates to the tables' Final Regret, if not as that column.
	Regret, Note string
	Panels       []RegretPanel // one per geometry, in the figure's order
}

// RegretPanel is one geometry's curves, the proposed method first.
type RegretPanel struct {
	Geometry string
	Lines    []RegretLine
}

// RegretLine is one algorithm's mean cumulative regret over the seeds, at
// the drawn rounds (increasing, the last being T).
type RegretLine struct {
	Algo   string
	Rounds []int
	Mean   []float64
}

// lineColours are the algorithms' colours, the proposed method first
// (black), then the Okabe–Ito palette, which readers with a colour vision
// deficiency tell apart; past them the colours repeat, dashed. Each line
// is also named in the legend.
var lineColours = []string{"#000000", "#e69f00", "#0072b2", "#009e73", "#d55e00", "#cc79a7", "#56b4e9", "#8c6d31"}

// lineStyle is the i-th algorithm's colour and dash pattern ("": solid).
func lineStyle(i int) (colour, dash string) {
	colour = lineColours[i%len(lineColours)]
	if i >= len(lineColours) {
		dash = "5 3"
	}
	return colour, dash
}

// Regret panel geometry, in SVG units.
const (
	regretRight  = 24.0 // room for the last tick's label
	regretLeft   = 44.0
	regretGap    = 26.0
	regretTop    = 20.0
	regretHeight = 150.0
	regretBottom = 30.0
)

// regretFigure writes one setting's figure: a panel per geometry.
func regretFigure(w *page, f RegretFigure, proposed string) {
	n := len(f.Panels)
	if n == 0 {
		return
	}
	width := plotWidth
	panelWidth := (width - regretLeft - regretRight - float64(float64(n-1)*regretGap)) / float64(n)
	height := regretTop + regretHeight + regretBottom
	colours, dashes := map[string]string{}, map[string]string{}
	var order []string
	for _, pn := range f.Panels {
		for _, l := range pn.Lines {
			if _, ok := colours[l.Algo]; !ok {
				colours[l.Algo], dashes[l.Algo] = lineStyle(len(order))
				order = append(order, l.Algo)
			}
		}
	}
	id := "regret-" + f.Setting.Name
	w.f("<figure id=\"%s\">\n<svg role=\"img\" aria-labelledby=\"%s-t %s-d\" viewBox=\"0 0 %s %s\" width=\"%s\" style=\"max-width:100%%;height:auto\" font-family=\"system-ui,sans-serif\">\n",
		esc(id), esc(id), esc(id), f1(width), f1(height), f1(width))
	w.f("<title id=\"%s-t\">Cumulative regret against round t, setting %s</title>\n<desc id=\"%s-d\">%s</desc>\n", esc(id), esc(f.Setting.Name), esc(id), esc(regretSummary(f)))
	for i, pn := range f.Panels {
		left := regretLeft + float64(float64(i)*(panelWidth+regretGap))
		top := regretTop
		ymax := 0.0
		xmax := 1
		for _, l := range pn.Lines {
			for j, v := range l.Mean {
				ymax = max(ymax, v)
				xmax = max(xmax, l.Rounds[j])
			}
		}
		ymax = niceCeil(ymax)
		x := func(t int) float64 { return left + float64(float64(t)/float64(xmax)*panelWidth) }
		y := func(v float64) float64 { return top + regretHeight - float64(v/ymax*regretHeight) }
		w.f("<g aria-hidden=\"true\"><text x=\"%s\" y=\"%s\" font-size=\"12\" font-weight=\"600\">%s</text>\n", f1(left), f1(top-6), esc(pn.Geometry))
		w.f("<rect x=\"%s\" y=\"%s\" width=\"%s\" height=\"%s\" fill=\"none\" stroke=\"#999\" stroke-width=\"0.6\"/>\n", f1(left), f1(top), f1(panelWidth), f1(regretHeight))
		for _, v := range []float64{0, ymax / 2, ymax} {
			w.f("<text x=\"%s\" y=\"%s\" font-size=\"9\" text-anchor=\"end\">%s</text>\n", f1(left-3), f1(y(v)+3), tick(v))
		}
		for _, t := range []int{0, xmax / 2, xmax} {
			w.f("<text x=\"%s\" y=\"%s\" font-size=\"9\" text-anchor=\"middle\">%d</text>\n", f1(x(t)), f1(top+regretHeight+12), t)
		}
		w.WriteString("</g>\n")
		for _, l := range pn.Lines {
			var pts strings.Builder
			for j, v := range l.Mean {
				if j > 0 {
					pts.WriteByte(' ')
				}
				pts.WriteString(f1(x(l.Rounds[j])) + "," + f1(y(v)))
			}
			width := "1.2"
			if l.Algo == proposed {
				width = "2"
			}
			dash := ""
			if d := dashes[l.Algo]; d != "" {
				dash = ` stroke-dasharray="` + d + `"`
			}
			w.f("<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"%s\"%s points=\"%s\"><title>%s, %s: %s at t = %d</title></polyline>\n",
				colours[l.Algo], width, dash, pts.String(), esc(l.Algo), esc(pn.Geometry), tick(l.Mean[len(l.Mean)-1]), l.Rounds[len(l.Rounds)-1])
		}
	}
	w.f("<text x=\"%s\" y=\"%s\" font-size=\"10\" text-anchor=\"middle\" aria-hidden=\"true\">round t</text>\n", f1(width/2), f1(height-4))
	w.WriteString("</svg>\n<figcaption><span class=\"legend\">")
	for _, a := range order {
		name := esc(a)
		if a == proposed {
			name += " (ours)"
		}
		if dashes[a] != "" {
			name += " (dashed)"
		}
		w.f("<span><span class=\"swatch\" style=\"background:%s\"></span> %s</span> ", colours[a], name)
	}
	w.f("</span><br><strong>Setting %s.</strong> %s, mean over seeds, against round t (%s).", esc(f.Setting.Name), esc(upperFirst(f.Regret)), esc(settingText(f.Setting)))
	if f.Note != "" {
		w.f(" %s", esc(f.Note))
	}
	w.WriteString("</figcaption>\n</figure>\n")
}

// regretSummary is the figure's last points in words, for its text
// alternative.
func regretSummary(f RegretFigure) string {
	var parts []string
	for _, pn := range f.Panels {
		var lines []string
		for _, l := range pn.Lines {
			lines = append(lines, fmt.Sprintf("%s %s", l.Algo, tick(l.Mean[len(l.Mean)-1])))
		}
		parts = append(parts, pn.Geometry+": "+strings.Join(lines, ", "))
	}
	return fmt.Sprintf("Line plot, one panel per front geometry, of the %s against round t; at the last round, %s.", f.Regret, strings.Join(parts, "; "))
}

// niceCeil is the smallest of 1, 2, 2.5, 5 times a power of ten at or
// above v (1 for v ≤ 0): the top of a scale.
func niceCeil(v float64) float64 {
	if !(v > 0) || math.IsInf(v, 0) {
		return 1
	}
	p := 1.0
	for p > v {
		p /= 10
	}
	for p*10 <= v {
		p *= 10
	}
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if float64(m*p) >= v {
			return float64(m * p)
		}
	}
	return float64(10 * p)
}

// tick prints a scale's value with at most 3 significant digits, and no
// exponent.
func tick(v float64) string {
	if math.Abs(v) >= 100 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
