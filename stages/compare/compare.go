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
}

// CellsInputName is the input role of a setting's summarize cells.
func CellsInputName(setting string) string { return "cells/" + setting }

// FinalInputName is the input role of the per-seed summaries (a collect
// output) of one reference cell.
func FinalInputName(setting, geometry, algo string) string {
	return "final/" + setting + "/" + geometry + "/" + algo
}

// Run compares: outputs "comparison.parquet" (formats.Comparison per
// reference value), "claims.parquet" (formats.ClaimCheck per claim) and
// "compare.md", the report.
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
	for _, c := range p.Reference.Cells {
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
	rows := Compare(&ref, res, finals, regret)
	claims := CheckClaims(ref.Claims, res, regret, p.Geometries)
	out := stage.Outputs{}
	if out["comparison.parquet"], err = formats.EncodeComparisons(rows); err != nil {
		return nil, err
	}
	if out["claims.parquet"], err = formats.EncodeClaims(claims); err != nil {
		return nil, err
	}
	out["compare.md"] = []byte(Markdown(&ref, rows, claims))
	return out, nil
}

// Compare judges every value of the reference against our results. finals
// holds the per-seed summaries by FinalInputName; regret is our metric the
// reference's final_regret is read as (formats.RegretMetrics).
func Compare(ref *Reference, res Results, finals map[string][]formats.Summary, regret string) []formats.Comparison {
	return judge(ref, regret, func(c RefCell, metric string) (Ours, bool) { return oursFor(res, finals, c, metric) })
}

// judge compares every value of the reference with ours(cell, our metric
// column), under the reference's tolerance; a value ours has nothing for
// is missing.
func judge(ref *Reference, regret string, ours func(RefCell, string) (Ours, bool)) []formats.Comparison {
	var rows []formats.Comparison
	for _, c := range ref.Cells {
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
					Ours: math.NaN(), OursCI: math.NaN(), Diff: math.NaN(), RelDiff: math.NaN(), Percentile: math.NaN()}
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
func oursFor(res Results, finals map[string][]formats.Summary, c RefCell, metric string) (Ours, bool) {
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

// Counts summarises a comparison: values compared, agreeing, missing, and
// claims holding, of all.
type Counts struct{ Values, Agree, Missing, Claims, Hold int }

// Count tallies rows and claims.
func Count(rows []formats.Comparison, claims []formats.ClaimCheck) Counts {
	var n Counts
	for _, r := range rows {
		n.Values++
		switch {
		case r.Missing:
			n.Missing++
		case r.Agrees:
			n.Agree++
		}
	}
	for _, c := range claims {
		n.Claims++
		if c.Holds {
			n.Hold++
		}
	}
	return n
}

// Markdown is the report: the tolerance, one table per setting, the claims.
func Markdown(ref *Reference, rows []formats.Comparison, claims []formats.ClaimCheck) string {
	var b strings.Builder
	n := Count(rows, claims)
	fmt.Fprintf(&b, "# Comparison with the published results\n\nReference: %s.\n\n", ref.Source)
	t := ref.Tolerance
	fmt.Fprintf(&b, "Tolerance (verdicts use **%s**): (a) `CI∪` — our mean and the published one are within the union of both 95%% CIs; `rel` — within %g%% of the published value; (b) `pct` — the percentile of the published value among our per-instance outcomes (one per seed), agreeing inside [%g, %g].\n\n",
		t.Applies, 100*t.Relative, t.Percentile[0], t.Percentile[1])
	if ref.oneInstance {
		b.WriteString("The protocol draws one instance per (setting, geometry) (`instances.mode: fixed`): its seeds vary only the noise and are no sample of instances, so the verdicts use (a); (b), the percentile among the cell means of many instances, is in `results/readings.md` (`thv readings`).\n\n")
	}
	fmt.Fprintf(&b, "**%d of %d values agree, %d missing; %d of %d claims hold.**\n", n.Agree, n.Values, n.Missing, n.Hold, n.Claims)
	setting := ""
	for _, r := range rows {
		if r.Setting != setting {
			setting = r.Setting
			fmt.Fprintf(&b, "\n## %s\n\n| algorithm | geometry | metric | ours | published | diff | rel | CI∪ | rel | pct | verdict |\n|---|---|---|---|---|---|---|---|---|---|---|\n", setting)
		}
		if r.Missing {
			fmt.Fprintf(&b, "| %s | %s | %s | — | %s | | | | | | missing |\n", r.Algorithm, r.Geometry, r.Metric, pm(r.Published, r.PublishedCI))
			continue
		}
		verdict := "agrees"
		if !r.Agrees {
			verdict = "**differs**"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %+.4g | %+.1f%% | %s | %s | %s | %s |\n", r.Algorithm, r.Geometry, r.Metric,
			pm(r.Ours, r.OursCI), pm(r.Published, r.PublishedCI), r.Diff, 100*r.RelDiff, yes(r.WithinCI), yes(r.WithinRel), pctText(r.Percentile), verdict)
	}
	b.WriteString("\n## Claims\n\n")
	for _, c := range claims {
		mark := "holds"
		if !c.Holds {
			mark = "**fails**"
		}
		fmt.Fprintf(&b, "- %s — %s: %s. %s\n", c.ID, mark, c.Text, c.Detail)
	}
	return b.String()
}

func pm(v, ci float64) string { return fmt.Sprintf("%.4g ± %.2g", v, ci) }

func yes(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func pctText(p float64) string {
	if math.IsNaN(p) {
		return "—"
	}
	return fmt.Sprintf("%.0f", p)
}
