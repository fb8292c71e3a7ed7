package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"thv/artifacts/remote"
	"thv/pipeline"
	"thv/protocol"
	"thv/protocol/config"
	"thv/protocol/export"
)

// projectFlags are shared by the commands that work on a project.
type projectFlags struct {
	params  string
	profile string
	store   string
	set     []string
}

func (f *projectFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.params, "params", "", "protocol file (default: the params.yaml embedded in thv)")
	fl.StringVar(&f.profile, "profile", "paper", "protocol profile: paper (the full protocol) or quick")
	fl.StringVar(&f.store, "store", "", "artifact store directory (default: $THV_STORE, else .thv)")
	fl.StringArrayVar(&f.set, "set", nil, "override a protocol key, e.g. --set settings.d3.T=300 (repeatable)")
}

// loadOptions are the flags' protocol.
func (f *projectFlags) loadOptions() config.LoadOptions {
	return config.LoadOptions{ParamsFile: f.params, Profile: f.profile, Set: f.set}
}

// open opens the project; readOnly commands never create or change the
// store.
func (f *projectFlags) open(readOnly bool) (*export.Project, error) {
	return f.openWith(protocol.Options{ReadOnly: readOnly})
}

// status is every command's prologue that reads results: the project,
// opened read-only, and its status (every task's key, up to date or not).
func (f *projectFlags) status(cmd *cobra.Command) (*export.Project, *pipeline.Report, error) {
	proj, err := f.open(true)
	if err != nil {
		return nil, nil, err
	}
	rep, err := proj.Status(cmd.Context())
	return proj, rep, err
}

// openWith opens the project with opt's options besides the flags'.
func (f *projectFlags) openWith(opt protocol.Options) (*export.Project, error) {
	opt.LoadOptions = f.loadOptions()
	opt.StoreDir = f.store
	return export.Open(opt)
}

// logger writes warnings as text lines on w.
func logger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{} // timestamps add nothing to a terminal line
			}
			return a
		},
	}))
}

// reproFlags are thv repro's flags.
type reproFlags struct {
	pf           projectFlags
	jobs         int
	dry, jsonOut bool
	ef           executorFlags
	rf           remoteFlags
}

func newReproCommand() *cobra.Command {
	r := &reproFlags{}
	cmd := &cobra.Command{
		Use:   "repro",
		Short: "Reproduce the paper: run every stale task of the DAG",
		Long: `Bring every task of the reproduction DAG up to date: instances, benchmarks
(V*, HV(G*)), the runs of the η grid, the η* selection and the final runs.
Tasks whose key (code, parameters, inputs) is already in the store are not
run again; thv.lock is rewritten at the end. Ctrl-C stops cleanly: running
tasks are abandoned, nothing half-written is kept, and the lock records what
completed, so the next repro resumes.`,
		Example: `  thv repro                      # the full paper protocol, all cores
  thv repro --profile quick -j 2  # a fast end-to-end check
  thv repro --dry-run             # what would run, and why
  thv repro --executor process    # run tasks in thv exec-task worker processes
  thv repro --executor container  # run tasks in the OCI image of this thv (runc or podman)
  thv repro --executor slurm      # run tasks as Slurm job arrays (docs/cluster.md)`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return r.run(cmd) },
	}
	r.pf.register(cmd)
	cmd.Flags().IntVarP(&r.jobs, "jobs", "j", 0, "parallel workers (default: all cores)")
	cmd.Flags().BoolVar(&r.dry, "dry-run", false, "list what would run and why; run nothing")
	cmd.Flags().BoolVar(&r.jsonOut, "json", false, "end with one JSON line of counts")
	r.ef.register(cmd)
	r.rf.register(cmd, true)
	return cmd
}

// run brings the project up to date with the flags' executor and remote,
// and reports the pass.
func (r *reproFlags) run(cmd *cobra.Command) (err error) {
	proj, err := r.pf.openWith(protocol.Options{ReadOnly: r.dry})
	if err != nil {
		return err
	}
	if !r.dry {
		if err := proj.CheckWritable(); err != nil {
			return err
		}
	}
	if r.jobs == 0 {
		r.jobs = r.ef.defaultJobs(proj.Project)
	}
	errw := cmd.ErrOrStderr()
	var prog *pipeline.Progress
	if !r.dry {
		prog = pipeline.NewProgress(errw, isTerminal(errw), r.jobs)
	}
	exec, image, err := r.ef.executor(proj.Project)
	if err != nil {
		return err
	}
	if exec != nil {
		defer exec.Close()
	}
	var rm *remote.Remote
	if !r.dry { // a dry run decides from the local store alone
		if rm, err = r.rf.open(cmd.Context(), errw); err != nil { // remotecmd.go
			return err
		}
	}
	if row, err := r.ef.row(); err == nil {
		proj.Run = reportRun(row.name) // what results/index.html says of this pass
	}
	start := time.Now()
	rep, err := proj.Repro(cmd.Context(), pipeline.Options{Jobs: r.jobs, DryRun: r.dry, Progress: prog, Executor: exec, Logger: logger(errw), Image: image, Remote: pipelineRemote(rm)})
	if rerr := finishRemote(rm, errw, r.rf.require); rerr != nil {
		defer func() { err = errors.Join(err, rerr) }() // after the run's own report: local work is kept
	}
	if err != nil {
		if rep != nil && cmd.Context().Err() != nil {
			fmt.Fprintf(cmd.OutOrStdout(), "interrupted: %d executed, %d cached, %d not run; lock %s records what completed\n",
				rep.Executed, rep.Cached, rep.Cancelled+rep.Failed, proj.LockPath)
		}
		return err
	}
	return r.report(cmd, proj.Project, rep, prog == nil, time.Since(start))
}

