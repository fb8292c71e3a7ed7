package compare

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"thv/stages/formats"
)

// ReadingResult is one reading of the readings sweep with its comparison:
// the rows and claims of its compare task.
type ReadingResult struct {
	Name, Why  string
	Set        []string
	CompareKey string
	// Proposed is the protocol's proposed method, whose CI ratio is
	// reported on its own (formats.ReadingRow.CIRatioTHVUCBHV).
	Proposed string
	// InstanceSeeds is how many fixed instances Rows are judged over
	// (AcrossInstances); 0 for a single run, judged by its seeds.
	InstanceSeeds int
	Rows          []formats.Comparison
	Claims        []formats.ClaimCheck
}

// Summarize tallies one reading's comparison into its row of the sweep.
func (r ReadingResult) Summarize() formats.ReadingRow {
	row := formats.ReadingRow{Reading: r.Name, Set: strings.Join(r.Set, "; "), CompareKey: r.CompareKey, InstanceSeeds: r.InstanceSeeds}
	var thv, hv, reg []float64
	for _, c := range r.Rows {
		if c.Missing || c.NotComparable != "" {
			continue
		}
		row.Values++
		if c.Agrees {
			row.Agree++
			if c.Metric == MetricHV {
				row.AgreeHV++
			} else {
				row.AgreeRegret++
			}
		}
		if c.WithinCI || c.WithinRel {
			row.AgreeCI++
		}
		if c.PublishedCI > 0 {
			ratio := c.OursCI / c.PublishedCI
			switch {
			case c.Metric == MetricRegret:
				reg = append(reg, ratio)
			case c.Algorithm == r.Proposed:
				thv = append(thv, ratio)
				hv = append(hv, ratio)
			default:
				hv = append(hv, ratio)
			}
		}
	}
	for _, c := range r.Claims {
		if c.NotComparable != "" {
			continue
		}
		row.Claims++
		if c.Holds {
			row.ClaimsHold++
		}
	}
	row.CIRatioTHVUCBHV, row.CIRatioHV, row.CIRatioRegret = median(thv), median(hv), median(reg)
	return row
}

// ReadingsMarkdown is the sweep's report: one row per reading, then the
// agreeing values per algorithm and reading, then the claims per reading.
func ReadingsMarkdown(results []ReadingResult, proto Protocol, band [2]float64) string {
	var b strings.Builder
	b.WriteString("# Readings sweep: the paper's open readings against its published values\n\n")
	fmt.Fprintf(&b, "Each reading varies %s.\n\n", MarkdownText(proto.Name()))
	fmt.Fprintf(&b, "Written by `thv readings`. Each reading is the protocol with the keys shown set, run on the settings the paper publishes values for; every value of `reference/paper.yaml` is judged as `thv compare` judges it (tolerance (b): a published value agrees if it lies in the [%g, %g] percentile band of our per-instance outcomes — the cell means of the fixed instances for a reading judged over instances, the per-seed outcomes for one judged over its seeds, each seed then its own instance; tolerance (a): the CIs overlap or within the relative tolerance). CI ratio: the median of our 95%% CI half-width over the published one.\n\n", band[0], band[1])
	proposed := "the proposed method"
	if len(results) > 0 {
		proposed = results[0].Proposed
	}
	fmt.Fprintf(&b, "| reading | set | judged over | agree | HV_last100 | Final Regret | agree under (a) | claims hold | CI ratio %s HV | CI ratio HV | CI ratio regret |\n|---|---|---|---|---|---|---|---|---|---|---|\n", proposed)
	for _, r := range results {
		s := r.Summarize()
		set := "(defaults)"
		if s.Set != "" {
			set = "`" + strings.Join(r.Set, "`, `") + "`"
		}
		over := "its seeds"
		if r.InstanceSeeds > 0 {
			over = fmt.Sprintf("%d instances", r.InstanceSeeds)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %d / %d | %d | %d | %d | %d / %d | %.2f | %.2f | %.2f |\n",
			s.Reading, set, over, s.Agree, s.Values, s.AgreeHV, s.AgreeRegret, s.AgreeCI, s.ClaimsHold, s.Claims, s.CIRatioTHVUCBHV, s.CIRatioHV, s.CIRatioRegret)
	}
	var algos []string
	for _, r := range results {
		for _, c := range r.Rows {
			if !slices.Contains(algos, c.Algorithm) {
				algos = append(algos, c.Algorithm)
			}
		}
	}
	b.WriteString("\n## Agreeing values per algorithm (HV_last100 / Final Regret)\n\n| algorithm |")
	for _, r := range results {
		b.WriteString(" " + r.Name + " |")
	}
	b.WriteString("\n|---|" + strings.Repeat("---|", len(results)) + "\n")
	for _, a := range algos {
		b.WriteString("| " + a + " |")
		for _, r := range results {
			var hv, reg, nhv, nreg int
			for _, c := range r.Rows {
				if c.Algorithm != a || c.Missing {
					continue
				}
				if c.Metric == MetricHV {
					nhv++
					if c.Agrees {
						hv++
					}
				} else {
					nreg++
					if c.Agrees {
						reg++
					}
				}
			}
			fmt.Fprintf(&b, " %d/%d · %d/%d |", hv, nhv, reg, nreg)
		}
		b.WriteString("\n")
	}
	if len(results) > 0 {
		first := results[0]
		fmt.Fprintf(&b, "\n## %s: the values that differ\n\n| setting | geometry | algorithm | metric | ours | published | rel | pct |\n|---|---|---|---|---|---|---|---|\n", first.Name)
		for _, c := range first.Rows {
			if c.Agrees || c.Missing || c.NotComparable != "" {
				continue
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", c.Setting, c.Geometry, c.Algorithm, c.Metric,
				Estimate(c.Ours, c.OursCI), Published(c.Published, c.PublishedCI), Relative(c.RelDiff), Percentile(c.Percentile))
		}
	}
	proposedRegret(&b, results)
	b.WriteString("\n## Claims\n\n")
	for _, r := range results {
		fmt.Fprintf(&b, "**%s**", r.Name)
		if r.Why != "" {
			fmt.Fprintf(&b, " (%s)", MarkdownText(r.Why))
		}
		b.WriteString(":\n")
		for _, c := range r.Claims {
			fmt.Fprintf(&b, "- %s %s: %s\n", ClaimWord(c), MarkdownText(c.ID), MarkdownText(ClaimDetail(c)))
		}
		if r.InstanceSeeds > 0 {
			fmt.Fprintf(&b, "- claims on the first of its %d instances; compare task key of that run `%s`\n\n", r.InstanceSeeds, r.CompareKey)
		} else {
			fmt.Fprintf(&b, "- compare task key `%s`\n\n", r.CompareKey)
		}
	}
	return b.String()
}

