package main

import (
	"fmt"
	"io"
	"sync"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"thv/pipeline"
)

func newVerifyCommand() *cobra.Command {
	var pf projectFlags
	var ef executorFlags
	var vf verifyFlags
	var skipStore bool
	cmd := &cobra.Command{
		Use:   "verify [--sample N] [--executor process|local|container]",
		Short: "Re-execute every task of the lock, ignoring the cache, and compare every output bit for bit",
		Long: `Check that the lock's artifacts are what this build computes, and that the
store holds them intact. Nothing in the store or the lock vouches for
itself (no seal is honoured, no worker's answer is taken on its word):

 1. every object of the store is re-hashed and every index entry read
    back and resolved (a flipped byte is found here, and moved to
    corrupt/ so that thv repro recomputes it);
 2. every lock record is compared with the store's index entry for its
    key; where they disagree, the task is re-executed to say which is
    right, and verify fails naming it (thv repro settles it);
 3. every task of the lock is re-executed from its recorded inputs into a
    scratch store, ignoring the cache, each in a worker process under a
    time and a memory ceiling (--task-timeout, --task-memory); what each
    worker stored is read back and re-hashed, and every output digest is
    compared with the lock's. --sample N re-executes only a random sample
    (drawn from the system's random source, its seed printed): a partial
    check, and it says so.

Prints a report per kind and exits non-zero on any difference, naming the
task and its first differing output. The lock and the store's artifacts
are not changed. The lock must be current (thv status says all up to
date): verify checks what a repro recorded, it does not make it.`,
		Example: `  thv verify                          # store check + every task re-executed
  thv verify -j 2 --task-timeout 5m
  thv verify --sample 100             # a random partial check (prints its seed)
  thv verify --executor container     # re-execute inside the OCI image`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opt, err := vf.options(cmd)
			if err != nil {
				return err
			}
			proj, err := pf.open(false)
			if err != nil {
				return err
			}
			if opt.NewExecutor, err = ef.verifier(proj); err != nil {
				return err
			}
			out, errw := cmd.OutOrStdout(), cmd.ErrOrStderr()
			vf.printSample(out, opt, "thv verify")
			opt.SkipStore = skipStore
			opt.Progress = phaseProgress(errw, isTerminal(errw))
			rep, err := proj.Verify(cmd.Context(), opt)
			if err != nil {
				return err
			}
			printVerify(out, rep, skipStore)
			if err := proj.RecordVerify(verifySummary(rep)); err != nil { // for results/index.html
				fmt.Fprintf(errw, "thv: recording the verdict for thv report: %v\n", err)
			}
			if !rep.OK() {
				switch {
				case len(rep.Store.Problems) > 0:
					first := rep.Store.Problems[0].String()
					if len(rep.Damaged) > 0 {
						first = "task " + rep.Damaged[0].String()
					}
					return fmt.Errorf("the store failed its check (%d problems; nothing re-executed: thv repro recomputes what was moved to corrupt/, then verify again); first: %s", len(rep.Store.Problems), first)
				case len(rep.Disputes) > 0:
					return fmt.Errorf("%d tasks: the lock and the store's index disagree (thv repro re-executes them and keeps what the computation gives); first: %s", len(rep.Disputes), rep.Disputes[0])
				}
				return fmt.Errorf("%d tasks did not reproduce; first: %s", countTasks(rep.Mismatches), rep.Mismatches[0])
			}
			if !rep.Complete() {
				fmt.Fprintln(out, sampleVerdict(rep))
			}
			return nil
		},
	}
	pf.register(cmd)
	ef.register(cmd)
	vf.register(cmd)
	cmd.Flags().BoolVar(&skipStore, "skip-store", false, "do not re-hash the whole store first")
	return cmd
}

// printVerify prints the store check and the per-kind table.
func printVerify(w io.Writer, rep *pipeline.VerifyReport, skippedStore bool) {
	if !skippedStore {
		fmt.Fprintf(w, "store: %d objects (%.1f MB) re-hashed, %d index entries resolved, %d problems\n",
			rep.Store.Objects, float64(rep.Store.Bytes)/1e6, rep.Store.Entries, len(rep.Store.Problems))
		for _, p := range rep.Store.Problems {
			fmt.Fprintf(w, "  BAD %s\n", p)
		}
	}
	for _, d := range rep.Damaged {
		fmt.Fprintf(w, "  DAMAGED %s\n", d)
	}
	if len(rep.Store.Problems) > 0 {
		return
	}
	if len(rep.Disputes) > 0 {
		fmt.Fprintf(w, "lock: %d records disagree with the store's index (only these tasks were re-executed, to say which is right):\n", len(rep.Disputes))
		for i, d := range rep.Disputes {
			if i == 20 {
				fmt.Fprintf(w, "  … %d more\n", len(rep.Disputes)-20)
				break
			}
			fmt.Fprintf(w, "  DISPUTE %s\n", d)
		}
		for _, m := range rep.Mismatches {
			fmt.Fprintf(w, "  FAILED %s\n", m)
		}
		return
	}
	fmt.Fprintln(w, "lock: every record agrees with the store's index entry for its key (read from the index, no seal honoured)")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "kind\ttasks\tre-executed\tidentical\tdiffering\tfailed\t")
	var tot pipeline.KindVerdict
	for _, k := range rep.Kinds {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t\n", k.Kind, k.Tasks, k.Checked, k.Agreed, k.Differed, k.Failed)
		tot.Tasks += k.Tasks
		tot.Checked += k.Checked
		tot.Agreed += k.Agreed
		tot.Differed += k.Differed
		tot.Failed += k.Failed
	}
	fmt.Fprintf(tw, "all\t%d\t%d\t%d\t%d\t%d\t\n", tot.Tasks, tot.Checked, tot.Agreed, tot.Differed, tot.Failed)
	tw.Flush()
	for i, m := range rep.Mismatches {
		if i == 20 {
			fmt.Fprintf(w, "  … %d more\n", len(rep.Mismatches)-20)
			break
		}
		fmt.Fprintf(w, "  DIFFERS %s\n", m)
	}
	if rep.OK() {
		if rep.Complete() {
			fmt.Fprintf(w, "verified: all %d tasks re-executed, every output identical to the lock\n", tot.Checked)
		} else {
			fmt.Fprintf(w, "sample agreed: %d of %d tasks re-executed, every output identical to the lock\n", tot.Checked, tot.Tasks)
		}
	}
}

func countTasks(ms []pipeline.Mismatch) int {
	n := 0
	for i, m := range ms {
		if i == 0 || m.Task != ms[i-1].Task {
			n++
		}
	}
	return n
}

// phaseProgress prints "store 1234/5678" style progress: redrawn on a
// terminal, every 10% otherwise.
func phaseProgress(w io.Writer, live bool) func(phase string, done, total int) {
	var mu sync.Mutex
	last := map[string]int{}
	return func(phase string, done, total int) {
		mu.Lock()
		defer mu.Unlock()
		if live {
			fmt.Fprintf(w, "\r%s %d/%d", phase, done, total)
			if done == total {
				fmt.Fprintln(w)
			}
			return
		}
		step := max(1, total/10)
		if done == total || done/step > last[phase] {
			last[phase] = done / step
			fmt.Fprintf(w, "%s %d/%d\n", phase, done, total)
		}
	}
}
