package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"thv/artifacts"
	"thv/pipeline"
	"thv/protocol"
	"thv/stages/collect"
	"thv/stages/figures"
	"thv/stages/formats"
	runstage "thv/stages/run"
	"thv/stages/summarize"
)

// showLong is thv show's help.
const showLong = `thv show (or thv show summary) prints, for every setting, the mean and 95%
confidence half-width (Student t, over seeds) of hv_last (the mean HV over
the last hv_window rounds) and of the
α-regret of every algorithm's final runs at η*, per geometry.

thv show eta prints η* per algorithm, setting and geometry; thv show tests
THV-UCB against the best baseline of each (setting, geometry), paired by seed:
Δ, bootstrap CI, Cohen's d, one-sided Wilcoxon p and wins.

thv show runs FILTER prints one TSV line per up-to-date run task whose ID
contains FILTER (e.g. d3/concave/THV-UCB/eta=0.01), with all its metrics.
With --trajectory it prints each one's trajectory instead, HV(S_t) per
round: the one the store keeps (a run a figure draws), else computed
again by the run stage from the run's parameters and its inputs in the
store (outputs.trajectories, docs/pipeline.md).

thv show outputs FILTER prints one TSV line per output of each up-to-date
task whose ID contains FILTER, of any kind: its name, its digest in the
store and what its kind declares it holds.

All read what thv repro computed with the same protocol: the summary, η*
and the tests are the outputs of its summarize tasks, not recomputed.`

func newShowCommand() *cobra.Command {
	var pf projectFlags
	var trajectory bool
	cmd := &cobra.Command{
		Use:   "show [summary | eta | tests | runs FILTER | outputs FILTER]",
		Short: "Print results from the store: the per-setting summary, or run summaries",
		Long:  showLong,
		Example: `  thv show
  thv show runs d2/clusters/THV-UCB/eta=0.01/
  thv show runs d2/clusters/THV-UCB/eta=0.01/seed=0 --trajectory
  thv show outputs summarize/d2`,
		Args: cobra.RangeArgs(0, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			proj, rep, err := pf.status(cmd)
			if err != nil {
				return err
			}
			what := "summary"
			if len(args) > 0 {
				what = args[0]
			}
			if what != "runs" && what != "outputs" { // those print TSV
				described, err := proj.Describe()
				if err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "protocol: %s\n", terminalText(described.Name()))
			}
			switch {
			case what == "summary" && len(args) <= 1:
				return printSummary(cmd.OutOrStdout(), proj.Project, rep)
			case what == "runs" && len(args) == 2:
				if trajectory {
					return printRunTrajectories(cmd.Context(), cmd.OutOrStdout(), proj.Project, rep, args[1])
				}
				return printRuns(cmd.OutOrStdout(), proj.Project, rep, args[1])
			case what == "eta" && len(args) == 1:
				return printEta(cmd.OutOrStdout(), proj.Project, rep)
			case what == "tests" && len(args) == 1:
				return printTests(cmd.OutOrStdout(), proj.Project, rep)
			case what == "outputs" && len(args) == 2:
				return printOutputs(cmd.OutOrStdout(), rep, args[1])
			}
			return fmt.Errorf("thv show %s: want summary, eta, tests, runs FILTER or outputs FILTER", strings.Join(args, " "))
		},
	}
	pf.register(cmd)
	cmd.Flags().BoolVar(&trajectory, "trajectory", false, "with runs FILTER: print each run's trajectory (HV(S_t) per round), computed again if the store does not keep it")
	return cmd
}