// tightCI is the paper's "< 0.001", the smallest CI its tables print.
const tightCI = 0.001

// proposedRegret writes, per reading, the proposed method's Final Regret
// in every published cell, how many of the other
// published values agree, and the two claims about the proposed method's
// rank.
func proposedRegret(b *strings.Builder, results []ReadingResult) {
	if len(results) == 0 {
		return
	}
	proposed := results[0].Proposed
	type cell struct{ setting, geometry string }
	var cells []cell
	published := map[cell]formats.Comparison{}
	for _, r := range results {
		for _, c := range r.Rows {
			k := cell{c.Setting, c.Geometry}
			if c.Algorithm != proposed || c.Metric != MetricRegret || c.Missing || c.NotComparable != "" {
				continue
			}
			if _, ok := published[k]; !ok {
				cells = append(cells, k)
				published[k] = c
			}
		}
	}
	if len(cells) == 0 {
		return
	}
	fmt.Fprintf(b, "\n## %s's Final Regret per reading\n\nOur value (the mean over the instances, or over the seeds), ✓ where the published value agrees with it; \"other values\": the other published values that agree; \"CI < 0.001\": of the Final Regret values (any algorithm) published with a 95%% CI below 0.001, those whose CI is below 0.001 with us too (the median over the instances), which only an algorithm that accrues regret in the shared initialisation alone can have; the two claims on %s's rank, on the first instance.\n\n| reading |", proposed, proposed)
	for _, k := range cells {
		fmt.Fprintf(b, " %s %s |", k.setting, k.geometry)
	}
	b.WriteString(" agree | other values | CI < 0.001 | best-hv | lowest-regret |\n|---|" + strings.Repeat("---|", len(cells)+5) + "\n| *published* |")
	for _, k := range cells {
		fmt.Fprintf(b, " *%s* |", fmt.Sprintf("%.3g", published[k].Published))
	}
	b.WriteString(" | | | | |\n")
	for _, r := range results {
		mine := map[cell]formats.Comparison{}
		other, otherN, tight, tightN := 0, 0, 0, 0
		for _, c := range r.Rows {
			if c.NotComparable != "" {
				continue
			}
			if !c.Missing && c.Metric == MetricRegret && c.PublishedCI > 0 && c.PublishedCI <= tightCI {
				tightN++
				if c.OursCI <= tightCI {
					tight++
				}
			}
			switch {
			case c.Missing:
			case c.Algorithm == proposed && c.Metric == MetricRegret:
				mine[cell{c.Setting, c.Geometry}] = c
			default:
				otherN++
				if c.Agrees {
					other++
				}
			}
		}
		fmt.Fprintf(b, "| %s |", r.Name)
		agree := 0
		for _, k := range cells {
			c, ok := mine[k]
			switch {
			case !ok:
				b.WriteString(" — |")
			case c.Agrees:
				agree++
				fmt.Fprintf(b, " %.3g ✓ |", c.Ours)
			default:
				fmt.Fprintf(b, " %.3g |", c.Ours)
			}
		}
		fmt.Fprintf(b, " %d / %d | %d / %d | %d / %d |", agree, len(cells), other, otherN, tight, tightN)
		for _, id := range []string{"best-hv", "lowest-regret"} {
			mark := "—"
			for _, c := range r.Claims {
				if c.ID == id {
					mark = yes(c.Holds)
				}
			}
			b.WriteString(" " + mark + " |")
		}
		b.WriteString("\n")
	}
}

// median is the middle value of xs (the mean of the two middle ones for an
// even count), NaN for none.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
