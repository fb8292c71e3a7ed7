// Package compare is the stage kind "compare": our results against a
// paper's published values and claims, within stated tolerances
// (docs/compare.md). The reference file is parsed by ParseReference and
// travels in the task's parameters, so editing it reruns only this task.
package compare

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"thv/stages/formats"
	"thv/stages/stage"
)

// Kind is the name of the stage kind.
const Kind = "compare"

// The kind's input roles and outputs.
const (
	// CellsRole is a setting's summarize cells: CellsInputName.
	CellsRole stage.Role = "cells/*"
	// FinalRole is the per-seed summaries (a collect output) of one
	// reference cell: FinalInputName.
	FinalRole stage.Role = "final/*/*/*"
	// Comparison is one formats.Comparison per reference value.
	Comparison stage.OutputName = "comparison.parquet"
	// Claims is one formats.ClaimCheck per claim.
	Claims stage.OutputName = "claims.parquet"
	// Report is the Markdown report of both.
	Report stage.OutputName = "compare.md"
)

// Declared is what the kind reads and writes.
var Declared = stage.Declaration{
	Reads: []stage.Role{CellsRole, FinalRole},
	Outputs: []stage.Output{
		{Name: Comparison, Results: ".", Doc: "the same comparison, one row per published value (Parquet)"},
		{Name: Claims, Results: ".", Doc: "the paper's claims checked against our results (Parquet)"},
		{Name: Report, Results: ".", Doc: "our results against the paper's published values and claims, within stated tolerances (thv compare; docs/compare.md)"},
	},
}

// Params: the reference, the names it may use, and the settings whose
// cells are inputs (all of the protocol's: the claims are about every
// setting).
type Params struct {
	Reference Reference `json:"reference"`
	Vocabulary
	Settings []string `json:"settings"`
	// FinalRegret is our regret the reference's final_regret is compared
	// with (formats.RegretMetrics; "" means the first, regret_alpha_pos).
	FinalRegret string `json:"final_regret,omitempty"`
	// OneInstance: the protocol draws one instance per (setting,
	// geometry) (instances.mode = fixed). Its seeds then vary only the
	// noise, so they are no population of instances to rank a published
	// value among: tolerance (b) is judged across many instances by thv
	// readings, and these verdicts use (a).
	OneInstance bool `json:"one_instance,omitempty"`
	// Protocol is the protocol judged, against the paper's: its
	// description heads every report, and the published values it cannot
	// reproduce are not judged. Zero for the paper's own.
	Protocol Protocol `json:"protocol,omitzero"`
}

// CellsInputName is the input role of a setting's summarize cells.
func CellsInputName(setting string) string { return CellsRole.With(setting) }

// FinalInputName is the input role of the per-seed summaries (a collect
// output) of one reference cell.
func FinalInputName(setting, geometry, algo string) string {
	return FinalRole.With(setting, geometry, algo)
}

// Run compares: outputs Comparison, Claims and Report.
func Run(ctx context.Context, params []byte, in stage.Inputs) (stage.Outputs, error) {
	p, err := stage.Start[Params](ctx, params)
	if err != nil {
		return nil, err
	}
	if err := p.Reference.validate(p.Vocabulary); err != nil {
		return nil, err
	}
	res := Results{}
	for _, s := range p.Settings {
		cells, err := stage.Read(in, CellsInputName(s), formats.DecodeCells)
		if err != nil {
			return nil, err
		}
		res[s] = cells
	}
	finals := map[string][]formats.Summary{}
	for _, c := range p.Reference.Rows {
		role := FinalInputName(c.Setting, c.Geometry, c.Algorithm)
		if _, ok := in[role]; !ok {
			continue // not in our protocol: reported as missing
		}
		rows, err := stage.Read(in, role, formats.DecodeSummaries)
		if err != nil {
			return nil, err
		}
		finals[role] = rows
	}
	regret := p.FinalRegret
	if regret == "" {
		regret = formats.RegretMetrics[0]
	}
	if !slices.Contains(formats.RegretMetrics, regret) {
		return nil, fmt.Errorf("final_regret %q: want one of %v", regret, formats.RegretMetrics)
	}
	ref := p.Reference
	if p.OneInstance {
		ref = ref.OneInstance()
	}
	rows := Compare(&ref, p.Protocol, res, finals, regret)
	claims := CheckClaims(ref.Claims, p.Protocol, res, regret, p.Geometries)
	out := stage.Outputs{}
	if out[string(Comparison)], err = formats.EncodeComparisons(rows); err != nil {
		return nil, err
	}
	if out[string(Claims)], err = formats.EncodeClaims(claims); err != nil {
		return nil, err
	}
	out[string(Report)] = []byte(Markdown(&ref, p.Protocol, rows, claims))
	return out, nil
}

