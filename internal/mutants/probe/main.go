// Command probe re-executes every task of a lock with the code it is built
// from: for each task, the code identity this build computes for it, the
// packages of its import closure, and the SHA-256 of each output it gives
// from the inputs the lock records (read from the store). The mutation
// run (internal/mutants/run) builds it from each mutant of the module.
//
// It writes one JSON line per task to standard output, after a line
// {"start": ID} that names the task it is about to run: a task that hangs
// (past -timeout) ends the probe with exit status 3 and a line {"id": ID,
// "timeout": true}; one that crashes the process leaves its start line
// last. -after ID resumes after a task.
//
// The tasks' code roots are the protocol's plan's, unfolded from the
// lock's outputs; a mutant's probe takes them, and the identities a base
// probe computed, from -base (what the base printed): it runs first the
// tasks whose identity is the base's, whose outputs must be the base's,
// then the others, or with -skip-changed it only names the others
// ({"id": ID, "skipped": true}).
package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime/debug"
	"slices"
	"syscall"
	"time"

	"thv/artifacts"
	"thv/pipeline"
	"thv/pipeline/codeid"
	"thv/protocol"
	"thv/protocol/config"
)

// Result is a task's line.
type Result struct {
	ID       string            `json:"id"`
	Code     string            `json:"code,omitempty"`     // its code identity's digest
	Roots    []string          `json:"roots,omitempty"`    // its code roots beyond its kind's entry
	Packages []string          `json:"packages,omitempty"` // its import closure: what a package-level identity would cover
	Outputs  map[string]string `json:"outputs,omitempty"`  // output name → hex SHA-256
	Error    string            `json:"error,omitempty"`    // the stage's error or panic
	Timeout  bool              `json:"timeout,omitempty"`
	Skipped  bool              `json:"skipped,omitempty"` // not run (-skip-changed)
}

func main() {
	lockPath := flag.String("lock", "", "the lock whose tasks to re-execute")
	storeDir := flag.String("store", "", "the store holding their inputs")
	params := flag.String("params", "", "the protocol the lock is of (for the tasks' code roots)")
	after := flag.String("after", "", "resume after this task")
	baseFile := flag.String("base", "", "a base probe's results (JSON: task ID → its line): the tasks' roots, and the identities that order the tasks")
	skipChanged := flag.Bool("skip-changed", false, "do not run the tasks whose identity differs from the base's")
	timeout := flag.Duration("timeout", 30*time.Second, "the longest a task may run")
	flag.Parse()
	if err := probe(*lockPath, *storeDir, *params, *baseFile, *after, *skipChanged, *timeout); err != nil {
		fmt.Fprintln(os.Stderr, "probe:", err)
		os.Exit(1)
	}
}

