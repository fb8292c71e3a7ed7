package report

import (
	"fmt"
	"strings"
)

// The page's first screen: what was reproduced and by which protocol, the
// verdict, the command that checks it (and, in main, the plot of ours
// against the published values).

// reproduced says what was reproduced: the paper, the settings, the
// seeds, and whether the protocol is the paper's.
func reproduced(w *page, p Page) {
	w.WriteString("<p class=\"what\">Reproduced: the experiments of <em>Top-k Pareto Bandits: Hypervolume Regret for Multi-Objective Slate Selection</em>, " +
		"re-run by <code>thv</code> from the stored outputs of its pipeline")
	if p.Tables != nil {
		var settings []string
		seeds := 0
		for _, s := range p.Tables.Params.Settings {
			settings = append(settings, fmt.Sprintf("d = %d (n = %d, k = %d, T = %d, σ = %g)", s.D, s.N, s.K, s.T, s.Sigma))
			seeds = s.Seeds
		}
		w.f(": %s; %d seeds; %d algorithms on %d front geometries", esc(strings.Join(settings, ", ")), seeds,
			len(p.Tables.Params.Algorithms), len(p.Tables.Params.Geometries))
	}
	w.WriteString(".</p>\n")
	d := p.Protocol.Described
	if d.IsPaper() {
		w.WriteString("<p class=\"protocol same\"><strong>Protocol: the paper's</strong> — every value as the paper states it (the embedded params.yaml, no profile, no override).</p>\n")
		return
	}
	w.f("<p class=\"protocol modified\"><strong>Protocol: modified</strong> — %d value", len(d.Differs))
	if len(d.Differs) != 1 {
		w.WriteString("s")
	}
	w.WriteString(" differ from the paper's: ")
	for i, x := range d.Differs {
		if i > 0 {
			w.WriteString(", ")
		}
		w.f("<code>%s</code> %s (paper %s)", esc(x.Key), esc(x.Ours), esc(x.Paper))
	}
	w.WriteString(".")
	if why := d.Incomparability(); why != "" {
		w.f(" Published values it cannot reproduce are not judged: %s.", esc(why))
	}
	w.WriteString("</p>\n")
}

// verdict writes the headline, the one sentence thv prints too.
func verdict(w *page, p Page) {
	if p.Verdict == nil {
		w.WriteString("<p class=\"verdict\"><strong>Verdict:</strong> none — this protocol has no comparison with the paper.</p>\n")
		return
	}
	w.f("<p class=\"verdict\"><strong>Verdict:</strong> %s <a href=\"#comparison\">Every value</a>, <a href=\"#claims\">the claims</a>.</p>\n", esc(p.Verdict.Sentence()))
}

// check writes the commands that check these results.
func check(w *page) {
	w.WriteString("<p class=\"check\"><strong>Check it yourself</strong> with a <code>thv</code> you built: in the project, " +
		"<code>thv verify</code> re-executes every task of the lock and compares every output bit for bit; a bundle of it, " +
		"<code>thv verify-bundle FILE.tar.gz</code>, does the same from the bundle alone, with a <code>thv</code> built from code you trust.</p>\n")
}