// printSummary prints the statistics the summarize tasks computed; the
// benchmarks of the proposed method's first seed come from its collect
// tasks.
func printSummary(w io.Writer, proj *protocol.Project, rep *pipeline.Report) error {
	cfg := proj.Config
	proposed := cfg.Proposed()
	level := cfg.Statistics.Confidence
	missing := 0
	for _, s := range cfg.SortedSettings() {
		fmt.Fprintf(w, "\n== %s: d=%d n=%d k=%d T=%d σ=%g, %d seeds — HV_last%d and α-regret (≥0 part), mean ± %g%% CI ==\n",
			s.Name, s.D, s.N, s.K, s.T, s.Sigma, len(cfg.Seeds), cfg.Metrics.HVWindow, level*100)
		fmt.Fprintf(w, "%-16s", "algorithm")
		for _, g := range cfg.Geometries {
			fmt.Fprintf(w, " | %-32s", g)
		}
		fmt.Fprintln(w)
		var cells []formats.Cell
		b, ok, err := proj.Output(rep, protocol.SummarizeID(s.Name), summarize.Cells)
		if err != nil {
			return err
		}
		if ok {
			if cells, err = formats.DecodeCells(b); err != nil {
				return err
			}
		}
		var extra []string
		for _, a := range cfg.SortedAlgorithms() {
			fmt.Fprintf(w, "%-16s", a.Name)
			for _, g := range cfg.Geometries {
				c, ok := formats.CellOf(cells, g, a.Name)
				if !ok {
					missing++
					fmt.Fprintf(w, " | %-32s", "(not run)")
					continue
				}
				fmt.Fprintf(w, " | %.4f±%.3f  %8.1f±%-7.1f", c.HVLast.Mean, c.HVLast.HalfWidth, c.RegretPos.Mean, c.RegretPos.HalfWidth)
				if a.Name == proposed {
					first, err := firstFinalRun(proj, rep, protocol.CollectID(s.Name, g, a.Name))
					if err != nil {
						return err
					}
					extra = append(extra, fmt.Sprintf("%s: η*=%g V*=%.4f HV(G*)=%.4f exact regret %.1f±%.1f",
						g, c.EtaStar, first.VStar, first.HVGreedy, c.RegretExact.Mean, c.RegretExact.HalfWidth))
				}
			}
			fmt.Fprintln(w)
		}
		if len(extra) > 0 {
			sort.Strings(extra)
			fmt.Fprintf(w, "%s (seed %d benchmarks): %s\n", proposed, cfg.Seeds[0], strings.Join(extra, "; "))
		}
	}
	if missing > 0 {
		fmt.Fprintf(w, "\n%d cells not run yet: run thv repro with the same protocol\n", missing)
	}
	return nil
}

// firstFinalRun reads the first row (the first seed) of a collect task's
// output.
func firstFinalRun(proj *protocol.Project, rep *pipeline.Report, id string) (formats.Summary, error) {
	rows, err := protocol.ReadDecoded(proj, rep, id, collect.Final, formats.DecodeSummaries)
	if err != nil {
		return formats.Summary{}, err
	}
	if len(rows) == 0 {
		return formats.Summary{}, fmt.Errorf("%s: no final run", id)
	}
	return rows[0], nil
}

func printEta(w io.Writer, proj *protocol.Project, rep *pipeline.Report) error {
	cfg := proj.Config
	fmt.Fprintf(w, "%-16s", "η*")
	for _, s := range cfg.SortedSettings() {
		for _, g := range cfg.Geometries {
			fmt.Fprintf(w, " %8s", fmt.Sprintf("%s/%.4s", s.Name, g))
		}
	}
	fmt.Fprintln(w)
	cells := map[string][]formats.Cell{}
	for _, s := range cfg.SortedSettings() {
		var err error
		if cells[s.Name], err = protocol.ReadDecoded(proj, rep, protocol.SummarizeID(s.Name), summarize.Cells, formats.DecodeCells); err != nil {
			return err
		}
	}
	for _, a := range cfg.SortedAlgorithms() {
		if len(a.Eta) == 0 {
			continue
		}
		fmt.Fprintf(w, "%-16s", a.Name)
		for _, s := range cfg.SortedSettings() {
			for _, g := range cfg.Geometries {
				v := "n/a"
				if c, ok := formats.CellOf(cells[s.Name], g, a.Name); ok {
					v = fmt.Sprintf("%g", c.EtaStar)
				}
				fmt.Fprintf(w, " %8s", v)
			}
		}
		fmt.Fprintln(w)
	}
	return nil
}

