package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"thv/artifacts"
	"thv/pipeline/userfile"
	"thv/protocol"
	"thv/protocol/export"
	"thv/stages/compare"
	"thv/stages/formats"
)

// compareFlags are thv compare's flags.
type compareFlags struct {
	pf                        projectFlags
	reference, failOn, output string
	all, markdown, jsonOut    bool
}

func newCompareCommand() *cobra.Command {
	c := &compareFlags{}
	cmd := &cobra.Command{
		Use:   "compare [--reference FILE] [--fail-on values|claims|none]",
		Short: "Compare the results with the paper's published values and claims, within stated tolerances",
		Long: `Compare our results with a reference file of published values and claims
(default: the paper's, reference/paper.yaml, embedded in thv; format in
docs/compare.md). For each published value: ours, the published one, the
difference, and a verdict under the reference's tolerance — (a) within the
union of both 95% CIs or a relative tolerance, or (b) the published value's
percentile among our per-instance outcomes inside a central band. Each
claim: holds or fails, with the numbers.

Every report names the protocol it judged: the paper's, or which values
differ from the paper's. A published value the protocol cannot reproduce
(another T, n, k, d, σ, reference point or HV window) is not comparable
and not judged, and no agreement is counted for it; one judged with fewer
seeds is judged, and the verdict says so.

Without --reference it prints the compare task of the last thv repro (also
exported to results/compare.md and Parquet), and ends with the headline
verdict, results/index.html's: the judgement across the readings sweep's
instances when thv readings computed it, with this run's as detail. With
--reference it compares the same results with another file (-o writes its
report).

The exit status is what CI gates on: with --fail-on values (the default), 1
if any value judged differs or is missing, else 3 if some value is not
comparable (not checked), else 0; with claims, 1 if any claim judged
fails, else 3 if some claim is not judged, else 0; with none, 0. 2: a
wrong command line or an unreadable reference.`,
		Example: `  thv compare                         # the paper, after thv repro
  thv compare --fail-on none          # report only (make repro)
  thv compare --reference mine.yaml -o mine.md
  thv compare --json | jq .verdict
  thv compare --fail-on claims --markdown >> "$GITHUB_STEP_SUMMARY"   # CI job summary (docs/ci.md)`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return c.run(cmd) },
	}
	c.pf.register(cmd)
	cmd.Flags().StringVar(&c.reference, "reference", "", "a reference file of published values and claims (default: the paper's, from the last thv repro)")
	cmd.Flags().StringVar(&c.failOn, "fail-on", gateValues, "exit 1 when: values (a published value differs or is missing), claims (a claim fails) or none")
	cmd.Flags().StringVarP(&c.output, "output", "o", "", "also write the Markdown report to this file")
	cmd.Flags().BoolVar(&c.all, "all", false, "list every value, not only the differing ones")
	cmd.Flags().BoolVar(&c.markdown, "markdown", false, "print the Markdown report (as results/compare.md, after the headline verdict when that is another) instead of the text table: for $GITHUB_STEP_SUMMARY")
	cmd.Flags().BoolVar(&c.jsonOut, "json", false, "print one JSON object: the protocol, the verdict, the counts, every value and claim, the gate's outcome")
	return cmd
}

// The gates of --fail-on: on the reference's published values,
// on its claims, or none.
const (
	gateValues = "values"
	gateClaims = "claims"
	gateNone   = "none"
)

// run judges the results against the reference, prints the judgement and
// ends with the gate's exit status.
func (c *compareFlags) run(cmd *cobra.Command) error {
	if c.failOn != gateValues && c.failOn != gateClaims && c.failOn != gateNone {
		return usageError(fmt.Errorf("--fail-on %q: want %s, %s or %s", c.failOn, gateValues, gateClaims, gateNone))
	}
	if c.markdown && c.jsonOut {
		return usageError(fmt.Errorf("--markdown and --json: choose one"))
	}
	var ref *compare.Reference
	if c.reference != "" { // first: a bad file is refused before the store is read
		b, err := userfile.ReadFile(c.reference, compare.MaxReferenceBytes)
		if err != nil {
			return usageError(fmt.Errorf("--reference: %w", err))
		}
		if ref, err = protocol.ParseReference(b); err != nil {
			return usageError(fmt.Errorf("%s: %w", c.reference, err))
		}
	}
	proj, rep, err := c.pf.status(cmd)
	if err != nil {
		return err
	}
	j, err := proj.Judge(rep, ref)
	if err != nil {
		return err
	}
	if c.output != "" {
		if err := artifacts.WriteFileAtomic(c.output, []byte(j.Report)); err != nil {
			return err
		}
	}
	if err := c.print(cmd.OutOrStdout(), j); err != nil {
		return err
	}
	return c.gate(j)
}