// Compare judges every value of the reference against our results, from a
// run of protocol proto. finals holds the per-seed summaries by
// FinalInputName; regret is our metric the reference's final_regret is
// read as (formats.RegretMetrics).
func Compare(ref *Reference, proto Protocol, res Results, finals map[string][]formats.Summary, regret string) []formats.Comparison {
	return judge(ref, proto, regret, func(c RefRow, metric string) (Ours, bool) { return oursFor(res, finals, c, metric) })
}

// judge compares every value of the reference with ours(cell, our metric
// column), under the reference's tolerance; a value ours has nothing for
// is missing, and one proto cannot reproduce is not judged.
func judge(ref *Reference, proto Protocol, regret string, ours func(RefRow, string) (Ours, bool)) []formats.Comparison {
	var rows []formats.Comparison
	for _, c := range ref.Rows {
		for _, m := range []struct {
			name string
			v    *Value
		}{{MetricHV, c.HVLast100}, {MetricRegret, c.FinalRegret}} {
			if m.v == nil {
				continue
			}
			o, ok := ours(c, ourMetric(m.name, regret))
			var r formats.Comparison
			if ok {
				r = CompareValue(o, *m.v.Value, m.v.CI, ref.Tolerance, ref.Tolerance.Applies == "percentile")
			} else {
				r = formats.Comparison{Published: *m.v.Value, PublishedCI: m.v.CI, Missing: true,
					Ours: math.NaN(), OursCI: math.NaN(), Diff: math.NaN(), RelDiff: math.NaN(), Percentile: math.NaN(),
					Low: math.NaN(), High: math.NaN()}
			}
			if why := proto.Reason(c.Setting, m.name); why != "" && ok {
				r = notJudged(r, why)
			}
			r.Setting, r.Geometry, r.Algorithm, r.Metric = c.Setting, c.Geometry, c.Algorithm, m.name
			rows = append(rows, r)
		}
	}
	return rows
}

// ourMetric is the column of ours (formats.Cell, formats.Summary) that a
// reference metric is compared with.
func ourMetric(refMetric, regret string) string {
	if refMetric == MetricRegret {
		return regret
	}
	return "hv_last"
}

// oursFor finds our estimate and per-instance outcomes for a reference
// cell's metric, named by its column of ours (ourMetric).
func oursFor(res Results, finals map[string][]formats.Summary, c RefRow, metric string) (Ours, bool) {
	est, ok := cellEstimate(res, c, metric)
	if !ok {
		return Ours{}, false
	}
	o := Ours{Mean: est.Mean, CI: est.HalfWidth}
	for _, s := range finals[FinalInputName(c.Setting, c.Geometry, c.Algorithm)] {
		v, _ := s.Metric(metric)
		o.Outcomes = append(o.Outcomes, v)
	}
	return o, true
}

// VerdictWord is a value's verdict in words: agrees, differs, missing or
// not comparable.
func VerdictWord(r formats.Comparison) string {
	switch {
	case r.Missing:
		return "missing"
	case r.NotComparable != "":
		return "not comparable"
	case r.Agrees:
		return "agrees"
	}
	return "differs"
}

// notJudged is row r of a value the protocol cannot reproduce: our mean
// and CI stay (they are what we computed), every verdict is withdrawn.
func notJudged(r formats.Comparison, why string) formats.Comparison {
	r.NotComparable = why
	r.Diff, r.RelDiff, r.Percentile = math.NaN(), math.NaN(), math.NaN()
	r.WithinCI, r.WithinRel, r.InBand, r.Agrees = false, false, false, false
	return r
}

// Counts summarises a comparison: the published values, those judged
// (comparable and not missing), agreeing, missing, not comparable; the
// claims, those judged, holding.
type Counts struct {
	Values, Judged, Agree, Missing, NotComparable int
	Claims, ClaimsJudged, Hold                    int
}

// Differ is how many judged values differ.
func (n Counts) Differ() int { return n.Judged - n.Agree }

// Count tallies rows and claims.
func Count(rows []formats.Comparison, claims []formats.ClaimCheck) Counts {
	var n Counts
	for _, r := range rows {
		n.Values++
		switch {
		case r.Missing:
			n.Missing++
		case r.NotComparable != "":
			n.NotComparable++
		default:
			n.Judged++
			if r.Agrees {
				n.Agree++
			}
		}
	}
	for _, c := range claims {
		n.Claims++
		if c.NotComparable != "" {
			continue
		}
		n.ClaimsJudged++
		if c.Holds {
			n.Hold++
		}
	}
	return n
}

