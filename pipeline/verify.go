package pipeline

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"thv/artifacts"
	"thv/pipeline/tempdir"
)

// VerifyOptions control Project.Verify.
type VerifyOptions struct {
	// Sample re-executes this many tasks, drawn per kind in proportion to
	// its size with at least one of each kind; 0 (or ≥ the task count)
	// re-executes every task: the complete check, and the default.
	Sample int
	Seed   uint64 // of the sample draw (callers draw it at random and print it)
	Jobs   int    // parallel executions; ≤ 0 means 1
	// TaskTimeout is the time ceiling of one re-executed task; 0: none.
	// A task over it fails, named, and the verification with it.
	TaskTimeout time.Duration
	// NewExecutor returns the executor to re-execute with, writing outputs
	// to a scratch store in the empty directory scratchDir and reading
	// inputs from the project store (Worker.Out). Verify opens the scratch
	// store only once the executor is made (which may mount a bounded file
	// system there), and reads every answer back from it. nil: in process.
	NewExecutor func(scratchDir string) (Executor, error)
	// SkipStore skips re-hashing the whole store first.
	SkipStore bool
	// Progress, if not nil, is called as the store is checked (phase
	// "store") and as tasks are re-executed (phase "tasks").
	Progress func(phase string, done, total int)
}

// VerifyReport is what Verify found. OK reports whether everything agreed.
type VerifyReport struct {
	Store      artifacts.CheckReport
	Kinds      []KindVerdict // in the plan's kind order
	Mismatches []Mismatch    // in plan order: differing outputs and failed executions
	// Disputes are the tasks whose lock record and store index entry
	// disagree. Each was re-executed (Computed, unless that failed: see
	// Mismatches) to say which record is right; nothing else was, and
	// nothing was replaced: thv repro settles them.
	Disputes []*Dispute
	// Damaged names the tasks whose outputs or index entries failed the
	// store check (then nothing is re-executed: thv repro repairs first).
	Damaged []Damage
}

// Complete reports whether every task of the lock was re-executed.
func (r *VerifyReport) Complete() bool {
	for _, k := range r.Kinds {
		if k.Checked < k.Tasks {
			return false
		}
	}
	return len(r.Kinds) > 0
}

// Tasks counts the tasks of the lock that Verify considered.
func (r *VerifyReport) Tasks() int {
	n := 0
	for _, k := range r.Kinds {
		n += k.Tasks
	}
	return n
}

// EscapeChance is the probability that a single forged task escapes a
// sampled check like this one: the largest, over kinds, of the share of a
// kind's tasks that were not re-executed. 0 for a complete check.
func (r *VerifyReport) EscapeChance() (float64, string) {
	var p float64
	var kind string
	for _, k := range r.Kinds {
		if k.Tasks == 0 {
			continue
		}
		if q := float64(k.Tasks-k.Checked) / float64(k.Tasks); q > p {
			p, kind = q, k.Kind
		}
	}
	return p, kind
}

// KindVerdict counts what Verify did with the tasks of one kind.
type KindVerdict struct {
	Kind                                     string
	Tasks, Checked, Agreed, Differed, Failed int
}

// Mismatch is one task whose re-execution did not give the lock's outputs:
// Output differs (Want in the lock, Got now), or the execution failed
// (Err), or the lock records another key than this build computes.
type Mismatch struct {
	Task, Kind, Output string
	Want, Got          artifacts.Digest
	Err                error
}

// String names the task and what differs: an output's digests (the
// lock's and the re-execution's), or the failure.
func (m Mismatch) String() string {
	switch {
	case m.Err != nil:
		return fmt.Sprintf("%s: %v", m.Task, m.Err)
	case m.Got.IsZero():
		return fmt.Sprintf("%s: output %s: the lock records %s, the re-execution gives none", m.Task, m.Output, m.Want)
	case m.Want.IsZero():
		return fmt.Sprintf("%s: output %s: the re-execution gives %s, the lock records none", m.Task, m.Output, m.Got)
	}
	return fmt.Sprintf("%s: output %s: the lock records %s, the re-execution gives %s", m.Task, m.Output, m.Want, m.Got)
}

// OK reports whether the store checked clean, no record disagreed and
// every re-executed task gave the lock's outputs bit for bit.
func (r *VerifyReport) OK() bool {
	return len(r.Store.Problems) == 0 && len(r.Disputes) == 0 && len(r.Mismatches) == 0
}

