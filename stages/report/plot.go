package report

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"thv/stages/compare"
	"thv/stages/formats"
)

// The plot of ours against the published values: one panel per (setting,
// metric), one column per published value (algorithm by algorithm, each
// over the geometries), on the scale of the relative difference from the
// published value: the paper's value is the zero line with its CI as a
// grey band, ours the bar of the interval its verdict uses, coloured by
// that verdict. It is SVG written here, with every coordinate rounded to
// a tenth and every product rounded on its own (no fused multiply-add):
// verify-bundle compares the page byte for byte across machines.

// plotColours are the verdicts' colours in the plot, told apart without
// hue too (blue and orange, as a reader with a colour vision deficiency
// sees them), each named in the legend beside it.
var plotColours = map[string]string{"agrees": "#1f5fbf", "differs": "#c2410c", "not comparable": "#7a7a7a", "missing": "#a06c00"}

// Plot geometry, in SVG units.
const (
	plotWidth   = 1200.0
	plotLeft    = 46.0 // room for the scale's labels
	plotGap     = 40.0 // between the two columns of panels
	panelHeight = 84.0 // of the drawing area
	panelTitle  = 18.0 // above it
	labelHeight = 54.0 // the algorithms' names under the last row
	legendRoom  = 6.0  // below everything
	relClamp    = 1.0  // the scale runs from −100% to +100%
	barWidth    = 5.0  // our interval
	paperWidth  = 7.0  // the published value's tick and CI band
)

// plotPanel is the published values of one (setting, metric).
type plotPanel struct {
	setting, metric string
	rows            []formats.Comparison
}

