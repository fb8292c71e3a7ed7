package report

import (
	"fmt"
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
	{"incomparable", "≠", "not comparable", "na"},
}

func verdictOf(r formats.Comparison) int {
	switch {
	case r.Missing:
		return 2
	case r.NotComparable != "":
		return 3
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
	w.f("<p>This run's own comparison (the compare task of the lock), judging %s: <strong>%d of %d published values agree</strong>", esc(c.Params.Protocol.Name()), n.Agree, n.Judged)
	if n.NotComparable > 0 {
		w.f(", %d not comparable", n.NotComparable)
	}
	w.f(", %d missing.</p>\n", n.Missing)
	t := ref.Tolerance
	w.f("<p>Reference: %s. <em>Ours</em> is our mean over the seeds with its 95%% confidence interval; <em>published</em>, the paper's as printed. "+
		"<em>CIs overlap</em>: our interval and the published one meet; <em>within %g%%</em>: ours is within %g%% of the published value; "+
		"<em>percentile</em>: where the published value falls among our per-seed outcomes (0: below all, 100: above all). ",
		esc(ref.Source), 100*t.Relative, 100*t.Relative)
	if t.Applies == "percentile" {
		w.f("A value <strong>agrees</strong> when its percentile lies in [%g, %g]. ", t.Percentile[0], t.Percentile[1])
	} else {
		w.f("A value <strong>agrees</strong> when the CIs overlap or it is within %g%%. ", 100*t.Relative)
	}
	w.WriteString("The same rows are in <a href=\"compare.md\">compare.md</a> and <a href=\"comparison.parquet\">comparison.parquet</a>.</p>\n")
	if c.Params.OneInstance {
		w.WriteString("<p>The protocol draws one instance per (setting, geometry), as the paper does: its seeds vary only the noise, so these verdicts use the CIs and the relative tolerance; " +
			"the judgement across many instances is the readings sweep's (<code>thv readings</code>).</p>\n")
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
	w.f("</div>\n<div class=\"wrap\"><table>\n<caption>Every published value beside ours, the difference, the tolerance tests and the verdict</caption>\n"+
		"<thead><tr><th scope=\"col\">Setting</th><th scope=\"col\">Algorithm</th><th scope=\"col\">Geometry</th><th scope=\"col\">Metric</th>"+
		"<th scope=\"col\">Ours: mean ± 95%% CI</th><th scope=\"col\">Published: mean ± 95%% CI</th><th scope=\"col\">Ours − published</th><th scope=\"col\">Relative difference</th>"+
		"<th scope=\"col\">CIs overlap</th><th scope=\"col\">Within %g%%</th><th scope=\"col\">Percentile of the published value among ours</th><th scope=\"col\">Verdict</th></tr></thead>\n<tbody>\n", 100*t.Relative)
	for _, r := range c.Rows {
		v := verdicts[verdictOf(r)]
		w.f("<tr data-s=\"%d\" data-a=\"%d\" data-v=\"%s\"><td>%s</td><th scope=\"row\">%s</th><td>%s</td><td>%s</td>",
			slices.Index(settings, r.Setting), slices.Index(algos, r.Algorithm), v.id, esc(r.Setting), esc(r.Algorithm), esc(r.Geometry), esc(r.Metric))
		switch {
		case r.Missing:
			w.f("<td class=\"n\">—</td><td class=\"n\">%s</td><td></td><td></td><td></td><td></td><td></td>", esc(compare.Published(r.Published, r.PublishedCI)))
		case r.NotComparable != "":
			w.f("<td class=\"n\">%s</td><td class=\"n\">%s</td><td></td><td></td><td></td><td></td><td></td>", esc(compare.Estimate(r.Ours, r.OursCI)), esc(compare.Published(r.Published, r.PublishedCI)))
		default:
			w.f("<td class=\"n\">%s</td><td class=\"n\">%s</td><td class=\"n\">%s</td><td class=\"n\">%s</td><td>%s</td><td>%s</td><td class=\"n\">%s</td>",
				esc(compare.Estimate(r.Ours, r.OursCI)), esc(compare.Published(r.Published, r.PublishedCI)), plusMinus(compare.Diff(r.Diff, r.OursCI)), plusMinus(compare.Relative(r.RelDiff)),
				yes(r.WithinCI), yes(r.WithinRel), esc(compare.Percentile(r.Percentile)))
		}
		word := v.word
		if r.NotComparable != "" {
			word += ": " + r.NotComparable
		}
		w.f("<td class=\"%s\"><span aria-hidden=\"true\">%s </span>%s</td></tr>\n", v.class, v.mark, esc(word))
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

func yes(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// claims writes the paper's claims with their numbers.
func claims(w *page, c *Comparison) {
	w.section("claims", "Claims")
	w.f("<p>The paper's claims, checked against this run's results (<a href=\"claims.parquet\">claims.parquet</a>). A claim of being best counts a tie as best: %s.</p>\n<ul class=\"claims\">\n", esc(compare.TieRule))
	for _, cl := range c.Claims {
		v, word := verdicts[0], "holds"
		switch {
		case cl.NotComparable != "":
			v, word = verdicts[3], "not judged"
		case !cl.Holds:
			v, word = verdicts[1], "fails"
		}
		w.f("<li><span class=\"%s\"><span aria-hidden=\"true\">%s </span><strong>%s</strong></span> <code>%s</code> — %s <br>%s</li>\n",
			v.class, v.mark, word, esc(cl.ID), esc(cl.Text), esc(compare.ClaimDetail(cl)))
	}
	w.WriteString("</ul>\n")
	w.end()
}