// Verify re-executes tasks of the lock, ignoring the cache, and compares
// every output digest with the lock's; first it re-hashes the whole store
// and reads every task's record from the store's index, honouring no seal.
// Executions read their inputs from the store (the lock's recorded
// inputs, checked by the status pass) and write to a scratch store that
// is removed afterwards; every answer is confirmed against the scratch
// store (its index entry read, its objects re-hashed), whatever executor
// gave it. The project store and the lock are not changed (except that
// corrupt files found are moved to corrupt/, as on any read).
//
// A task whose lock record and index entry disagree is re-executed to say
// which is right, and reported; the rest is then not re-executed (thv
// repro settles disputes first, and the lock's seal, if any, is set aside
// so that it does read the index). Otherwise the lock must be current for
// this build and store: every task of the plan up to date, so that each
// one's inputs are at hand and its key is what this code computes; Verify
// says which task is not and that thv repro comes first.
func (p *Project) Verify(ctx context.Context, opt VerifyOptions) (*VerifyReport, error) {
	unlock, err := p.Store.LockShared() // a gc must not remove the inputs
	if err != nil {
		return nil, err
	}
	defer unlock()
	rep := &VerifyReport{}
	if !opt.SkipStore {
		var progress func(int, int)
		if opt.Progress != nil {
			progress = func(d, t int) { opt.Progress("store", d, t) }
		}
		if rep.Store, err = p.Store.Check(ctx, 4, progress); err != nil {
			return nil, err
		}
	}
	// A listing prefetched when the project was opened predates the
	// check, which may have moved corrupt files aside.
	p.listing = nil
	defer func(v bool) { p.IgnoreSeal = v }(p.IgnoreSeal)
	p.IgnoreSeal = true
	status, err := p.Status(ctx)
	if err != nil {
		return nil, err
	}
	if len(rep.Store.Problems) > 0 {
		// Name the tasks whose outputs or entries the check found bad;
		// re-executing against a damaged store would only report them
		// again as missing inputs.
		rep.Damaged = p.damagedTasks(status, rep.Store.Problems)
		return rep, nil
	}
	var jobs []verifyJob
	if len(status.Disputes) > 0 {
		rep.Disputes = status.Disputes
		jobs = p.disputeJobs(status)
		// A seal of this lock would keep the next repro from reading the
		// index, and so from settling the disputes: it no longer holds
		// (best effort: a read-only store cannot be repaired anyway).
		if !p.Lock.digest.IsZero() {
			_ = p.Store.SetAsideEntry(sealKey(p.Lock.digest), "the lock's seal: thv verify found its records disputed by the store's index")
		}
	} else if jobs, err = p.verifyJobs(status, opt, rep); err != nil {
		return nil, err
	}
	sd, err := tempdir.New("thv-verify-")
	if err != nil {
		return nil, err
	}
	defer sd.Remove()
	var ex Executor
	if opt.NewExecutor != nil {
		if ex, err = opt.NewExecutor(sd.Path()); err != nil {
			return nil, err
		}
		defer ex.Close()
	}
	scratch, err := artifacts.Open(sd.Path(), artifacts.Scratch)
	if err != nil {
		return nil, err
	}
	if ex == nil {
		ex = &Local{Worker: &Worker{Store: p.Store, Kinds: p.Kinds, Out: scratch}}
	}
	found := make([][]Mismatch, len(jobs))
	got := make([]map[string]artifacts.Digest, len(jobs))
	var next, done int
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range max(1, min(opt.Jobs, len(jobs))) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i >= len(jobs) {
					return
				}
				j := jobs[i]
				outs, err := reexecute(ctx, ex, scratch, j.spec, opt.TaskTimeout)
				got[i] = outs
				found[i] = compareOutputs(j, outs, err)
				mu.Lock()
				done++
				if opt.Progress != nil {
					opt.Progress("tasks", done, len(jobs))
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if rep.Disputes != nil {
		for i, j := range jobs {
			if len(found[i]) == 0 || found[i][0].Err == nil {
				j.dispute.Computed = OutputsOf(got[i])
			}
			for _, m := range found[i] {
				if m.Err != nil {
					rep.Mismatches = append(rep.Mismatches, m)
				}
			}
		}
		return rep, nil
	}
	verdict := map[string]*KindVerdict{}
	for i := range rep.Kinds {
		verdict[rep.Kinds[i].Kind] = &rep.Kinds[i]
	}
	for i, j := range jobs {
		v := verdict[j.task.Kind]
		switch {
		case len(found[i]) == 0:
			v.Agreed++
		case found[i][0].Err != nil:
			v.Failed++
		default:
			v.Differed++
		}
		rep.Mismatches = append(rep.Mismatches, found[i]...)
	}
	return rep, nil
}

// reexecute runs one spec under the time ceiling and confirms the answer
// against what the worker stored in scratch: a worker's printed digests
// are a claim, the re-hashed objects are the evidence.
func reexecute(ctx context.Context, ex Executor, scratch *artifacts.Store, spec *Spec, timeout time.Duration) (map[string]artifacts.Digest, error) {
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	outs, err := ex.Execute(ctx, spec)
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, fmt.Errorf("exceeded the time ceiling of %s per task (raise it with --task-timeout if the task is honest)", timeout)
		}
		return nil, err
	}
	if err := confirmOutputs(scratch.Untrusted(), spec, outs); err != nil {
		return nil, err
	}
	return outs, nil
}

