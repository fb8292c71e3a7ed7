package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"thv/pipeline"
	"thv/stages/protocol"
	"thv/stages/report"
)

func newReportCommand() *cobra.Command {
	var pf projectFlags
	cmd := &cobra.Command{
		Use:   "report",
		Short: "Write results/index.html: one page of the reproduction, to open in a browser",
		Long: `Export results/ from the store, as thv repro does at its end, and with it
results/index.html: one self-contained page (no network, no script needed)
with the provenance of the run (protocol, lock, code, image, executor,
date, what thv verify last showed), the paper's tables, every published
value beside ours with its verdict, the claims, the readings sweep's
summary (after thv readings) and the figures. Every task must be up to
date (thv repro first); the store is only read. docs/report.md.`,
		Example: `  thv report                    # results/index.html of the paper's profile
  thv report --profile quick`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			proj, err := pf.open(true)
			if err != nil {
				return err
			}
			status, err := proj.Status(cmd.Context())
			if err != nil {
				return err
			}
			for _, r := range status.Results {
				if r.Status != pipeline.Cached {
					return fmt.Errorf("task %s is not up to date (%s%s): the page shows the stored outputs of every task; run thv repro first", r.Task.ID, r.Status, reasonText(r.Reason))
				}
			}
			proj.Run = reportRun("")
			if _, err := proj.ExportResults(status); err != nil {
				return fmt.Errorf("exporting results: %w", err)
			}
			page := filepath.Join(proj.ResultsDir(), protocol.ReportName)
			fi, err := os.Stat(page)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "wrote %s (%.0f kB); open it in a browser\n", page, float64(fi.Size())/1e3)
			// The page's headline, the last line of make repro.
			v, ok, err := proj.Verdict(status)
			if err != nil {
				return err
			}
			if ok {
				fmt.Fprintf(out, "verdict: %s\n", terminalText(v.Sentence()))
			}
			return nil
		},
	}
	pf.register(cmd)
	return cmd
}

// reportRun is what results/index.html says of this thv and the executor
// of the pass ("": the previous page's, when it shows the same results).
// The date is the lock file's (protocol: reportPage).
func reportRun(executor string) report.Run {
	thv := "thv"
	if bi, ok := debug.ReadBuildInfo(); ok {
		version, _ := buildVersion()
		thv += " " + strings.TrimSpace(version)
		if bi.Main.Sum != "" {
			thv += ", module sum " + bi.Main.Sum
		}
	}
	return report.Run{Executor: executor, Thv: thv + " (" + runtime.Version() + ")"}
}

// verifySummary is the line thv verify records for the page.
func verifySummary(rep *pipeline.VerifyReport) string {
	var tasks, checked, agreed int
	for _, k := range rep.Kinds {
		tasks, checked, agreed = tasks+k.Tasks, checked+k.Checked, agreed+k.Agreed
	}
	verdict := "every output identical"
	if !rep.OK() {
		verdict = fmt.Sprintf("FAILED: %d store problems, %d disputes, %d mismatches", len(rep.Store.Problems), len(rep.Disputes), len(rep.Mismatches))
	}
	return fmt.Sprintf("%s: %d of %d tasks re-executed, %d identical; %s", time.Now().UTC().Format("2006-01-02 15:04 UTC"), checked, tasks, agreed, verdict)
}
