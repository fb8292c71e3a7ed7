package main

import (
	"fmt"
	"io"
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
	var all, markdown bool
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

Without --reference it prints the compare task of the last thv repro (also
exported to results/compare.md and Parquet). With --reference it compares
the same results with another file (-o writes its report).

The exit status is what CI gates on: with --fail-on cells (the default), 1
if any value differs or is missing; with claims, 1 if any claim fails; with
none, 0.`,
		Example: `  thv compare                         # the paper, after thv repro
  thv compare --fail-on none          # report only (make repro)
  thv compare --reference mine.yaml -o mine.md
  thv compare --fail-on claims --markdown >> "$GITHUB_STEP_SUMMARY"   # CI job summary (docs/ci.md)`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			switch failOn {
			case "cells", "claims", "none":
			default:
				return fmt.Errorf("--fail-on %q: want cells, claims or none", failOn)
			}
			var ref *compare.Reference
			if reference != "" { // first: a bad file is refused before the store is read
				b, err := userfile.ReadFile(reference, compare.MaxReferenceBytes)
				if err != nil {
					return fmt.Errorf("--reference: %w", err)
				}
				if ref, err = protocol.ParseReference(b); err != nil {
					return fmt.Errorf("%s: %w", reference, err)
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
			if reference == "" {
				if rows, claims, err = storedComparison(proj, rep); err != nil {
					return err
				}
			} else {
				if proj.Config.Instances.Mode == protocol.InstancesFixed {
					one := ref.OneInstance() // as the compare stage judges it
					ref = &one
				}
				if rows, claims, err = compareWith(proj, rep, ref); err != nil {
					return err
				}
				report = compare.Markdown(ref, rows, claims)
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
			if markdown {
				fmt.Fprint(out, report)
			} else {
				printComparison(out, rows, claims, all)
			}
			n := compare.Count(rows, claims)
			switch {
			case failOn == "cells" && n.Agree < n.Values:
				return fmt.Errorf("%d of %d published values differ or are missing (--fail-on cells)", n.Values-n.Agree, n.Values)
			case failOn == "claims" && n.Hold < n.Claims:
				return fmt.Errorf("%d of %d claims fail (--fail-on claims)", n.Claims-n.Hold, n.Claims)
			}
			return nil
		},
	}
	pf.register(cmd)
	cmd.Flags().StringVar(&reference, "reference", "", "a reference file of published values and claims (default: the paper's, from the last thv repro)")
	cmd.Flags().StringVar(&failOn, "fail-on", "cells", "exit 1 when: cells (a value differs or is missing), claims (a claim fails) or none")
	cmd.Flags().StringVarP(&output, "output", "o", "", "also write the Markdown report to this file")
	cmd.Flags().BoolVar(&all, "all", false, "list every value, not only the differing ones")
	cmd.Flags().BoolVar(&markdown, "markdown", false, "print the Markdown report (as results/compare.md) instead of the text table: for $GITHUB_STEP_SUMMARY")
	return cmd
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
func compareWith(proj *protocol.Project, rep *pipeline.Report, ref *compare.Reference) ([]formats.Comparison, []formats.ClaimCheck, error) {
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
	return compare.Compare(ref, res, finals, regret), compare.CheckClaims(ref.Claims, res, regret, protocol.Vocabulary().Geometries), nil
}

// printComparison prints the counts per setting and metric, the values
// that differ (or all), and the claims.
func printComparison(w io.Writer, rows []formats.Comparison, claims []formats.ClaimCheck, all bool) {
	type key struct{ setting, metric string }
	var order []key
	counts := map[key][3]int{} // agree, differ, missing
	for _, r := range rows {
		k := key{r.Setting, r.Metric}
		c, seen := counts[k]
		if !seen {
			order = append(order, k)
		}
		switch {
		case r.Missing:
			c[2]++
		case r.Agrees:
			c[0]++
		default:
			c[1]++
		}
		counts[k] = c
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "setting\tmetric\tagree\tdiffer\tmissing")
	for _, k := range order {
		c := counts[k]
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\n", k.setting, k.metric, c[0], c[1], c[2])
	}
	tw.Flush()
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "cell\tmetric\tours\tpublished\trel\tpct\tverdict")
	for _, r := range rows {
		if r.Agrees && !all {
			continue
		}
		verdict := "agrees"
		switch {
		case r.Missing:
			fmt.Fprintf(tw, "%s/%s/%s\t%s\t—\t%.4g ± %.2g\t\t\tmissing\n", r.Setting, r.Geometry, r.Algorithm, r.Metric, r.Published, r.PublishedCI)
			continue
		case !r.Agrees:
			verdict = "DIFFERS"
		}
		fmt.Fprintf(tw, "%s/%s/%s\t%s\t%.4g ± %.2g\t%.4g ± %.2g\t%+.1f%%\t%.0f\t%s\n", r.Setting, r.Geometry, r.Algorithm, r.Metric,
			r.Ours, r.OursCI, r.Published, r.PublishedCI, 100*r.RelDiff, r.Percentile, verdict)
	}
	tw.Flush()
	fmt.Fprintln(w)
	for _, c := range claims {
		mark := "holds"
		if !c.Holds {
			mark = "FAILS"
		}
		fmt.Fprintf(w, "claim %s: %s — %s\n", c.ID, mark, c.Detail)
	}
	n := compare.Count(rows, claims)
	fmt.Fprintf(w, "\n%d of %d published values agree (%d missing); %d of %d claims hold\n", n.Agree, n.Values, n.Missing, n.Hold, n.Claims)
}