func printTests(w io.Writer, proj *protocol.Project, rep *pipeline.Report) error {
	fmt.Fprintf(w, "%-14s %-16s %9s %23s %8s %10s %5s  %s\n", "setting", "baseline", "Δ", "bootstrap CI", "Cohen d", "Wilcoxon p", "wins", "test")
	for _, s := range proj.Config.SortedSettings() {
		rows, err := protocol.ReadDecoded(proj, rep, protocol.SummarizeID(s.Name), summarize.Tests, formats.DecodeTests)
		if err != nil {
			return err
		}
		for _, t := range rows {
			fmt.Fprintf(w, "%-14s %-16s %9.4f [%9.4f, %9.4f] %8.2f %10.4g %2d/%-2d  %s\n",
				s.Name+"/"+t.Geometry, t.Baseline, t.Delta, t.CILow, t.CIHigh, t.CohensD, t.WilcoxonP, t.Wins, t.N, t.WilcoxonMethod)
		}
	}
	return nil
}

func printRuns(w io.Writer, proj *protocol.Project, rep *pipeline.Report, filter string) error {
	fmt.Fprintf(w, "task\t%s\n", strings.Join(formats.SummaryColumns, "\t"))
	n := 0
	for _, r := range rep.Results {
		if !shownRun(r, filter) {
			continue
		}
		rows, err := protocol.ResultDecoded(proj, r, runstage.Summary, formats.DecodeSummaries)
		if err != nil {
			return err
		}
		for _, x := range rows {
			fmt.Fprintf(w, "%s\t%.6f\t%.6f\t%.6f\t%.6f\t%.4f\t%.4f\t%.4f\n", r.Task.ID, x.HVLast, x.VStar, x.HVGreedy, x.VAlpha, x.RegretAlpha, x.RegretPos, x.RegretExact)
		}
		n++
	}
	if n == 0 {
		return noRunMatches(filter)
	}
	return nil
}

// shownRun reports whether thv show runs FILTER shows r: an up-to-date run
// task whose ID contains filter, and not the twin of a run that keeps its
// trajectory for a figure (protocol.FigureRunID), whose summary is its
// run's.
func shownRun(r *pipeline.Result, filter string) bool {
	return r.Task.Kind == runstage.Kind && strings.Contains(r.Task.ID, filter) && r.Status == pipeline.Cached &&
		!strings.HasSuffix(r.Task.ID, figureRunSuffix)
}

// figureRunSuffix ends the ID of a figure's run (protocol.FigureRunID).
var figureRunSuffix = strings.TrimPrefix(protocol.FigureRunID("", "", "", 0, 0), protocol.RunID("", "", "", 0, 0))

func noRunMatches(filter string) error {
	return fmt.Errorf("no up-to-date run matches %q (run thv repro first; IDs look like run/d3/concave/THV-UCB/eta=0.01/seed=0)", filter)
}

// printRunTrajectories prints, for each run thv show runs FILTER shows,
// a line "# <task>" and its trajectory (printTrajectory): the one the store
// keeps for it or for its figure's twin, else computed again by the run
// stage (runstage.Run, the code of the run's task) from its parameters,
// asking for the trajectory, and its inputs read from the store.
func printRunTrajectories(ctx context.Context, w io.Writer, proj *protocol.Project, rep *pipeline.Report, filter string) error {
	byID := map[string]*pipeline.Result{}
	for _, r := range rep.Results {
		byID[r.Task.ID] = r
	}
	n := 0
	for _, r := range rep.Results {
		if !shownRun(r, filter) {
			continue
		}
		b, err := runTrajectory(ctx, proj, r, byID[r.Task.ID+figureRunSuffix])
		if err != nil {
			return fmt.Errorf("%s: %w", r.Task.ID, err)
		}
		hv, err := formats.DecodeTrajectory(b)
		if err != nil {
			return fmt.Errorf("%s: %w", r.Task.ID, err)
		}
		fmt.Fprintf(w, "# %s\n", r.Task.ID)
		if err := printTrajectory(w, hv); err != nil {
			return err
		}
		n++
	}
	if n == 0 {
		return noRunMatches(filter)
	}
	return nil
}