// report prints what a pass did (or, dry, would do), and returns the
// error of its failed tasks and disputes.
func (r *reproFlags) report(cmd *cobra.Command, proj *protocol.Project, rep *pipeline.Report, noProgress bool, took time.Duration) error {
	out, errw := cmd.OutOrStdout(), cmd.ErrOrStderr()
	described, err := proj.Describe()
	if err != nil {
		return err
	}
	if r.dry {
		printStale(out, proj.Plan, rep, 20)
	} else {
		fmt.Fprintf(out, "%d tasks: %d executed, %d cached, %d failed, %d blocked in %s; lock %s\n",
			len(rep.Results), rep.Executed, rep.Cached, rep.Failed, rep.Blocked, took.Round(time.Millisecond), proj.LockPath)
		fmt.Fprintf(out, "protocol: %s\n", terminalText(described.Name()))
	}
	if r.jsonOut {
		json.NewEncoder(out).Encode(map[string]any{
			"tasks": len(rep.Results), "executed": rep.Executed, "cached": rep.Cached,
			"failed": rep.Failed, "blocked": rep.Blocked, "stale": rep.Stale,
			"dry_run": r.dry, "seconds": took.Seconds(),
			"lock": proj.LockPath, "protocol": protocolOf(described),
		})
	}
	if rep.Failed > 0 {
		if noProgress { // a dry run has no progress to print them as tasks fail
			printFailed(errw, rep)
		}
		return fmt.Errorf("%d tasks failed (see FAILED lines above); fix the cause and rerun: finished tasks are kept", rep.Failed)
	}
	if !r.dry && len(rep.Disputes) > 0 {
		for _, d := range rep.Disputes {
			fmt.Fprintf(errw, "DISPUTE %s\n", d)
		}
		return fmt.Errorf("%d tasks: the lock and the store disagreed (see DISPUTE lines); each was re-executed and the computation decided, so %s and results/ hold what this build computes, and the losing index entries are in the store's corrupt/. "+
			"Find out who changed the store or the lock (a shared store, a merge), then rerun: the next repro has nothing to settle", len(rep.Disputes), proj.LockPath)
	}
	return nil
}

// printFailed prints a FAILED line per failed task, as the progress does
// when a task fails.
func printFailed(w io.Writer, rep *pipeline.Report) {
	for _, r := range rep.Results {
		if r.Status == pipeline.Failed {
			fmt.Fprintf(w, "FAILED %s: %v\n", r.Task.ID, r.Err)
		}
	}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

type staleTask struct {
	Task   string `json:"task"`
	Kind   string `json:"kind"`
	Reason string `json:"reason"`
}

func staleTasks(rep *pipeline.Report) []staleTask {
	var out []staleTask
	for _, r := range rep.Results {
		if r.Status == pipeline.Stale || r.Status == pipeline.Waiting {
			out = append(out, staleTask{r.Task.ID, r.Task.Kind, r.Reason})
		}
	}
	return out
}

// printStale prints stale tasks grouped by kind, at most limit per kind (0: all).
func printStale(w io.Writer, plan *pipeline.Plan, rep *pipeline.Report, limit int) {
	stale := staleTasks(rep)
	if len(stale) == 0 {
		if rep.Failed+rep.Blocked > 0 { // not "all up to date": see the FAILED lines
			fmt.Fprintf(w, "%d of %d tasks up to date, none stale; %d failed, %d blocked\n", rep.Cached, len(rep.Results), rep.Failed, rep.Blocked)
			return
		}
		fmt.Fprintf(w, "all %d tasks up to date\n", len(rep.Results))
		return
	}
	fmt.Fprintf(w, "%d of %d tasks stale\n", len(stale), len(rep.Results))
	byKind := map[string][]staleTask{}
	for _, s := range stale {
		byKind[s.Kind] = append(byKind[s.Kind], s)
	}
	for _, kind := range plan.KindOrder() {
		list := byKind[kind]
		if len(list) == 0 {
			continue
		}
		reasons := map[string]int{}
		for _, s := range list {
			reasons[reasonClass(s.Reason)]++
		}
		var parts []string
		for _, r := range sortedByCount(reasons) {
			parts = append(parts, fmt.Sprintf("%d %s", reasons[r], r))
		}
		fmt.Fprintf(w, "\n%s: %d stale (%s)\n", kind, len(list), strings.Join(parts, ", "))
		for i, s := range list {
			if limit > 0 && i == limit {
				fmt.Fprintf(w, "  … %d more (thv status --all)\n", len(list)-limit)
				break
			}
			fmt.Fprintf(w, "  %s: %s\n", s.Task, s.Reason)
		}
	}
}

// reasonClass shortens a reason to its category for the per-kind summary.
func reasonClass(r string) string {
	if i := strings.IndexAny(r, ":"); i > 0 {
		return r[:i]
	}
	return r
}

func sortedByCount(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if m[keys[i]] != m[keys[j]] {
			return m[keys[i]] > m[keys[j]]
		}
		return keys[i] < keys[j]
	})
	return keys
}