// print prints the judgement as the flags ask: Markdown, JSON or text.
func (c *compareFlags) print(out io.Writer, j *export.Judgement) error {
	switch {
	case c.markdown:
		if v := compare.MarkdownText(j.Verdict.Sentence()); !strings.Contains(j.Report, v) {
			fmt.Fprintf(out, "> **Verdict** (as results/index.html gives it): %s\n\n", v)
		}
		fmt.Fprint(out, j.Report)
		return nil
	case c.jsonOut:
		return writeCompareJSON(out, j.Verdict, j.Rows, j.Claims, c.failOn, gateOutcome(c.failOn, compare.Count(j.Rows, j.Claims)))
	}
	printComparison(out, j.Verdict.Protocol, j.Rows, j.Claims, c.all)
	fmt.Fprintf(out, "\nverdict: %s\n", j.Verdict.Sentence())
	return nil
}

// gate is the error of the gate's outcome: rejected, not checked or none.
func (c *compareFlags) gate(j *export.Judgement) error {
	n := compare.Count(j.Rows, j.Claims)
	switch gateOutcome(c.failOn, n) {
	case exitRejected:
		if c.failOn == gateValues {
			return rejected(fmt.Errorf("%d of the %d published values judged differ or are missing (--fail-on values)", n.Differ()+n.Missing, n.Judged+n.Missing))
		}
		return rejected(fmt.Errorf("%d of the %d claims judged fail (--fail-on claims)", n.ClaimsJudged-n.Hold, n.ClaimsJudged))
	case exitNotChecked:
		if c.failOn == gateValues {
			return notChecked(fmt.Errorf("%d published values are not comparable with this protocol, so not checked (--fail-on values): %s", n.NotComparable, j.Verdict.Protocol.Incomparability()))
		}
		return notChecked(fmt.Errorf("%d claims are not judged with this protocol (--fail-on claims)", n.Claims-n.ClaimsJudged))
	}
	return nil
}

// gateOutcome is the exit status --fail-on gives counts n.
func gateOutcome(failOn string, n compare.Counts) int {
	switch failOn {
	case gateValues:
		switch {
		case n.Differ()+n.Missing > 0:
			return exitRejected
		case n.NotComparable > 0:
			return exitNotChecked
		}
	case gateClaims:
		switch {
		case n.ClaimsJudged > n.Hold:
			return exitRejected
		case n.ClaimsJudged < n.Claims:
			return exitNotChecked
		}
	}
	return exitVerified
}

// compareJSON is thv compare --json's object.
type compareJSON struct {
	Protocol protocolJSON `json:"protocol"`
	Verdict  string       `json:"verdict"`
	Counts   countsJSON   `json:"counts"`
	// Across is the judgement across instances the verdict gives, if any.
	Across *acrossJSON `json:"across_instances"`
	Values []valueJSON `json:"values"`
	Claims []claimJSON `json:"claims"`
	Gate   string      `json:"gate"`
	Exit   int         `json:"exit"`
}

// protocolJSON is a protocol as every --json output gives it.
type protocolJSON struct {
	Name          string                 `json:"name"`
	Paper         bool                   `json:"paper"`
	Differs       []compare.Difference   `json:"differs"`
	NotComparable []compare.Incomparable `json:"not_comparable"`
	Seeds         int                    `json:"seeds,omitempty"`
	PaperSeeds    int                    `json:"paper_seeds,omitempty"`
}

func protocolOf(p compare.Protocol) protocolJSON {
	j := protocolJSON{Name: p.Name(), Paper: p.IsPaper(), Differs: p.Differs, NotComparable: p.NotComparable, Seeds: p.Seeds, PaperSeeds: p.PaperSeeds}
	if j.Differs == nil {
		j.Differs = []compare.Difference{}
	}
	if j.NotComparable == nil {
		j.NotComparable = []compare.Incomparable{}
	}
	return j
}

type countsJSON struct {
	Values        int `json:"values"`
	Judged        int `json:"judged"`
	Agree         int `json:"agree"`
	Differ        int `json:"differ"`
	Missing       int `json:"missing"`
	NotComparable int `json:"not_comparable"`
	Claims        int `json:"claims"`
	ClaimsJudged  int `json:"claims_judged"`
	ClaimsHold    int `json:"claims_hold"`
}

type acrossJSON struct {
	Instances int `json:"instances"`
	Values    int `json:"values"`
	Agree     int `json:"agree"`
}

type valueJSON struct {
	Setting       string   `json:"setting"`
	Geometry      string   `json:"geometry"`
	Algorithm     string   `json:"algorithm"`
	Metric        string   `json:"metric"`
	Ours          *float64 `json:"ours"`
	OursCI        *float64 `json:"ours_ci"`
	Published     float64  `json:"published"`
	PublishedCI   float64  `json:"published_ci"`
	Percentile    *float64 `json:"percentile"`
	Verdict       string   `json:"verdict"` // agrees, differs, missing, not comparable
	NotComparable string   `json:"not_comparable,omitempty"`
}

