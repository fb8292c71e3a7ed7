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
	var sample, jobs int
	var all, skipStore bool
	var seed uint64
	cmd := &cobra.Command{
		Use:   "verify [--sample N | --all] [--executor local|process|container]",
		Short: "Re-execute tasks of the lock, ignoring the cache, and compare every output bit for bit",
		Long: `Check that the lock's artifacts are what this build computes, and that the
store holds them intact:

 1. every object of the store is re-hashed and every index entry read
    back and resolved (a flipped byte is found here, and moved to
    corrupt/ so that thv repro recomputes it);
 2. a sample of the lock's tasks (--sample N, drawn per kind with at
    least one of each; or --all) is re-executed from its recorded inputs
    into a scratch store, ignoring the cache, and every output digest is
    compared with the lock's.

Prints a report per kind and exits non-zero on any difference, naming the
task and its first differing output. The lock and the store's artifacts
are not changed. The lock must be current (thv status says all up to
date): verify checks what a repro recorded, it does not make it.`,
		Example: `  thv verify                          # store check + 100 tasks sampled across kinds
  thv verify --all -j 2               # every task of the lock
  thv verify --executor container     # re-execute inside the OCI image`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if all {
				sample = 0
			} else if sample <= 0 {
				return fmt.Errorf("--sample %d: want a positive number of tasks, or --all", sample)
			}
			proj, err := pf.open(false)
			if err != nil {
				return err
			}
			newExec, err := ef.verifier(proj)
			if err != nil {
				return err
			}
			errw := cmd.ErrOrStderr()
			rep, err := proj.Verify(cmd.Context(), pipeline.VerifyOptions{
				Sample: sample, Seed: seed, Jobs: jobs, SkipStore: skipStore,
				NewExecutor: newExec, Progress: phaseProgress(errw, isTerminal(errw)),
			})
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			printVerify(out, rep, skipStore)
			if !rep.OK() {
				if len(rep.Store.Problems) > 0 {
					first := rep.Store.Problems[0].String()
					if len(rep.Damaged) > 0 {
						first = "task " + rep.Damaged[0].String()
					}
					return fmt.Errorf("the store failed its check (%d problems; nothing re-executed: thv repro recomputes what was moved to corrupt/, then verify again); first: %s", len(rep.Store.Problems), first)
				}
				if len(rep.Lock) > 0 {
					return fmt.Errorf("%d lock records disagree with the store; first: %s", countTasks(rep.Lock), rep.Lock[0])
				}
				return fmt.Errorf("%d tasks did not reproduce; first: %s", countTasks(rep.Mismatches), rep.Mismatches[0])
			}
			return nil
		},
	}
	pf.register(cmd)
	ef.register(cmd)
	cmd.Flags().IntVar(&sample, "sample", 100, "re-execute this many tasks, drawn per kind")
	cmd.Flags().BoolVar(&all, "all", false, "re-execute every task of the lock")
	cmd.Flags().Uint64Var(&seed, "seed", 1, "seed of the sample draw")
	cmd.Flags().IntVarP(&jobs, "jobs", "j", 2, "parallel executions")
	cmd.Flags().BoolVar(&skipStore, "skip-store", false, "do not re-hash the whole store first")
	cmd.MarkFlagsMutuallyExclusive("sample", "all")
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
	if len(rep.Lock) == 0 {
		fmt.Fprintln(w, "lock: every record agrees with the store's index")
	}
	for i, m := range rep.Lock {
		if i == 20 {
			fmt.Fprintf(w, "  … %d more\n", len(rep.Lock)-20)
			break
		}
		fmt.Fprintf(w, "  LOCK %s\n", m)
	}
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
		fmt.Fprintf(w, "verified: %d tasks re-executed, every output identical to the lock\n", tot.Checked)
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
