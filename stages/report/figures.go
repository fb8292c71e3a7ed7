package report

import "fmt"

// figureSection writes each figure: the PNG with alt text, its caption,
// and links to its PDF and to the Parquet table of the curves it draws;
// then the cumulative regret of the same algorithms.
func figureSection(w *page, figs []Figure, regret []RegretFigure, proposed string) {
	w.section("figures", "Figures")
	for _, f := range figs {
		p := f.Params
		var panels string
		for i, pn := range p.Panels {
			if i > 0 {
				panels += "; "
			}
			panels += pn.Geometry + ": " + joinNames(pn.Algorithms)
		}
		alt := fmt.Sprintf("Line plot, one panel per front geometry, of HV(S_t) against round t for setting %s (%s), moving average over %d rounds with a %g%% CI band; the algorithms drawn: %s.",
			p.Setting.Name, settingText(p.Setting), p.Window, 100*p.Confidence, panels)
		w.f("<figure id=\"fig-%s\">\n<img src=\"figures/%s\" alt=\"%s\">\n", esc(p.FileBase()), esc(p.PNGName()), esc(alt))
		w.f("<figcaption><strong>Setting %s.</strong> HV(S<sub>t</sub>) trajectories (moving average over %d rounds, %g%% CI band over seeds), %s against the best of each family; %s. "+
			"<a href=\"figures/%s\">PDF</a> · <a href=\"figures/%s\">the curves it draws (Parquet)</a>. "+
			"The PNG is drawn at export from those curves (the one CPU-dependent file of results/).</figcaption>\n</figure>\n",
			esc(p.Setting.Name), p.Window, 100*p.Confidence, esc(proposed), esc(settingText(p.Setting)), esc(p.PDFOutput()), esc(p.CurvesOutput()))
	}
	if len(regret) > 0 {
		w.WriteString("<h3 id=\"regret\">Cumulative regret against round t</h3>\n<p>The regret the tables' Final Regret sums, round by round, for the algorithms of the figures above: " +
			"drawn on this page from their runs' trajectories (no file of results/ holds these curves; their last points are the summary table's values).</p>\n")
		for _, f := range regret {
			regretFigure(w, f, proposed)
		}
	}
	w.end()
}
