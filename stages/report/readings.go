package report

import (
	"fmt"
	"math"
)

// readings writes the readings sweep's summary: per reading of the
// paper's open points, how many published values and claims agree.
func readings(w *page, r *Readings) {
	w.section("readings", "Readings sweep")
	w.f("<p>The paper's open readings, each run as its own protocol by <code>thv readings</code> (<a href=\"readings.md\">readings.md</a>, "+
		"<a href=\"readings.parquet\">readings.parquet</a>; %s), each reading varying %s. Written by that command into results/, not by this export: "+
		"this summary is of that file as it was when the page was written. Neither <code>thv verify</code> nor <code>thv verify-bundle</code> re-executes the sweep: "+
		"a bundle carries its table, not its tasks, so there it is the author's word.</p>\n", esc(r.Tolerance), esc(r.Protocol))
	if r.Other {
		w.WriteString("<p><strong>This sweep varied another protocol than this page's</strong> (another profile, params file or override): no verdict of this page comes from it.</p>\n")
	}
	w.WriteString("<div class=\"wrap\"><table>\n<caption>Published values and claims that agree, per reading</caption>\n" +
		"<thead><tr><th scope=\"col\">Reading</th><th scope=\"col\">Overrides</th><th scope=\"col\">Values agreeing</th><th scope=\"col\">HV<sub>last100</sub></th>" +
		"<th scope=\"col\">Final regret</th><th scope=\"col\">Under (a)</th><th scope=\"col\">Claims holding</th><th scope=\"col\">CI ratio (HV)</th><th scope=\"col\">Instances</th></tr></thead>\n<tbody>\n")
	for _, x := range r.Rows {
		inst := "one"
		if x.InstanceSeeds > 0 {
			inst = fmt.Sprint(x.InstanceSeeds)
		}
		w.f("<tr><th scope=\"row\">%s</th><td><code>%s</code></td><td class=\"n\">%d/%d</td><td class=\"n\">%d</td><td class=\"n\">%d</td><td class=\"n\">%d</td><td class=\"n\">%d/%d</td><td class=\"n\">%s</td><td class=\"n\">%s</td></tr>\n",
			esc(x.Reading), esc(x.Set), x.Agree, x.Values, x.AgreeHV, x.AgreeRegret, x.AgreeCI, x.ClaimsHold, x.Claims, ratio(x.CIRatioHV), inst)
	}
	w.WriteString("</tbody>\n</table></div>\n")
	w.end()
}

func ratio(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "—"
	}
	return fmt.Sprintf("%.2g", v)
}