func probe(lockPath, storeDir, params, baseFile, after string, skipChanged bool, timeout time.Duration) error {
	// A mutant may allocate without end: the address space is bounded.
	syscall.Setrlimit(syscall.RLIMIT_AS, &syscall.Rlimit{Cur: 6 << 30, Max: 6 << 30})
	debug.SetMaxStack(256 << 20)
	kinds, err := protocol.Kinds()
	if err != nil {
		return err
	}
	m, ok := kinds.Code().(*codeid.Module)
	if !ok {
		return fmt.Errorf("the kinds' code is a %T", kinds.Code())
	}
	lock, err := pipeline.ReadLock(lockPath)
	if err != nil {
		return err
	}
	store, err := artifacts.Open(storeDir, artifacts.Existing)
	if err != nil {
		return err
	}
	var base map[string]Result
	if baseFile != "" {
		// A mutant's probe takes the roots from the base's: unfolding the
		// plan runs code (decoding η*) that a mutant may have broken.
		b, err := os.ReadFile(baseFile)
		if err == nil {
			err = json.Unmarshal(b, &base)
		}
		if err != nil {
			return err
		}
	} else {
		roots, err := planRoots(params, lock, store)
		if err != nil {
			return err
		}
		base = map[string]Result{}
		for id, r := range roots {
			base[id] = Result{ID: id, Roots: r}
		}
	}

	// Every task's identity first: the tasks whose identity is the base's
	// run first, as their outputs are what the run proves.
	results := make([]Result, len(lock.Tasks))
	var same, changed []int
	for i, rec := range lock.Tasks {
		b, ok := base[rec.ID]
		if !ok {
			return fmt.Errorf("the lock's task %s is not in the protocol's plan", rec.ID)
		}
		res := Result{ID: rec.ID, Roots: b.Roots}
		kind, err := kinds.Lookup(rec.Kind)
		if err != nil {
			return err
		}
		if id, err := kinds.Identity(rec.Kind, b.Roots); err != nil {
			res.Error = "code identity: " + err.Error()
		} else {
			res.Code = id.Digest
		}
		if res.Packages, err = m.Packages(append([]string{kind.Entry}, b.Roots...)...); err != nil {
			return err
		}
		results[i] = res
		if baseFile == "" || res.Code == b.Code {
			same = append(same, i)
		} else {
			changed = append(changed, i)
		}
	}

	out := json.NewEncoder(os.Stdout)
	skipping := after != ""
	for _, i := range slices.Concat(same, changed) {
		rec, res := &lock.Tasks[i], results[i]
		if skipping {
			skipping = rec.ID != after
			continue
		}
		if skipChanged && baseFile != "" && res.Code != base[rec.ID].Code {
			res.Skipped = true
			out.Encode(res)
			continue
		}
		out.Encode(map[string]string{"start": rec.ID, "code": res.Code})
		kind, _ := kinds.Lookup(rec.Kind)
		inputs := map[string][]byte{}
		for role, ds := range rec.InputDigests() {
			d, err := artifacts.ParseDigest(ds)
			if err != nil {
				return err
			}
			if inputs[role], err = store.Get(d); err != nil {
				return fmt.Errorf("%s: input %s: %w", rec.ID, role, err)
			}
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			defer func() {
				if p := recover(); p != nil {
					res.Error = fmt.Sprint("panic: ", p)
				}
			}()
			outs, err := kind.Run(context.Background(), rec.Params, inputs)
			if err != nil {
				res.Error = err.Error()
				return
			}
			res.Outputs = map[string]string{}
			for _, name := range slices.Sorted(func(yield func(string) bool) {
				for n := range outs {
					if !yield(n) {
						return
					}
				}
			}) {
				sum := sha256.Sum256(outs[name])
				res.Outputs[name] = hex.EncodeToString(sum[:])
			}
		}()
		select {
		case <-done:
			out.Encode(res)
		case <-time.After(timeout):
			hung := results[i] // res is the running task's
			hung.Timeout = true
			out.Encode(hung)
			os.Exit(3) // the task's goroutine cannot be stopped
		}
	}
	return nil
}

// planRoots returns every task's code roots: the protocol's plan unfolded
// from the outputs the lock records, as a pass unfolds it (the final runs
// at η* are added when their selection's output is known, with their
// algorithm's code root).
func planRoots(params string, lock *pipeline.Lock, store *artifacts.Store) (map[string][]string, error) {
	cfg, err := config.Load(config.LoadOptions{ParamsFile: params})
	if err != nil {
		return nil, err
	}
	plan, err := protocol.NewPlan(cfg)
	if err != nil {
		return nil, err
	}
	for i := 0; i < len(plan.Tasks); i++ {
		t := plan.Tasks[i]
		if t.Expand == nil {
			continue
		}
		rec, ok := lock.Record(t.Trigger.ID)
		if !ok {
			return nil, fmt.Errorf("%s: the lock has no task %s", t.ID, t.Trigger.ID)
		}
		d, ok := rec.Outputs.Get(t.TriggerOutput)
		if !ok {
			return nil, fmt.Errorf("%s: the lock has no output %s of %s", t.ID, t.TriggerOutput, t.Trigger.ID)
		}
		b, err := store.Get(d)
		if err != nil {
			return nil, err
		}
		if err := t.Expand(plan, b); err != nil {
			return nil, fmt.Errorf("%s: %w", t.ID, err)
		}
		t.Expand = nil
	}
	roots := make(map[string][]string, len(plan.Tasks))
	for _, t := range plan.Tasks {
		roots[t.ID] = t.Roots
	}
	return roots, nil
}
