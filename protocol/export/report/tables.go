package report

import (
	"fmt"
	"strings"

	"thv/stages/formats"
	"thv/stages/tables"
)

// paperTables writes the paper's tables from the tables task's inputs:
// per setting the summary (HV_last and final regret, mean ± CI, the
// best of each column in bold, as the LaTeX), then η*, the statistical
// tests and the benchmarks.
func paperTables(w *page, t *Tables) {
	w.section("tables", "The paper's tables")
	w.f("<p>The same numbers as <a href=\"tables/all.tex\">tables/all.tex</a>: means over seeds with their %g%% CI half-width (Student t).</p>\n", 100*t.Params.Confidence)
	for _, s := range t.Params.Settings {
		summaryTable(w, t, s)
	}
	etaTable(w, t)
	testsTable(w, t)
	benchmarksTable(w, t)
	w.end()
}

func title(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// algoName is an algorithm's row header: "(ours)" after the proposed one.
func algoName(a tables.AlgoInfo, ours bool) string {
	if ours {
		return esc(a.Name) + " (ours)"
	}
	return esc(a.Name)
}

// abbrev is a geometry's column head in the wide η* table, as the LaTeX's.
func abbrev(g string) string {
	short := map[string]string{"clusters": "Clust.", "concave": "Conc.", "convex": "Conv.", "linear": "Lin."}[g]
	if short == "" {
		return esc(g)
	}
	return "<abbr title=\"" + esc(g) + "\">" + short + "</abbr>"
}

func fidelity(f string) string {
	switch f {
	case "faithful":
		return sr("●", "faithful")
	case "extension":
		return sr("○", "extension")
	}
	return sr("—", "not applicable")
}

// hvLast names the metric hv_last as the tables do: HV_last<window>, the
// paper's HV_last100 at its window.
func hvLast(p tables.Params) string { return fmt.Sprintf("HV<sub>last%d</sub>", p.HVWindow) }

func summaryTable(w *page, t *Tables, s formats.Setting) {
	p, cells := t.Params, t.Cells[s.Name]
	w.f("<h3 id=\"summary-%s\">Summary, %s</h3>\n<div class=\"wrap\"><table>\n", esc(s.Name), esc(s.Name))
	w.f("<caption>%s (<a href=\"tables/summary_%s.tex\">LaTeX</a>). %s: mean HV(S<sub>t</sub>) over the last %d rounds; "+
		"final regret: cumulative α-regret below αV; mean ± %g%% CI over seeds; best of each column in bold. "+
		"Fid.: ● faithful top-k adaptation, ○ extension.</caption>\n", esc(settingText(s)), esc(s.Name), hvLast(p), p.HVWindow, 100*p.Confidence)
	w.WriteString("<thead><tr><th scope=\"col\" rowspan=\"2\">Algorithm</th><th scope=\"col\" rowspan=\"2\">Fid.</th>")
	for _, g := range p.Geometries {
		w.f("<th scope=\"colgroup\" colspan=\"2\">%s</th>", esc(title(g)))
	}
	w.WriteString("</tr>\n<tr>")
	for range p.Geometries {
		w.f("<th scope=\"col\">%s</th><th scope=\"col\">Final regret</th>", hvLast(p))
	}
	w.WriteString("</tr></thead>\n<tbody>\n")
	bestHV, bestRegret := tables.BestAsPrinted(p, cells)
	for i, a := range p.Algorithms {
		w.f("<tr><th scope=\"row\">%s</th><td>%s</td>", algoName(a, i == 0), fidelity(a.Fidelity))
		for _, g := range p.Geometries {
			c, ok := formats.CellOf(cells, g, a.Name)
			if !ok {
				w.WriteString("<td class=\"n\">n/a</td><td class=\"n\">n/a</td>")
				continue
			}
			estimate(w, c.HVLast, tables.HVDigits, tables.HVCIDigits, bestHV[g])
			estimate(w, c.RegretPos, tables.RegretDigits, tables.RegretCIDigits, bestRegret[g])
		}
		w.WriteString("</tr>\n")
	}
	w.WriteString("</tbody>\n</table></div>\n")
}

// estimate writes a mean ± CI cell, bold (and said so) when its printed
// mean is the column's best.
func estimate(w *page, e formats.Estimate, digits, ciDigits int, best string) {
	mean := tables.Fixed(e.Mean, digits)
	if mean == best {
		mean = "<strong class=\"best\">" + mean + "</strong><span class=\"sr\"> (best)</span>"
	}
	w.f("<td class=\"n\">%s <span class=\"ci\">%s</span></td>", mean, notation.CI(e.HalfWidth, ciDigits))
}

func etaTable(w *page, t *Tables) {
	p := t.Params
	w.WriteString("<h3 id=\"eta\">η* by grid search</h3>\n<div class=\"wrap\"><table>\n")
	w.f("<caption>The confidence parameter η* per algorithm, setting and front geometry, selected by grid search "+
		"(maximising mean %s; the smallest η on ties) (<a href=\"tables/eta.tex\">LaTeX</a>).</caption>\n", hvLast(p))
	w.WriteString("<thead><tr><th scope=\"col\" rowspan=\"2\">Algorithm</th>")
	for _, s := range p.Settings {
		w.f("<th scope=\"colgroup\" colspan=\"%d\">d = %d</th>", len(p.Geometries), s.D)
	}
	w.WriteString("</tr>\n<tr>")
	for range p.Settings {
		for _, g := range p.Geometries {
			w.f("<th scope=\"col\">%s</th>", abbrev(g))
		}
	}
	w.WriteString("</tr></thead>\n<tbody>\n")
	for i, a := range p.Algorithms {
		if !a.UsesEta {
			continue
		}
		w.f("<tr><th scope=\"row\">%s</th>", algoName(a, i == 0))
		for _, s := range p.Settings {
			for _, g := range p.Geometries {
				if c, ok := formats.CellOf(t.Cells[s.Name], g, a.Name); ok {
					w.f("<td class=\"n\">%g</td>", c.EtaStar)
				} else {
					w.WriteString("<td class=\"n\">n/a</td>")
				}
			}
		}
		w.WriteString("</tr>\n")
	}
	w.WriteString("</tbody>\n</table></div>\n")
}

func testsTable(w *page, t *Tables) {
	p := t.Params
	proposed := ""
	if len(p.Algorithms) > 0 {
		proposed = p.Algorithms[0].Name
	}
	w.WriteString("<h3 id=\"tests\">Statistical tests</h3>\n<div class=\"wrap\"><table>\n")
	w.f("<caption>%s against the best baseline of each setting and geometry, paired by seed (<a href=\"tables/tests.tex\">LaTeX</a>). "+
		"Δ: mean difference of %s (%s − baseline); percentile bootstrap 95%% CI; paired Cohen's d; "+
		"one-sided Wilcoxon signed-rank test, with the method used; wins: seeds on which %s is better.</caption>\n", esc(proposed), hvLast(p), esc(proposed), esc(proposed))
	w.WriteString("<thead><tr><th scope=\"col\">Setting</th><th scope=\"col\">Geometry</th><th scope=\"col\">Baseline</th><th scope=\"col\">Δ</th>" +
		"<th scope=\"col\">Bootstrap 95% CI</th><th scope=\"col\">Cohen's d</th><th scope=\"col\">Wilcoxon p</th><th scope=\"col\">Test</th><th scope=\"col\">Wins</th></tr></thead>\n<tbody>\n")
	for _, s := range p.Settings {
		for _, r := range t.Tests[s.Name] {
			w.f("<tr><th scope=\"row\">d = %d</th><td>%s</td><td>%s</td><td class=\"n\">%s</td><td class=\"n\">[%s, %s]</td><td class=\"n\">%s</td><td class=\"n\">%s</td><td>%s</td><td class=\"n\">%d/%d</td></tr>\n",
				s.D, esc(r.Geometry), esc(r.Baseline), notation.Signed(r.Delta, 4), notation.Signed(r.CILow, 4), notation.Signed(r.CIHigh, 4), notation.Cohen(r.CohensD), pValue(r.WilcoxonP), esc(r.WilcoxonMethod), r.Wins, r.N)
		}
	}
	w.WriteString("</tbody>\n</table></div>\n")
}

func benchmarksTable(w *page, t *Tables) {
	p := t.Params
	if len(p.Algorithms) == 0 {
		return
	}
	proposed := p.Algorithms[0].Name
	w.WriteString("<h3 id=\"benchmarks\">Benchmarks</h3>\n<div class=\"wrap\"><table>\n")
	w.f("<caption>The exact benchmark V* (best size-k subset) against the paper's proxy HV(G*), means over seeds, and %s's exact cumulative regret against V* (mean ± CI) (<a href=\"tables/benchmarks.tex\">LaTeX</a>).</caption>\n", esc(proposed))
	w.f("<thead><tr><th scope=\"col\">Setting</th><th scope=\"col\">Front</th><th scope=\"col\">V*</th><th scope=\"col\">HV(G*)</th><th scope=\"col\">HV(G*)/V*</th><th scope=\"col\">%s Σ<sub>t</sub>(V* − HV(S<sub>t</sub>))</th></tr></thead>\n<tbody>\n", esc(proposed))
	for _, s := range p.Settings {
		for _, g := range p.Geometries {
			c, ok := formats.CellOf(t.Cells[s.Name], g, proposed)
			if !ok {
				continue
			}
			w.f("<tr><th scope=\"row\">d = %d</th><td>%s</td><td class=\"n\">%s</td><td class=\"n\">%s</td><td class=\"n\">%s</td><td class=\"n\">%s <span class=\"ci\">%s</span></td></tr>\n",
				s.D, esc(g), tables.Fixed(c.VStar, 4), tables.Fixed(c.HVGreedy, 4), tables.Fixed(c.HVGreedy/c.VStar, 4), tables.Fixed(c.RegretExact.Mean, 1), notation.CI(c.RegretExact.HalfWidth, 1))
		}
	}
	w.WriteString("</tbody>\n</table></div>\n")
}