func newStatusCommand() *cobra.Command {
	var pf projectFlags
	var jsonOut, all, verify bool
	cmd := &cobra.Command{
		Use:   "status",
		Short: "List stale tasks and why they are stale",
		Long: `Compare every task's key with the store and thv.lock, and say why each stale
task must run: new; params changed (down to the field: T 3000 → 300); code
changed in <units>; input changed: <role>; outputs missing from the store;
or input will be recomputed (an upstream task is stale). With --verify it
also re-hashes every output of the up-to-date tasks: a flipped byte is found
here (and quarantined, so that thv repro recomputes it), not only when read.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			proj, rep, err := pf.status(cmd)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			var damage []pipeline.Damage
			if verify {
				if damage, err = proj.VerifyOutputs(cmd.Context(), rep); err != nil {
					return err
				}
			}
			if jsonOut {
				stale := staleTasks(rep)
				if stale == nil {
					stale = []staleTask{}
				}
				if err := json.NewEncoder(out).Encode(map[string]any{"total": len(rep.Results), "stale": stale}); err != nil {
					return err
				}
			} else {
				limit := 20
				if all {
					limit = 0
				}
				printStale(out, proj.Plan, rep, limit)
			}
			for _, d := range damage {
				fmt.Fprintf(cmd.ErrOrStderr(), "DAMAGED %s: output %s: %v\n", d.Task, d.Output, d.Err)
			}
			if len(damage) > 0 {
				return fmt.Errorf("%d outputs of up-to-date tasks are missing or corrupt in the store (now quarantined): thv repro recomputes them", len(damage))
			}
			if verify && !jsonOut {
				fmt.Fprintln(out, "every output of the up-to-date tasks verified")
			}
			return nil
		},
	}
	pf.register(cmd)
	cmd.Flags().BoolVar(&jsonOut, "json", false, `print {"total": N, "stale": [{"task","kind","reason"}]}`)
	cmd.Flags().BoolVar(&all, "all", false, "list every stale task, not the first 20 per kind")
	cmd.Flags().BoolVar(&verify, "verify", false, "also re-hash every output of the up-to-date tasks (reads the whole store)")
	return cmd
}

func newGCCommand() *cobra.Command {
	var pf projectFlags
	var dry bool
	var rf remoteFlags
	var grace time.Duration
	cmd := &cobra.Command{
		Use:   "gc",
		Short: "Remove store objects that no current task references",
		Long: `Remove from the store every object and index entry that no up-to-date task of
the current protocol (profile, params) references. Artifacts of other
profiles are removed too unless you run gc with that profile's settings.
gc removes only files the store created, never follows a symbolic link, and
refuses to run while a thv repro holds the store.

With --remote it collects the remote store instead: index entries the lock
does not reference, then objects no remaining entry names, but only files
older than --grace (default 24h), so that a concurrent push is safe: its
objects are young until its entry is written (artifacts/remote/gc.go).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if rf.url != "" { // $THV_REMOTE alone never turns a local gc into a remote one
				return remoteGC(cmd, &pf, &rf, grace, dry) // remotecmd.go
			}
			proj, err := pf.open(dry)
			if err != nil {
				return err
			}
			st, err := proj.GC(cmd.Context(), dry)
			if err != nil {
				return err
			}
			report := st.String()
			if dry {
				report = "would have " + report
			}
			fmt.Fprintln(cmd.OutOrStdout(), report)
			return nil
		},
	}
	pf.register(cmd)
	cmd.Flags().BoolVar(&dry, "dry-run", false, "count what would be removed")
	rf.register(cmd, false)
	cmd.Flags().DurationVar(&grace, "grace", remote.DefaultGrace, "with --remote: delete only files older than this")
	return cmd
}