// verifyJob is one task to re-execute and the outputs its lock records.
type verifyJob struct {
	task    *Task
	spec    *Spec
	want    Outputs
	dispute *Dispute // the dispute it settles, if any
}

// disputeJobs re-executes the disputed tasks of a status pass, under the
// key this build computes, comparing with the lock's record.
func (p *Project) disputeJobs(status *Report) []verifyJob {
	var jobs []verifyJob
	for _, r := range status.Results {
		if d := r.Dispute; d != nil {
			jobs = append(jobs, verifyJob{task: r.Task, spec: newSpec(r.Task, r.code, r.parts, r.Key), want: d.Lock, dispute: d})
		}
	}
	return jobs
}

// verifyJobs checks that the lock is current and draws the tasks to
// re-execute; it fills rep.Kinds with the task counts.
func (p *Project) verifyJobs(status *Report, opt VerifyOptions, rep *VerifyReport) ([]verifyJob, error) {
	byKind := map[string][]int{}
	for i, r := range status.Results {
		if r.Status != Cached {
			return nil, fmt.Errorf("task %s is not up to date (%s%s): the lock does not describe this build and store; run thv repro first, then verify", r.Task.ID, r.Status, reasonSuffix(r.Reason))
		}
		byKind[r.Task.Kind] = append(byKind[r.Task.Kind], i)
	}
	if len(p.Lock.Tasks) != len(status.Results) {
		return nil, fmt.Errorf("the lock records %d tasks, the plan has %d: run thv repro first, then verify", len(p.Lock.Tasks), len(status.Results))
	}
	chosen := make([]bool, len(status.Results))
	// One stream for the whole draw, kinds in plan order: the same seed
	// draws the same sample.
	rng := rand.New(rand.NewPCG(opt.Seed, 0))
	for _, k := range p.Plan.KindOrder() {
		idx := byKind[k]
		n := len(idx)
		if opt.Sample > 0 && opt.Sample < len(status.Results) {
			// Proportional, at least one per kind, drawn without
			// replacement by a seeded shuffle.
			n = max(1, min(len(idx), opt.Sample*len(idx)/len(status.Results)))
			idx = slices.Clone(idx)
			rng.Shuffle(len(idx), func(a, b int) { idx[a], idx[b] = idx[b], idx[a] })
			idx = idx[:n]
		}
		for _, i := range idx {
			chosen[i] = true
		}
		rep.Kinds = append(rep.Kinds, KindVerdict{Kind: k, Tasks: len(byKind[k]), Checked: n})
	}
	var jobs []verifyJob
	for i, r := range status.Results {
		if !chosen[i] {
			continue
		}
		rec, ok := p.Lock.Record(r.Task.ID)
		if !ok {
			return nil, fmt.Errorf("task %s is not in the lock: run thv repro first, then verify", r.Task.ID)
		}
		// The spec carries the lock's key: a worker whose code or inputs
		// give another key refuses it, and that is reported.
		spec := newSpec(r.Task, r.code, r.parts, rec.Key)
		jobs = append(jobs, verifyJob{task: r.Task, spec: spec, want: rec.Outputs})
	}
	return jobs, nil
}

func reasonSuffix(reason string) string {
	if reason == "" {
		return ""
	}
	return ": " + reason
}

// compareOutputs lists how a re-execution's outputs differ from the lock's.
func compareOutputs(j verifyJob, got map[string]artifacts.Digest, err error) []Mismatch {
	if err != nil {
		return []Mismatch{{Task: j.task.ID, Kind: j.task.Kind, Err: err}}
	}
	var out []Mismatch
	want := j.want.Map()
	names := sortedKeys(want)
	for _, n := range sortedKeys(got) {
		if _, ok := want[n]; !ok {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	for _, n := range names {
		if want[n] != got[n] {
			out = append(out, Mismatch{Task: j.task.ID, Kind: j.task.Kind, Output: n, Want: want[n], Got: got[n]})
		}
	}
	return out
}

// damagedTasks maps the store check's problems to the tasks of a status
// pass whose outputs (objects, as the lock records them) or keys (index
// entries) they are.
func (p *Project) damagedTasks(status *Report, problems []artifacts.Problem) []Damage {
	bad := map[string]artifacts.Problem{}
	for _, pr := range problems {
		bad[pr.Name] = pr
	}
	var out []Damage
	for _, r := range status.Results {
		if pr, ok := bad[r.Key.String()]; ok {
			out = append(out, Damage{Task: r.Task.ID, Err: fmt.Errorf("index entry %s: %w", r.Key, pr.Err)})
		}
		outs := r.Outputs
		if rec, ok := p.Lock.Record(r.Task.ID); ok {
			outs = rec.Outputs
		}
		for _, o := range outs { // sorted by name
			if pr, ok := bad[o.Digest.String()]; ok {
				out = append(out, Damage{Task: r.Task.ID, Output: o.Name, Digest: o.Digest, Err: pr.Err})
			}
		}
	}
	return out
}
