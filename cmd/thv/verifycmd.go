package main

import (
	"fmt"
	"io"
	"sync"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"thv/pipeline"
	"thv/stages/compare"
)

func newVerifyCommand() *cobra.Command {
	var pf projectFlags
	var ef executorFlags
	var vf verifyFlags
	var skipStore, jsonOut bool
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

Prints a report per kind and the protocol the lock is of, and exits 1 on
any difference, naming the task and its first differing output; 3 when it
could not check (this machine failed), 4 after a sample that agreed (a
partial check), 2 on a wrong command line (README.md, "Exit status"). The lock and the store's artifacts
are not changed. The lock must be current (thv status says all up to
date): verify checks what a repro recorded, it does not make it.`,
		Example: `  thv verify                          # store check + every task re-executed
  thv verify -j 2 --task-timeout 5m
  thv verify --sample 100             # a random partial check (prints its seed)
  thv verify --executor container     # re-execute inside the OCI image`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out, errw := cmd.OutOrStdout(), cmd.ErrOrStderr()
			text := out
			if jsonOut {
				text = errw // stdout is the JSON object alone
			}
			var c verifyRun
			err := c.run(cmd, &pf, &ef, &vf, skipStore, text)
			sampled := c.opt.Sample > 0
			if jsonOut {
				j := newCheckJSON("verify", c.proto)
				j.addReport(c.rep, c.opt.Sample, c.opt.Seed)
				j.Against = c.against
				j.Items = c.items
				if err := j.finish(cmd.Context(), out, err, sampled); err != nil {
					return err
				}
			}
			if err == nil && sampled {
				return sampleAgreed
			}
			return err
		},
	}
	cmd.Flags().BoolVar(&jsonOut, "json", false, "print one JSON object (outcome, exit status, protocol, counts per kind, differences, what was checked); the report goes to stderr")
	pf.register(cmd)
	ef.register(cmd)
	vf.register(cmd)
	cmd.Flags().BoolVar(&skipStore, "skip-store", false, "do not re-hash the whole store first")
	return cmd
}

// verifyRun is one thv verify: what it found, for its text and its JSON.
type verifyRun struct {
	opt     pipeline.VerifyOptions
	proto   *compare.Protocol
	rep     *pipeline.VerifyReport
	against string // the results' headline against the paper
	items   checkList
}

// run verifies, writing its report to text; the error says why the check
// did not verify, classified (rejected, not checked, usage).
func (c *verifyRun) run(cmd *cobra.Command, pf *projectFlags, ef *executorFlags, vf *verifyFlags, skipStore bool, text io.Writer) error {
	var err error
	if c.opt, err = vf.options(cmd); err != nil {
		return usageError(err)
	}
	proj, err := pf.open(false)
	if err != nil {
		return usageError(err)
	}
	d, err := proj.Describe()
	if err != nil {
		return notChecked(err)
	}
	c.proto = &d
	fmt.Fprintf(text, "protocol: %s\n", terminalText(d.Name()))
	if c.opt.NewExecutor, err = ef.verifier(proj); err != nil {
		return usageError(err)
	}
	errw := cmd.ErrOrStderr()
	vf.printSample(text, c.opt, "thv verify")
	c.opt.SkipStore = skipStore
	c.opt.Progress = phaseProgress(errw, isTerminal(errw))
	rep, err := proj.Verify(cmd.Context(), c.opt)
	if err != nil {
		return notChecked(err)
	}
	c.rep = rep
	printVerify(text, rep, skipStore, d.ShortName(3))
	if err := proj.RecordVerify(verifySummary(rep)); err != nil { // for results/index.html
		fmt.Fprintf(errw, "thv: recording the verdict for thv report: %v\n", err)
	}
	if skipStore {
		c.items.notChecked("the store's other objects", "--skip-store: only the lock's outputs were read")
	} else {
		c.items.checked("the store", "every object re-hashed, every index entry resolved")
	}
	if !rep.OK() {
		switch {
		case len(rep.Store.Problems) > 0:
			first := rep.Store.Problems[0].String()
			if len(rep.Damaged) > 0 {
				first = "task " + rep.Damaged[0].String()
			}
			return rejected(fmt.Errorf("the store failed its check (%d problems; nothing re-executed: thv repro recomputes what was moved to corrupt/, then verify again); first: %s", len(rep.Store.Problems), terminalText(first)))
		case len(rep.Disputes) > 0:
			return rejected(fmt.Errorf("%d tasks: the lock and the store's index disagree (thv repro re-executes them and keeps what the computation gives); first: %s", len(rep.Disputes), terminalText(rep.Disputes[0].String())))
		}
		return rejected(fmt.Errorf("%d tasks did not reproduce; first: %s", countTasks(rep.Mismatches), terminalText(rep.Mismatches[0].String())))
	}
	c.items.checked("the lock", "every record compared with the store's index entry for its key")
	if rep.Complete() {
		c.items.checked("every task", fmt.Sprintf("all %d re-executed from their recorded inputs, every output identical to the lock's", rep.Tasks()))
	} else {
		c.items.notChecked("every task", sampleVerdict(rep))
	}
	if status, err := proj.Status(cmd.Context()); err == nil {
		if v, ok, err := proj.Verdict(status); err == nil && ok {
			c.against = v.Sentence()
			fmt.Fprintf(text, "against the paper: %s\n", terminalText(c.against))
		}
	}
	if !rep.Complete() {
		fmt.Fprintln(text, sampleVerdict(rep))
	}
	return nil
}

// printVerify prints the store check and the per-kind table, ending with
// the verdict on the lock of protocol (its name).
func printVerify(w io.Writer, rep *pipeline.VerifyReport, skippedStore bool, protocol string) {
	if !skippedStore {
		fmt.Fprintf(w, "store: %d objects (%.1f MB) re-hashed, %d index entries resolved, %d problems\n",
			rep.Store.Objects, float64(rep.Store.Bytes)/1e6, rep.Store.Entries, len(rep.Store.Problems))
		for _, p := range rep.Store.Problems {
			fmt.Fprintf(w, "  BAD %s\n", terminalText(p.String()))
		}
	}
	for _, d := range rep.Damaged {
		fmt.Fprintf(w, "  DAMAGED %s\n", terminalText(d.String()))
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
			fmt.Fprintf(w, "  DISPUTE %s\n", terminalText(d.String()))
		}
		for _, m := range rep.Mismatches {
			fmt.Fprintf(w, "  FAILED %s\n", terminalText(m.String()))
		}
		return
	}
	fmt.Fprintln(w, "lock: every record agrees with the store's index entry for its key (read from the index, no seal honoured)")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "kind\ttasks\tre-executed\tidentical\tdiffering\tfailed\t")
	var tot pipeline.KindVerdict
	for _, k := range rep.Kinds {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t\n", terminalText(k.Kind), k.Tasks, k.Checked, k.Agreed, k.Differed, k.Failed)
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
		fmt.Fprintf(w, "  DIFFERS %s\n", terminalText(m.String()))
	}
	if rep.OK() {
		if rep.Complete() {
			fmt.Fprintf(w, "verified: all %d tasks re-executed, every output identical to the lock (%s)\n", tot.Checked, terminalText(protocol))
		} else {
			fmt.Fprintf(w, "sample agreed: %d of %d tasks re-executed, every output identical to the lock (%s)\n", tot.Checked, tot.Tasks, terminalText(protocol))
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