// runTrajectory returns the trajectory of run r (Parquet, as the run stage
// writes it): its stored output, or its figure twin's, else recomputed.
func runTrajectory(ctx context.Context, proj *protocol.Project, r, twin *pipeline.Result) ([]byte, error) {
	for _, x := range []*pipeline.Result{r, twin} {
		if x == nil || x.Status != pipeline.Cached {
			continue
		}
		if d, ok := x.Outputs.Get(string(runstage.Trajectory)); ok {
			return proj.Store.Get(d)
		}
	}
	raw, err := json.Marshal(r.Task.Params)
	if err != nil {
		return nil, err
	}
	var params runstage.Params
	if err := json.Unmarshal(raw, &params); err != nil {
		return nil, fmt.Errorf("its parameters: %w", err)
	}
	params.Trajectory = true
	asked, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	rec, ok := proj.Lock.Record(r.Task.ID)
	if !ok {
		return nil, fmt.Errorf("not in %s: run thv repro first", proj.LockPath)
	}
	in := map[string][]byte{}
	for role, digest := range rec.InputDigests() {
		d, err := artifacts.ParseDigest(digest)
		if err != nil {
			return nil, fmt.Errorf("input %s: %w", role, err)
		}
		if in[role], err = proj.Store.Get(d); err != nil {
			return nil, fmt.Errorf("input %s: %w (run thv repro to recompute it)", role, err)
		}
	}
	out, err := runstage.Run(ctx, asked, in)
	if err != nil {
		return nil, err
	}
	return out[string(runstage.Trajectory)], nil
}

// printOutputs prints the outputs of the up-to-date tasks whose ID
// contains filter, with what their kinds declare of them.
func printOutputs(w io.Writer, rep *pipeline.Report, filter string) error {
	outs := protocol.Outputs(rep, filter)
	if len(outs) == 0 {
		return fmt.Errorf("no up-to-date task matches %q (run thv repro first; thv dag --tasks lists them)", filter)
	}
	fmt.Fprintln(w, "task\toutput\tdigest\twhat")
	for _, o := range outs {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", terminalText(o.Task), terminalText(o.Name), o.Digest, o.Doc)
	}
	return nil
}

func newDAGCommand() *cobra.Command {
	var pf projectFlags
	var format string
	var tasks bool
	var filter string
	var check bool
	cmd := &cobra.Command{
		Use:   "dag",
		Short: "Show the pipeline DAG (stage kinds, or tasks with --tasks)",
		Long: `Show the pipeline DAG: its stage kinds and how many tasks of each, or its
tasks (--tasks). The plan is checked first, before anything runs: every
input of every task must be of a role its kind declares, from an output
the producing task's kind declares (docs/architecture.md, "A stage kind").
With --check thv dag only checks, and says so.`,
		Example: `  thv dag
  thv dag --check
  thv dag --format mermaid
  thv dag --tasks --filter d2/concave/THV-UCB --format dot | dot -Tsvg > dag.svg`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			proj, err := pf.open(true)
			if err != nil {
				return err
			}
			if err := proj.EnsurePlan(); err != nil { // opening plans lazily; checks the plan
				return err
			}
			if check {
				fmt.Fprintf(cmd.OutOrStdout(), "%d tasks: every input of a role its kind declares, from an output its producer's kind declares\n", len(proj.Plan.Tasks))
				return nil
			}
			g := kindGraph(proj.Plan)
			if tasks {
				g = taskGraph(proj.Plan, filter)
			}
			return g.write(cmd.OutOrStdout(), format)
		},
	}
	pf.register(cmd)
	cmd.Flags().StringVar(&format, "format", "text", "text, dot or mermaid")
	cmd.Flags().BoolVar(&tasks, "tasks", false, "one node per task instead of per stage kind")
	cmd.Flags().StringVar(&filter, "filter", "", "with --tasks: keep tasks whose ID contains this, and their inputs")
	cmd.Flags().BoolVar(&check, "check", false, "only check the plan's edges against the kinds' declarations")
	return cmd
}

