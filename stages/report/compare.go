package report

import (
	"fmt"
	"math"
	"slices"

	"thv/stages/compare"
	"thv/stages/formats"
)

// verdicts are the comparison's verdicts: the filter's ids, the word shown
// beside the colour, and the class that colours it.
var verdicts = []struct{ id, mark, word, class string }{
	{"agrees", "✓", "agrees", "ok"},
	{"differs", "✗", "differs", "bad"},
	{"missing", "–", "missing", "none"},
}

func verdictOf(r formats.Comparison) int {
	switch {
	case r.Missing:
		return 2
	case r.Agrees:
		return 0
	}
	return 1
}

// filterValues are the settings and algorithms of the comparison, in the
// order of its rows.
func filterValues(c *Comparison) (settings, algos []string) {
	for _, r := range c.Rows {
		if !slices.Contains(settings, r.Setting) {
			settings = append(settings, r.Setting)
		}
		if !slices.Contains(algos, r.Algorithm) {
			algos = append(algos, r.Algorithm)
		}
	}
	return settings, algos
}

// comparison writes every published value beside ours, with its verdict
// and the tolerance used, filterable by setting, algorithm and verdict
// (style.go: radio buttons and CSS, no script).
func comparison(w *page, c *Comparison) {
	w.section("comparison", "Comparison with the paper")
	ref := c.Params.Reference
	if c.Params.OneInstance {
		ref = ref.OneInstance() // as the compare stage judges: tolerance (a)
	}
	n := compare.Count(c.Rows, c.Claims)
	w.f("<p class=\"counts\"><strong>%d of %d published values agree</strong>, %d missing; %d of %d claims hold.</p>\n", n.Agree, n.Values, n.Missing, n.Hold, n.Claims)
	t := ref.Tolerance
	w.f("<p>Reference: %s. The verdicts use tolerance <strong>%s</strong>: (a) <em>CI∪</em> — our mean and the published one within the union of both 95%% CIs, "+
		"or <em>rel</em> — within %g%% of the published value; (b) <em>pct</em> — the percentile of the published value among our per-seed outcomes inside [%g, %g]. "+
		"The same rows are in <a href=\"compare.md\">compare.md</a> and <a href=\"comparison.parquet\">comparison.parquet</a>.</p>\n",
		esc(ref.Source), esc(t.Applies), 100*t.Relative, t.Percentile[0], t.Percentile[1])
	if c.Params.OneInstance {
		w.WriteString("<p>The protocol draws one instance per (setting, geometry): its seeds vary only the noise, so the verdicts use (a); " +
			"(b) across many instances is the readings sweep's (<code>thv readings</code>).</p>\n")
	}
	settings, algos := filterValues(c)
	w.WriteString("<div class=\"filters\"><p>Show only (works without JavaScript):</p>\n")
	radios(w, "fs", "Setting", settings)
	radios(w, "fa", "Algorithm", algos)
	var words []string
	for _, v := range verdicts {
		words = append(words, v.word)
	}
	radios(w, "fv", "Verdict", words)
	w.WriteString("</div>\n<div class=\"wrap\"><table>\n<caption>Every published value beside ours (mean ± CI), the difference, the tolerance tests and the verdict</caption>\n")
	w.WriteString("<thead><tr><th scope=\"col\">Setting</th><th scope=\"col\">Algorithm</th><th scope=\"col\">Geometry</th><th scope=\"col\">Metric</th>" +
		"<th scope=\"col\">Ours</th><th scope=\"col\">Published</th><th scope=\"col\">Diff</th><th scope=\"col\">Rel</th>" +
		"<th scope=\"col\">CI∪</th><th scope=\"col\">rel</th><th scope=\"col\">pct</th><th scope=\"col\">Verdict</th></tr></thead>\n<tbody>\n")
	for _, r := range c.Rows {
		v := verdicts[verdictOf(r)]
		w.f("<tr data-s=\"%d\" data-a=\"%d\" data-v=\"%s\"><td>%s</td><th scope=\"row\">%s</th><td>%s</td><td>%s</td>",
			slices.Index(settings, r.Setting), slices.Index(algos, r.Algorithm), v.id, esc(r.Setting), esc(r.Algorithm), esc(r.Geometry), esc(r.Metric))
		if r.Missing {
			w.f("<td class=\"n\">—</td><td class=\"n\">%s</td><td></td><td></td><td></td><td></td><td></td>", short(r.Published, r.PublishedCI))
		} else {
			w.f("<td class=\"n\">%s</td><td class=\"n\">%s</td><td class=\"n\">%s</td><td class=\"n\">%s%%</td><td>%s</td><td>%s</td><td class=\"n\">%s</td>",
				short(r.Ours, r.OursCI), short(r.Published, r.PublishedCI), plusMinus(fmt.Sprintf("%+.4g", r.Diff)), plusMinus(fmt.Sprintf("%+.1f", 100*r.RelDiff)),
				yes(r.WithinCI), yes(r.WithinRel), pct(r.Percentile))
		}
		w.f("<td class=\"%s\"><span aria-hidden=\"true\">%s </span>%s</td></tr>\n", v.class, v.mark, v.word)
	}
	w.WriteString("</tbody>\n</table></div>\n")
	w.end()
}

// radios writes one group of the filter: "all" and each value.
func radios(w *page, id, legend string, values []string) {
	w.f("<fieldset><legend>%s</legend>\n<label><input type=\"radio\" name=\"%s\" id=\"%s-all\" checked> all</label>\n", legend, id, id)
	for i, v := range values {
		key := fmt.Sprint(i)
		if id == "fv" {
			key = verdicts[i].id
		}
		w.f("<label><input type=\"radio\" name=\"%s\" id=\"%s-%s\"> %s</label>\n", id, id, key, esc(v))
	}
	w.WriteString("</fieldset>\n")
}

// plusMinus writes a sign as a true minus.
func plusMinus(s string) string {
	if len(s) > 0 && s[0] == '-' {
		return "−" + s[1:]
	}
	return s
}

// yes and pct print as compare.md does (stages/compare's, unexported:
// exporting them would change the compare task's key).
func yes(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func pct(p float64) string {
	if math.IsNaN(p) {
		return "—"
	}
	return fmt.Sprintf("%.0f", p)
}

// claims writes the paper's claims with their numbers.
func claims(w *page, c *Comparison) {
	w.section("claims", "Claims")
	w.WriteString("<p>The paper's claims, checked against our results (<a href=\"claims.parquet\">claims.parquet</a>).</p>\n<ul class=\"claims\">\n")
	for _, cl := range c.Claims {
		v := verdicts[0]
		word := "holds"
		if !cl.Holds {
			v, word = verdicts[1], "fails"
		}
		w.f("<li><span class=\"%s\"><span aria-hidden=\"true\">%s </span><strong>%s</strong></span> <code>%s</code> — %s <br>%s</li>\n",
			v.class, v.mark, word, esc(cl.ID), esc(cl.Text), esc(cl.Detail))
	}
	w.WriteString("</ul>\n")
	w.end()
}