// Markdown is the report: the protocol judged and the verdict, how a
// value is judged, one table per setting, the claims.
func Markdown(ref *Reference, proto Protocol, rows []formats.Comparison, claims []formats.ClaimCheck) string {
	var b strings.Builder
	b.WriteString("# Comparison with the published results\n\n")
	v := Verdict{Protocol: proto, Run: Count(rows, claims), OneInstance: ref.oneInstance, Relative: ref.Tolerance.Relative, Band: ref.Tolerance.Percentile}
	fmt.Fprintf(&b, "**%s**\n\nReference: %s.\n\n", MarkdownText(v.Sentence()), MarkdownText(ref.Source))
	b.WriteString(judgedHow(ref) + "\n")
	setting := ""
	for _, r := range rows {
		if r.Setting != setting {
			setting = r.Setting
			fmt.Fprintf(&b, "\n## %s\n\n| algorithm | geometry | metric | ours: mean ± 95%% CI | published: mean ± 95%% CI | ours − published | relative | CIs overlap | within %g%% | published value's percentile among our outcomes | verdict |\n|---|---|---|---|---|---|---|---|---|---|---|\n",
				setting, 100*ref.Tolerance.Relative)
		}
		switch {
		case r.Missing:
			fmt.Fprintf(&b, "| %s | %s | %s | — | %s | | | | | | missing |\n", r.Algorithm, r.Geometry, r.Metric, Published(r.Published, r.PublishedCI))
		case r.NotComparable != "":
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | | | | | | not comparable: %s |\n", r.Algorithm, r.Geometry, r.Metric,
				Estimate(r.Ours, r.OursCI), Published(r.Published, r.PublishedCI), MarkdownText(r.NotComparable))
		default:
			verdict := "agrees"
			if !r.Agrees {
				verdict = "**differs**"
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", r.Algorithm, r.Geometry, r.Metric,
				Estimate(r.Ours, r.OursCI), Published(r.Published, r.PublishedCI), Diff(r.Diff, r.OursCI), Relative(r.RelDiff),
				yes(r.WithinCI), yes(r.WithinRel), Percentile(r.Percentile), verdict)
		}
	}
	b.WriteString("\n## Claims\n\n")
	if len(claims) == 0 {
		b.WriteString("The reference states no claim.\n")
	}
	for _, c := range claims {
		fmt.Fprintf(&b, "- %s — %s: %s. %s\n", MarkdownText(c.ID), ClaimWord(c), MarkdownText(c.Text), MarkdownText(upper(ClaimDetail(c))))
	}
	return b.String()
}

// judgedHow says in plain words how a published value is judged: the
// columns of the report, and which test decides.
func judgedHow(ref *Reference) string {
	t := ref.Tolerance
	var b strings.Builder
	fmt.Fprintf(&b, "How a value is judged. *Ours* is our mean over the seeds with its 95%% confidence interval; *published*, the paper's, as printed. "+
		"*CIs overlap*: our interval and the published one meet. *Within %g%%*: ours is within %g%% of the published value. "+
		"*Percentile*: where the published value falls among our outcomes (0: below all of them, 100: above all). ",
		100*t.Relative, 100*t.Relative)
	if t.Applies == "percentile" {
		fmt.Fprintf(&b, "A value **agrees** when its percentile lies in [%g, %g]: it is a plausible outcome of ours.\n", t.Percentile[0], t.Percentile[1])
	} else {
		fmt.Fprintf(&b, "A value **agrees** when the CIs overlap or it is within %g%%.\n", 100*t.Relative)
	}
	if ref.oneInstance {
		b.WriteString("\nThe protocol draws one instance per (setting, geometry), as the paper does: its seeds vary only the noise and are no sample of instances, so these verdicts use the CIs and the relative tolerance; the percentile band across many instances is judged by `thv readings` (`results/readings.md`).\n")
	}
	return b.String()
}

// ClaimWord is a claim's verdict: holds, fails or not judged.
func ClaimWord(c formats.ClaimCheck) string {
	switch {
	case c.NotComparable != "":
		return "not judged"
	case c.Holds:
		return "holds"
	}
	return "**fails**"
}

// ClaimDetail is a claim's numbers, or why it is not judged.
func ClaimDetail(c formats.ClaimCheck) string {
	if c.NotComparable != "" {
		return "Not judged: " + c.NotComparable + "."
	}
	return c.Detail
}

// MarkdownText is free text for a Markdown file, its markup characters
// escaped: a reference's texts and a protocol's values come from files,
// and no Markdown file receives markup from one raw.
func MarkdownText(s string) string {
	return markdownEscaper.Replace(s)
}

var markdownEscaper = strings.NewReplacer(`\`, `\\`, "`", "\\`", "*", `\*`, "_", `\_`, "[", `\[`, "]", `\]`, "<", "&lt;", ">", "&gt;", "|", `\|`, "#", `\#`)

func yes(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
