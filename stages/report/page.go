package report

import (
	"fmt"
	"strings"

	"thv/stages/compare"
	"thv/stages/figures"
	"thv/stages/formats"
	"thv/stages/tables"
)

// Page is everything the page shows. Every field but Run comes from the
// protocol, the lock and the stored outputs (and, for Readings and the
// judgement across instances, from what thv readings wrote beside them),
// so that the same results give the same bytes.
type Page struct {
	Profile  string
	Proposed string // the proposed method (protocol.Config.Proposed)
	Protocol Protocol
	Lock     Lock
	Run      Run
	Tables   *Tables      // nil: no tables task
	Compare  *Comparison  // nil: no compare task
	Figures  []Figure     // in setting order
	Readings *Readings    // nil: thv readings has not written results/readings.parquet
	Files    []ResultFile // the other files of results/, linked from the page
	// Verdict is the headline (compare.Verdict); nil without a compare
	// task.
	Verdict *compare.Verdict
	// Judged are the published values as the headline judges them, one
	// row each, for the plot: the judgement across instances when the
	// headline is that one (Across, the instances), else the compare
	// task's rows.
	Judged []formats.Comparison
	Across int
	// Regret is the cumulative regret of the figures' algorithms, per
	// setting (nil: none drawn).
	Regret []RegretFigure
}

// Protocol is the protocol the results come from.
type Protocol struct {
	Digest  string     // of its values (Values), "sha256:…"
	Differs []Override // its values that differ from the paper's, every one
	// Described is how the verdicts name it (compare.Protocol): the
	// differing values in words and what they make not comparable.
	Described compare.Protocol
}

// Override is a value of the protocol that differs from the paper's.
type Override struct{ Key, Paper, Ours string }

// Lock is what the page says about the lock.
type Lock struct {
	// Digest is the SHA-256 of the file's bytes; not its name, which a
	// bundle changes (thv.lock is thv-params.lock there).
	Digest     string
	Tasks      int
	Image      string // the container image of the pass that wrote it; "" none
	Go         string // the toolchain in the code identity
	CodeUnits  int
	CodeDigest string // of the code units and their hashes, "sha256:…"
}

// Tables are the inputs of the tables task: the same data as the LaTeX.
type Tables struct {
	Params tables.Params
	Cells  map[string][]formats.Cell    // by setting name
	Tests  map[string][]formats.TestRow // by setting name
}

// Comparison is the compare task's parameters and outputs.
type Comparison struct {
	Params compare.Params
	Rows   []formats.Comparison
	Claims []formats.ClaimCheck
}

// Figure is a figures task's figure: its parameters name its files.
type Figure struct{ Params figures.Params }

// Readings is the readings sweep's summary (results/readings.parquet).
type Readings struct {
	Rows      []formats.ReadingRow
	Tolerance string // the band the sweep's verdicts use
	// Protocol names the protocol the sweep varied; Other, that it is not
	// this page's (the sweep was run with another profile, params file or
	// override): then no verdict of the page comes from it.
	Protocol string
	Other    bool
}

// ResultFile is a file of results/ the page links to, with what it is.
type ResultFile struct{ Path, What string }

// Title is the page's title: what was reproduced, and by which protocol.
func Title(p Page) string {
	return "THV reproduction (profile " + p.Profile + "): " + p.Protocol.Described.ShortName(3)
}