// plot writes the figure: the SVG and its legend with the counts.
func plot(w *page, p Page) {
	var panels []*plotPanel
	var algos, geometries, metrics []string
	for _, r := range p.Judged {
		if !slices.Contains(algos, r.Algorithm) {
			algos = append(algos, r.Algorithm)
		}
		if !slices.Contains(geometries, r.Geometry) {
			geometries = append(geometries, r.Geometry)
		}
		if !slices.Contains(metrics, r.Metric) {
			metrics = append(metrics, r.Metric)
		}
		i := slices.IndexFunc(panels, func(x *plotPanel) bool { return x.setting == r.Setting && x.metric == r.Metric })
		if i < 0 {
			panels = append(panels, &plotPanel{setting: r.Setting, metric: r.Metric})
			i = len(panels) - 1
		}
		panels[i].rows = append(panels[i].rows, r)
	}
	cols := len(metrics)
	var settings []string
	for _, x := range panels {
		if !slices.Contains(settings, x.setting) {
			settings = append(settings, x.setting)
		}
	}
	rowsOfPanels := len(settings)
	height := float64(float64(rowsOfPanels)*(panelTitle+panelHeight+8)) + labelHeight + legendRoom
	panelWidth := (plotWidth - plotLeft - float64(float64(cols-1)*plotGap)) / float64(cols)
	columns := len(algos) * len(geometries)
	step := panelWidth / float64(columns+len(algos)-1) // a column per value, a gap between algorithms

	what := "this run's one instance per setting and geometry: ours is the mean over seeds with its 95% CI"
	if p.Across > 0 {
		what = fmt.Sprintf("%d instances: ours is the band of our instances' means that the tolerance accepts", p.Across)
	}
	w.section("plot", "Ours against the published values")
	w.f("<figure class=\"plot\">\n<svg role=\"img\" aria-labelledby=\"plot-t plot-d\" viewBox=\"0 0 %s %s\" width=\"%s\" style=\"max-width:100%%;height:auto\" font-family=\"system-ui,sans-serif\">\n",
		f1(plotWidth), f1(height), f1(plotWidth))
	w.f("<title id=\"plot-t\">Ours against the paper's %d published values</title>\n", len(p.Judged))
	w.f("<desc id=\"plot-d\">One panel per setting and metric; in each, one column per published value (%s, each over %s). "+
		"The published value is the zero line, its 95%% CI the grey band; our interval is the bar, as its relative difference from the published value, coloured by the verdict. "+
		"Judged across %s. Every value is in the comparison table below.</desc>\n",
		esc(joinNames(algos)), esc(joinNames(geometries)), esc(what))
	for _, x := range panels {
		row := slices.Index(settings, x.setting)
		col := slices.Index(metrics, x.metric)
		left := plotLeft + float64(float64(col)*(panelWidth+plotGap))
		top := float64(float64(row)*(panelTitle+panelHeight+8)) + panelTitle
		mid := top + panelHeight/2
		half := panelHeight / 2
		y := func(rel float64) float64 { return mid - float64(clampRel(rel)*half) }
		w.f("<g aria-hidden=\"true\"><text x=\"%s\" y=\"%s\" font-size=\"13\" font-weight=\"600\">%s · %s</text>\n", f1(left), f1(top-5), esc(x.setting), esc(metricWords(x.metric)))
		for _, g := range []float64{-1, -0.5, 0, 0.5, 1} {
			dash := ` stroke-dasharray="2 3"`
			if g == 0 {
				dash = ""
			}
			w.f("<line x1=\"%s\" x2=\"%s\" y1=\"%s\" y2=\"%s\" stroke=\"#999\" stroke-width=\"0.6\"%s/>\n", f1(left), f1(left+panelWidth), f1(y(g)), f1(y(g)), dash)
			if col == 0 {
				w.f("<text x=\"%s\" y=\"%s\" font-size=\"9\" text-anchor=\"end\">%s</text>\n", f1(left-4), f1(y(g)+3), percentLabel(g))
			}
		}
		w.WriteString("</g>\n")
		for _, r := range x.rows {
			a, g := slices.Index(algos, r.Algorithm), slices.Index(geometries, r.Geometry)
			cx := left + float64(float64(a*(len(geometries)+1)+g)*step) + float64(step/2)
			v := compare.VerdictWord(r)
			colour := plotColours[v]
			w.f("<g><title>%s</title>", esc(cellText(r)))
			if pc := relative(r.Published+r.PublishedCI, r.Published); !math.IsNaN(pc) && pc > 0 {
				w.f("<rect x=\"%s\" y=\"%s\" width=\"%s\" height=\"%s\" fill=\"#d4d4d4\"/>", f1(cx-paperWidth/2), f1(y(pc)), f1(paperWidth), f1(y(-pc)-y(pc)))
			}
			w.f("<line x1=\"%s\" x2=\"%s\" y1=\"%s\" y2=\"%s\" stroke=\"#111\" stroke-width=\"1.2\"/>", f1(cx-paperWidth/2), f1(cx+paperWidth/2), f1(y(0)), f1(y(0)))
			lo, hi := relative(r.Low, r.Published), relative(r.High, r.Published)
			switch {
			case r.Missing || math.IsNaN(lo) || math.IsNaN(hi):
				w.f("<circle cx=\"%s\" cy=\"%s\" r=\"2.5\" fill=\"none\" stroke=\"%s\"/>", f1(cx), f1(y(0)), colour)
			default:
				top, bottom := y(hi), y(lo)
				if bottom-top < 1.5 { // a point: still visible
					top, bottom = top-0.75, bottom+0.75
				}
				w.f("<rect x=\"%s\" y=\"%s\" width=\"%s\" height=\"%s\" fill=\"%s\"/>", f1(cx-barWidth/2), f1(top), f1(barWidth), f1(bottom-top), colour)
			}
			w.WriteString("</g>\n")
		}
		if row == rowsOfPanels-1 {
			w.WriteString("<g aria-hidden=\"true\">")
			for a, name := range algos {
				cx := left + float64(float64(a*(len(geometries)+1))*step) + float64(float64(float64(len(geometries))*step)/2)
				w.f("<text font-size=\"9\" text-anchor=\"end\" transform=\"translate(%s %s) rotate(-35)\">%s</text>", f1(cx), f1(top+panelHeight+10), esc(name))
			}
			w.WriteString("</g>\n")
		}
	}
	w.WriteString("</svg>\n")
	counts := map[string]int{}
	for _, r := range p.Judged {
		counts[compare.VerdictWord(r)]++
	}
	w.WriteString("<figcaption><span class=\"legend\">")
	for _, v := range []string{"agrees", "differs", "not comparable", "missing"} {
		if counts[v] == 0 && v != "agrees" && v != "differs" {
			continue
		}
		w.f("<span><span class=\"swatch\" style=\"background:%s\"></span> %s: %d</span> ", plotColours[v], v, counts[v])
	}
	w.f("</span><br>Per published value: the black tick is the paper's value and the grey band its 95%% CI; the bar is ours (%s), drawn as its difference from the paper's value relative to it, "+
		"so the scale reads the same for HV<sub>last100</sub> and the regret; a bar cut at ±100%% goes beyond. Columns: %s, each over %s. "+
		"Hover a column for its numbers; <a href=\"#comparison\">the comparison</a> lists them all.</figcaption>\n</figure>\n",
		esc(what), esc(joinNames(algos)), esc(joinNames(geometries)))
	w.end()
}

// relative is (v − published) / |published|, NaN for a value that is not
// a number or a published value of 0.
func relative(v, published float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) || published == 0 {
		return math.NaN()
	}
	return (v - published) / math.Abs(published)
}

func clampRel(r float64) float64 { return max(-relClamp, min(relClamp, r)) }

// f1 prints an SVG coordinate with one decimal.
func f1(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

func percentLabel(g float64) string {
	switch {
	case g > 0:
		return fmt.Sprintf("+%.0f%%", 100*g)
	case g < 0:
		return fmt.Sprintf("−%.0f%%", -100*g)
	}
	return "paper"
}

// metricWords names a metric of the reference as the page does.
func metricWords(m string) string {
	switch m {
	case compare.MetricHV:
		return "HV_last100 (higher is better)"
	case compare.MetricRegret:
		return "final regret (lower is better)"
	}
	return m
}

// cellText is one value's numbers, for its tooltip.
func cellText(r formats.Comparison) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s, %s, %s, %s: published %s", r.Setting, r.Algorithm, r.Geometry, r.Metric, compare.Published(r.Published, r.PublishedCI))
	if !r.Missing {
		fmt.Fprintf(&b, "; ours %s", compare.Estimate(r.Ours, r.OursCI))
	}
	b.WriteString(" — " + compare.VerdictWord(r))
	if r.NotComparable != "" {
		b.WriteString(": " + r.NotComparable)
	}
	return b.String()
}