type graph struct {
	nodes []string
	label map[string]string
	edges [][2]string
}

func kindGraph(p *pipeline.Plan) graph {
	counts := p.CountByKind()
	g := graph{label: map[string]string{}}
	for _, k := range p.KindOrder() {
		g.nodes = append(g.nodes, k)
		g.label[k] = fmt.Sprintf("%s (%d)", k, counts[k])
	}
	seen := map[[2]string]bool{}
	for _, t := range p.Tasks {
		ups := []*pipeline.Task{}
		if t.Trigger != nil {
			ups = append(ups, t.Trigger)
		}
		for _, d := range t.Deps {
			ups = append(ups, d.From)
		}
		for _, u := range ups {
			e := [2]string{u.Kind, t.Kind}
			if !seen[e] {
				seen[e] = true
				g.edges = append(g.edges, e)
			}
		}
	}
	// Edges added when a task expands (collect at η* selection, figures
	// once the statistics name the algorithms to draw).
	for _, late := range []string{collect.Kind, figures.Kind} {
		if e := [2]string{runstage.Kind, late}; counts[late] > 0 && !seen[e] {
			g.edges = append(g.edges, e)
		}
	}
	return g
}

func taskGraph(p *pipeline.Plan, filter string) graph {
	g := graph{label: map[string]string{}}
	keep := map[*pipeline.Task]bool{}
	var mark func(t *pipeline.Task)
	mark = func(t *pipeline.Task) {
		if keep[t] {
			return
		}
		keep[t] = true
		if t.Trigger != nil {
			mark(t.Trigger)
		}
		for _, d := range t.Deps {
			mark(d.From)
		}
	}
	for _, t := range p.Tasks {
		if strings.Contains(t.ID, filter) {
			mark(t)
		}
	}
	for _, t := range p.Tasks {
		if !keep[t] {
			continue
		}
		g.nodes = append(g.nodes, t.ID)
		g.label[t.ID] = t.ID
		if t.Trigger != nil {
			g.edges = append(g.edges, [2]string{t.Trigger.ID, t.ID})
		}
		for _, d := range t.Deps {
			g.edges = append(g.edges, [2]string{d.From.ID, t.ID})
		}
	}
	return g
}

// graphSyntax is how thv dag --format dot and mermaid write a graph: a
// head, a line per node (its ID, its label), a line per edge (two IDs), a
// tail.
var graphSyntax = map[string]struct{ head, node, edge, tail string }{
	"dot":     {"digraph thv {\n  rankdir=LR;\n  node [shape=box];\n", "  %s [label=%q];\n", "  %s -> %s;\n", "}\n"},
	"mermaid": {"graph LR\n", "  %s[\"%s\"]\n", "  %s --> %s\n", ""},
}

func (g graph) write(w io.Writer, format string) error {
	id := map[string]string{}
	for i, n := range g.nodes {
		id[n] = fmt.Sprintf("n%d", i)
	}
	switch format {
	case "text":
		for _, n := range g.nodes {
			var outs []string
			for _, e := range g.edges {
				if e[0] == n {
					outs = append(outs, g.label[e[1]])
				}
			}
			if len(outs) == 0 {
				fmt.Fprintf(w, "%s\n", g.label[n])
			} else {
				fmt.Fprintf(w, "%s → %s\n", g.label[n], strings.Join(outs, ", "))
			}
		}
	case "dot", "mermaid":
		syntax := graphSyntax[format]
		fmt.Fprint(w, syntax.head)
		for _, n := range g.nodes {
			fmt.Fprintf(w, syntax.node, id[n], g.label[n])
		}
		for _, e := range g.edges {
			fmt.Fprintf(w, syntax.edge, id[e[0]], id[e[1]])
		}
		fmt.Fprint(w, syntax.tail)
	default:
		return fmt.Errorf("--format %q: want text, dot or mermaid", format)
	}
	return nil
}
