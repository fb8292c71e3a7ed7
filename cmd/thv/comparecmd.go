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
	"thv/pipeline"
	"thv/pipeline/userfile"
	"thv/stages/compare"
	"thv/stages/formats"
	"thv/stages/protocol"
)

func newCompareCommand() *cobra.Command {
	var pf projectFlags
	var reference, failOn, output string
	var all, markdown, jsonOut bool
	cmd := &cobra.Command{
		Use:   "compare [--reference FILE] [--fail-on cells|claims|none]",
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

The exit status is what CI gates on: with --fail-on cells (the default), 1
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
		RunE: func(cmd *cobra.Command, _ []string) error {
			switch failOn {
			case "cells", "claims", "none":
			default:
				return usageError(fmt.Errorf("--fail-on %q: want cells, claims or none", failOn))
			}
			if markdown && jsonOut {
				return usageError(fmt.Errorf("--markdown and --json: choose one"))
			}
			var ref *compare.Reference
			if reference != "" { // first: a bad file is refused before the store is read
				b, err := userfile.ReadFile(reference, compare.MaxReferenceBytes)
				if err != nil {
					return usageError(fmt.Errorf("--reference: %w", err))
				}
				if ref, err = protocol.ParseReference(b); err != nil {
					return usageError(fmt.Errorf("%s: %w", reference, err))
				}
			}
			proj, err := pf.open(true)
			if err != nil {
				return err
			}
			rep, err := proj.Status(cmd.Context())
			if err != nil {
				return err
			}
			var rows []formats.Comparison
			var claims []formats.ClaimCheck
			var report string
			var verdict compare.Verdict
			if reference == "" {
				if rows, claims, err = storedComparison(proj, rep); err != nil {
					return err
				}
				if verdict, _, err = proj.Verdict(rep); err != nil {
					return err
				}
			} else {
				if proj.Config.Instances.Mode == protocol.InstancesFixed {
					one := ref.OneInstance() // as the compare stage judges it
					ref = &one
				}
				proto, err := proj.Describe()
				if err != nil {
					return err
				}
				// A reference of one's own states no protocol: its values
				// are judged whatever this protocol's settings (what
				// makes a value not comparable is a difference from the
				// paper's protocol, which its values need not be of).
				proto.NotComparable, proto.Seeds, proto.PaperSeeds = nil, 0, 0
				if rows, claims, err = compareWith(proj, rep, ref, proto); err != nil {
					return err
				}
				report = compare.Markdown(ref, proto, rows, claims)
				verdict = compare.Verdict{Protocol: proto, Run: compare.Count(rows, claims), OneInstance: proj.Config.Instances.Mode == protocol.InstancesFixed,
					Relative: ref.Tolerance.Relative, Band: ref.Tolerance.Percentile}
			}
			if output != "" || markdown {
				if report == "" {
					b, err := readOutput(proj, rep, protocol.CompareID, "compare.md")
					if err != nil {
						return err
					}
					report = string(b)
				}
			}
			if output != "" {
				if err := artifacts.WriteFileAtomic(output, []byte(report)); err != nil {
					return err
				}
			}
			out := cmd.OutOrStdout()
			n := compare.Count(rows, claims)
			gate := gateOutcome(failOn, n)
			switch {
			case markdown:
				if v := compare.MarkdownText(verdict.Sentence()); !strings.Contains(report, v) {
					fmt.Fprintf(out, "> **Verdict** (as results/index.html gives it): %s\n\n", v)
				}
				fmt.Fprint(out, report)
			case jsonOut:
				if err := writeCompareJSON(out, verdict, rows, claims, failOn, gate); err != nil {
					return err
				}
			default:
				printComparison(out, verdict.Protocol, rows, claims, all)
				fmt.Fprintf(out, "\nverdict: %s\n", verdict.Sentence())
			}
			switch gate {
			case exitRejected:
				if failOn == "cells" {
					return rejected(fmt.Errorf("%d of the %d published values judged differ or are missing (--fail-on cells)", n.Differ()+n.Missing, n.Judged+n.Missing))
				}
				return rejected(fmt.Errorf("%d of the %d claims judged fail (--fail-on claims)", n.ClaimsJudged-n.Hold, n.ClaimsJudged))
			case exitNotChecked:
				if failOn == "cells" {
					return notChecked(fmt.Errorf("%d published values are not comparable with this protocol, so not checked (--fail-on cells): %s", n.NotComparable, verdict.Protocol.Incomparability()))
				}
				return notChecked(fmt.Errorf("%d claims are not judged with this protocol (--fail-on claims)", n.Claims-n.ClaimsJudged))
			}
			return nil
		},
	}
	pf.register(cmd)
	cmd.Flags().StringVar(&reference, "reference", "", "a reference file of published values and claims (default: the paper's, from the last thv repro)")
	cmd.Flags().StringVar(&failOn, "fail-on", "cells", "exit 1 when: cells (a value differs or is missing), claims (a claim fails) or none")
	cmd.Flags().StringVarP(&output, "output", "o", "", "also write the Markdown report to this file")
	cmd.Flags().BoolVar(&all, "all", false, "list every value, not only the differing ones")
	cmd.Flags().BoolVar(&markdown, "markdown", false, "print the Markdown report (as results/compare.md, after the headline verdict when that is another) instead of the text table: for $GITHUB_STEP_SUMMARY")
	cmd.Flags().BoolVar(&jsonOut, "json", false, "print one JSON object: the protocol, the verdict, the counts, every value and claim, the gate's outcome")
	return cmd
}