type claimJSON struct {
	ID      string `json:"id"`
	Text    string `json:"text"`
	Verdict string `json:"verdict"` // holds, fails, not judged
	Detail  string `json:"detail"`
}

// number is v, or nil for a value that is not a number (JSON has none).
func number(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

func writeCompareJSON(w io.Writer, v compare.Verdict, rows []formats.Comparison, claims []formats.ClaimCheck, gate string, exit int) error {
	n := compare.Count(rows, claims)
	j := compareJSON{Protocol: protocolOf(v.Protocol), Verdict: v.Sentence(), Gate: gate, Exit: exit,
		Counts: countsJSON{n.Values, n.Judged, n.Agree, n.Differ(), n.Missing, n.NotComparable, n.Claims, n.ClaimsJudged, n.Hold},
		Values: []valueJSON{}, Claims: []claimJSON{}}
	if a := v.Across; a != nil {
		j.Across = &acrossJSON{Instances: a.InstanceSeeds, Values: a.Values, Agree: a.Agree}
	}
	for _, r := range rows {
		x := valueJSON{Setting: r.Setting, Geometry: r.Geometry, Algorithm: r.Algorithm, Metric: r.Metric, Published: r.Published, PublishedCI: r.PublishedCI,
			Ours: number(r.Ours), OursCI: number(r.OursCI), Percentile: number(r.Percentile), Verdict: compare.VerdictWord(r), NotComparable: r.NotComparable}
		if r.Missing {
			x.Ours, x.OursCI = nil, nil
		}
		j.Values = append(j.Values, x)
	}
	for _, c := range claims {
		j.Claims = append(j.Claims, claimJSON{ID: c.ID, Text: c.Text, Verdict: strings.Trim(compare.ClaimWord(c), "*"), Detail: compare.ClaimDetail(c)})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(j)
}

// printComparison prints the protocol judged, the counts per setting and
// metric, the values that differ (or all), and the claims.
func printComparison(w io.Writer, proto compare.Protocol, rows []formats.Comparison, claims []formats.ClaimCheck, all bool) {
	fmt.Fprintf(w, "protocol: %s\n\n", terminalText(proto.Name()))
	type key struct{ setting, metric string }
	var order []key
	counts := map[key][4]int{} // agree, differ, missing, not comparable
	for _, r := range rows {
		k := key{r.Setting, r.Metric}
		c, seen := counts[k]
		if !seen {
			order = append(order, k)
		}
		switch {
		case r.Missing:
			c[2]++
		case r.NotComparable != "":
			c[3]++
		case r.Agrees:
			c[0]++
		default:
			c[1]++
		}
		counts[k] = c
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "setting\tmetric\tagree\tdiffer\tmissing\tnot comparable")
	for _, k := range order {
		c := counts[k]
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\n", terminalText(k.setting), k.metric, c[0], c[1], c[2], c[3])
	}
	tw.Flush()
	fmt.Fprintln(w)
	printValues(w, rows, all)
	for _, c := range claims {
		word := strings.Trim(compare.ClaimWord(c), "*")
		if word == "fails" {
			word = "FAILS"
		}
		fmt.Fprintf(w, "claim %s: %s — %s\n", terminalText(c.ID), word, terminalText(compare.ClaimDetail(c)))
	}
}

// printValues prints the values that differ (or all), one row each.
func printValues(w io.Writer, rows []formats.Comparison, all bool) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "value\tmetric\tours (mean ± 95% CI)\tpublished\trelative\tpercentile\tverdict")
	for _, r := range rows {
		if r.Agrees && !all || r.NotComparable != "" && !all {
			continue
		}
		cell := terminalText(r.Setting + "/" + r.Geometry + "/" + r.Algorithm)
		switch {
		case r.Missing:
			fmt.Fprintf(tw, "%s\t%s\t—\t%s\t\t\tmissing\n", cell, r.Metric, compare.Published(r.Published, r.PublishedCI))
		case r.NotComparable != "":
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t\t\tnot comparable: %s\n", cell, r.Metric, compare.Estimate(r.Ours, r.OursCI), compare.Published(r.Published, r.PublishedCI), terminalText(r.NotComparable))
		default:
			verdict := "agrees"
			if !r.Agrees {
				verdict = "DIFFERS"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", cell, r.Metric,
				compare.Estimate(r.Ours, r.OursCI), compare.Published(r.Published, r.PublishedCI), compare.Relative(r.RelDiff), compare.Percentile(r.Percentile), verdict)
		}
	}
	tw.Flush()
	fmt.Fprintln(w)
}