// Render writes the page. Its first screen is the result: what was
// reproduced, the verdict, the command that checks it and the plot of
// ours against the published values; the details follow, and the
// provenance (digests, the run) last.
func Render(p Page) []byte {
	var w page
	title := Title(p)
	w.f(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>%s</title>
<style>
%s</style>
</head>
<body>
<a class="skip" href="#main">Skip to the results</a>
<header>
<h1>%s</h1>
`, esc(title), style(p), esc(title))
	reproduced(&w, p)
	verdict(&w, p)
	check(&w)
	w.WriteString("</header>\n<main id=\"main\">\n")
	if p.Verdict != nil && len(p.Judged) > 0 {
		plot(&w, p)
	}
	contents(&w, p)
	if p.Compare != nil {
		comparison(&w, p.Compare)
		claims(&w, p.Compare)
	}
	if p.Readings != nil {
		readings(&w, p.Readings)
	}
	if p.Tables != nil {
		paperTables(&w, p.Tables)
	}
	if len(p.Figures) > 0 || len(p.Regret) > 0 {
		figureSection(&w, p.Figures, p.Regret, p.Proposed)
	}
	provenance(&w, p)
	files(&w, p.Files)
	w.WriteString("</main>\n</body>\n</html>\n")
	return []byte(w.String())
}

// contents is the page's table of contents, below its first screen.
func contents(w *page, p Page) {
	w.WriteString("<nav aria-label=\"Contents\"><ul>\n")
	if p.Compare != nil {
		w.WriteString("<li><a href=\"#comparison\">Comparison with the paper</a></li>\n<li><a href=\"#claims\">Claims</a></li>\n")
	}
	if p.Readings != nil {
		w.WriteString("<li><a href=\"#readings\">Readings sweep</a></li>\n")
	}
	if p.Tables != nil {
		w.WriteString("<li><a href=\"#tables\">The paper's tables</a></li>\n")
	}
	if len(p.Figures) > 0 || len(p.Regret) > 0 {
		w.WriteString("<li><a href=\"#figures\">Figures</a></li>\n")
	}
	w.WriteString("<li><a href=\"#provenance\">Provenance</a></li>\n<li><a href=\"#files\">Files</a></li>\n</ul></nav>\n")
}

// settingsOf lists the settings the page shows.
func settingsOf(p Page) []string {
	var out []string
	if p.Tables != nil {
		for _, s := range p.Tables.Params.Settings {
			out = append(out, s.Name)
		}
	}
	return out
}

// provenance writes what was run, with what: the protocol, the lock, the
// code, and the run block.
func provenance(w *page, p Page) {
	w.section("provenance", "Provenance")
	image := "none: the tasks ran outside a container"
	if p.Lock.Image != "" {
		image = "<code>" + esc(p.Lock.Image) + "</code>"
	}
	w.f(`<table class="kv">
<tr><th scope="row">profile</th><td><code>%s</code></td></tr>
<tr><th scope="row">protocol</th><td><code>%s</code> (the SHA-256 of its values, after profile and overrides)</td></tr>
<tr><th scope="row">lock</th><td><code>%s</code> (the SHA-256 of the lock file), %d tasks</td></tr>
<tr><th scope="row">code</th><td>%d code units in the tasks' keys, <code>%s</code>; %s</td></tr>
<tr><th scope="row">image</th><td>%s</td></tr>
</table>
`, esc(p.Profile), esc(p.Protocol.Digest), esc(p.Lock.Digest), p.Lock.Tasks,
		p.Lock.CodeUnits, esc(p.Lock.CodeDigest), esc(p.Lock.Go), image)
	if len(p.Protocol.Differs) == 0 {
		w.WriteString("<p>The protocol's values are the paper's (the embedded params.yaml, no profile).</p>\n")
	} else {
		w.f("<table>\n<caption>The %d values of this protocol that differ from the paper's</caption>\n"+
			"<thead><tr><th scope=\"col\">key</th><th scope=\"col\">the paper</th><th scope=\"col\">this run</th></tr></thead>\n<tbody>\n", len(p.Protocol.Differs))
		for _, o := range p.Protocol.Differs {
			w.f("<tr><th scope=\"row\"><code>%s</code></th><td>%s</td><td>%s</td></tr>\n", esc(o.Key), esc(o.Paper), esc(o.Ours))
		}
		w.WriteString("</tbody>\n</table>\n")
	}
	w.WriteString("<h3>This run: stated by the author, not checked</h3>\n<p>Every row below is the word of the thv that exported these results (the thv verify row included: " +
		"what that thv says its own verification showed). No stored output determines them, so <code>thv verify-bundle</code> checks their form only, " +
		"and every other byte of this page against the stored outputs.</p>\n")
	w.WriteString(p.Run.block())
	w.end()
}

// files lists the other files of results/.
func files(w *page, fs []ResultFile) {
	w.section("files", "Files")
	w.WriteString("<ul class=\"files\">\n")
	for _, f := range fs {
		w.f("<li><a href=\"%s\">%s</a>: %s</li>\n", esc(f.Path), esc(f.Path), esc(f.What))
	}
	w.WriteString("</ul>\n")
	w.end()
}

// joinNames lists names as text: "a, b and c".
func joinNames(names []string) string {
	switch len(names) {
	case 0:
		return ""
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// settingText describes a setting as the captions do.
func settingText(s formats.Setting) string {
	return fmt.Sprintf("d = %d, n = %d, k = %d, σ = %g, T = %d, %d seeds", s.D, s.N, s.K, s.Sigma, s.T, s.Seeds)
}