// gateOutcome is the exit status --fail-on gives counts n.
func gateOutcome(failOn string, n compare.Counts) int {
	switch failOn {
	case "cells":
		switch {
		case n.Differ()+n.Missing > 0:
			return exitRejected
		case n.NotComparable > 0:
			return exitNotChecked
		}
	case "claims":
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

// storedComparison reads the outputs of the up-to-date compare task.
func storedComparison(proj *protocol.Project, rep *pipeline.Report) ([]formats.Comparison, []formats.ClaimCheck, error) {
	b, err := readOutput(proj, rep, protocol.CompareID, "comparison.parquet")
	if err != nil {
		return nil, nil, err
	}
	rows, err := formats.DecodeComparisons(b)
	if err != nil {
		return nil, nil, err
	}
	if b, err = readOutput(proj, rep, protocol.CompareID, "claims.parquet"); err != nil {
		return nil, nil, err
	}
	claims, err := formats.DecodeClaims(b)
	return rows, claims, err
}

// storedResults reads the cells of every setting's up-to-date summarize
// task.
func storedResults(proj *protocol.Project, rep *pipeline.Report) (compare.Results, error) {
	res := compare.Results{}
	for _, s := range proj.Config.SortedSettings() {
		b, err := readOutput(proj, rep, protocol.SummarizeID(s.Name), "cells")
		if err != nil {
			return nil, err
		}
		if res[s.Name], err = formats.DecodeCells(b); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// compareWith compares the up-to-date results with another reference, in
// process: the same functions as the compare stage, on the same inputs.
func compareWith(proj *protocol.Project, rep *pipeline.Report, ref *compare.Reference, proto compare.Protocol) ([]formats.Comparison, []formats.ClaimCheck, error) {
	res, err := storedResults(proj, rep)
	if err != nil {
		return nil, nil, err
	}
	finals := map[string][]formats.Summary{}
	for _, c := range ref.Cells {
		b, ok, err := storedOutput(proj, rep, protocol.CollectID(c.Setting, c.Geometry, c.Algorithm), "final")
		if err != nil {
			return nil, nil, err
		}
		if !ok {
			continue
		}
		if finals[compare.FinalInputName(c.Setting, c.Geometry, c.Algorithm)], err = formats.DecodeSummaries(b); err != nil {
			return nil, nil, err
		}
	}
	regret := proj.Config.Metrics.FinalRegret
	return compare.Compare(ref, proto, res, finals, regret), compare.CheckClaims(ref.Claims, proto, res, regret, protocol.Vocabulary().Geometries), nil
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
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
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
	for _, c := range claims {
		word := strings.Trim(compare.ClaimWord(c), "*")
		if word == "fails" {
			word = "FAILS"
		}
		fmt.Fprintf(w, "claim %s: %s — %s\n", terminalText(c.ID), word, terminalText(compare.ClaimDetail(c)))
	}
}
