package pipeline

import (
	"container/heap"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"time"

	"thv/artifacts"
	"thv/stages"
)

// Status of a task after a pass over the DAG.
type Status int

// Task statuses.
const (
	Pending  Status = iota
	Cached          // up to date: outputs found in the store
	Executed        // ran in this pass
	Failed          // its stage returned an error
	Blocked         // an upstream task failed
	Stale           // dry run: would run
	Waiting         // dry run: its inputs are not known until an upstream task runs
)

func (s Status) String() string {
	return [...]string{"pending", "cached", "executed", "failed", "blocked", "stale", "waiting"}[s]
}

// Options control a pass over the DAG.
type Options struct {
	Jobs     int       // parallel workers; ≤ 0 means all cores
	DryRun   bool      // decide what is stale, run nothing, write nothing
	Progress *Progress // nil: silent
}

// Result is the outcome of one task.
type Result struct {
	Task    *Task
	Status  Status
	Key     string
	Outputs map[string]string // output name → digest
	Reason  string            // why it was stale (executed, stale, waiting)
	Err     error
	Elapsed time.Duration // execution time (unhashed, for reports only)

	parts keyParts // what the key was computed from
}

// Report summarises a pass.
type Report struct {
	Results  []*Result // in plan order
	Executed int
	Cached   int
	Failed   int
	Blocked  int
	Stale    int // dry run: tasks that would run (including waiting ones)
}

// Runner walks a plan against a store and a lock.
type Runner struct {
	Plan  *Plan
	Store *artifacts.Store
	Lock  *Lock // the previous lock: explains staleness and is a fast path

	mu         sync.RWMutex // guards state: workers read it to recompute lost inputs
	state      map[*Task]*Result
	listed     map[artifacts.Digest]bool // objects present when the pass began
	waiting    map[*Task]int
	dependents map[*Task][]*Task
}

type job struct {
	task  *Task
	parts keyParts
	key   string
}

type done struct {
	job
	outputs map[string]string
	err     error
	elapsed time.Duration
}

// Run decides, for every task in dependency order, whether its outputs are
// in the store under its key, and executes those that are not (unless
// opt.DryRun). It never stops at the first failure: independent tasks go on,
// dependents of a failed task are Blocked.
func (r *Runner) Run(opt Options) (*Report, error) {
	jobs := opt.Jobs
	if jobs <= 0 {
		jobs = runtime.NumCPU()
	}
	r.state = map[*Task]*Result{}
	r.waiting = map[*Task]int{}
	r.dependents = map[*Task][]*Task{}
	var ready []*Task
	known := 0
	register := func() {
		for ; known < len(r.Plan.Tasks); known++ {
			t := r.Plan.Tasks[known]
			r.mu.Lock()
			r.state[t] = &Result{Task: t}
			r.mu.Unlock()
			if r.arm(t) == 0 {
				ready = append(ready, t)
			}
		}
		total := 0.0
		for _, t := range r.Plan.Tasks {
			total += t.Cost
		}
		opt.Progress.setTotal(len(r.Plan.Tasks), total)
	}
	register()

	todo := make(chan job)
	results := make(chan done)
	for w := 0; w < jobs; w++ {
		go func() {
			for j := range todo {
				start := time.Now()
				outs, err := r.execute(j.task, j.parts)
				results <- done{job: j, outputs: outs, err: err, elapsed: time.Since(start)}
			}
		}()
	}
	defer close(todo)

	var queue jobQueue // longest tasks first: a short tail when the pool drains
	running := 0
	finish := func(t *Task, st Status) {
		res := r.state[t]
		res.Status = st
		opt.Progress.taskDone(res)
		for _, d := range r.dependents[t] {
			r.waiting[d]--
			if r.waiting[d] == 0 {
				ready = append(ready, d)
			}
		}
	}
	for {
		for len(ready) > 0 {
			t := ready[0]
			ready = ready[1:]
			res := r.state[t]
			if blocker := r.blockedBy(t); blocker != "" {
				res.Reason = blocker
				if opt.DryRun {
					finish(t, Waiting)
				} else {
					finish(t, Blocked)
				}
				continue
			}
			if t.Expand != nil {
				if err := r.expand(t); err != nil {
					res.Err = err
					finish(t, Failed)
					continue
				}
				register()
				if n := r.arm(t); n > 0 {
					continue // its new dependencies will make it ready again
				}
			}
			parts, err := r.keyParts(t)
			if err != nil {
				res.Err = err
				finish(t, Failed)
				continue
			}
			res.Key, res.parts = parts.key(), parts
			if outs, ok := r.lookup(t, res.Key); ok {
				res.Outputs = outs
				finish(t, Cached)
				continue
			}
			res.Reason = r.explain(t, parts)
			if opt.DryRun {
				finish(t, Stale)
				continue
			}
			heap.Push(&queue, job{task: t, parts: parts, key: res.Key})
		}
		for len(queue) > 0 && running < jobs {
			j := queue[0]
			select {
			case todo <- j:
				heap.Pop(&queue)
				running++
				opt.Progress.taskStarted(j.task)
			case d := <-results:
				running--
				r.complete(d, finish)
			}
		}
		if running == 0 && len(queue) == 0 && len(ready) == 0 {
			break
		}
		if running > 0 {
			d := <-results
			running--
			r.complete(d, finish)
		}
	}
	opt.Progress.finish()

	rep := &Report{}
	for _, t := range r.Plan.Tasks {
		res := r.state[t]
		rep.Results = append(rep.Results, res)
		switch res.Status {
		case Executed:
			rep.Executed++
		case Cached:
			rep.Cached++
		case Failed:
			rep.Failed++
		case Blocked:
			rep.Blocked++
		case Stale, Waiting:
			rep.Stale++
		}
	}
	return rep, nil
}

func (r *Runner) complete(d done, finish func(*Task, Status)) {
	res := r.state[d.task]
	res.Elapsed = d.elapsed
	if d.err != nil {
		res.Err = d.err
		finish(d.task, Failed)
		return
	}
	res.Outputs = d.outputs
	finish(d.task, Executed)
}

// arm counts the unfinished dependencies of t (its trigger before
// expansion) and registers t as their dependent.
func (r *Runner) arm(t *Task) int {
	var ups []*Task
	if t.Expand != nil {
		ups = []*Task{t.Trigger}
	} else {
		for _, d := range t.Deps {
			ups = append(ups, d.From)
		}
	}
	n := 0
	for _, u := range ups {
		if res := r.state[u]; res == nil || res.Status == Pending {
			n++
			r.dependents[u] = append(r.dependents[u], t)
		}
	}
	r.waiting[t] = n
	return n
}

// blockedBy names the first dependency that did not produce outputs.
func (r *Runner) blockedBy(t *Task) string {
	ups := []*Task{}
	if t.Expand != nil {
		ups = append(ups, t.Trigger)
	}
	for _, d := range t.Deps {
		ups = append(ups, d.From)
	}
	for _, u := range ups {
		switch r.state[u].Status {
		case Failed, Blocked:
			return "upstream failed: " + u.ID
		case Stale, Waiting:
			return "input will be recomputed: " + u.ID
		}
	}
	return ""
}

func (r *Runner) expand(t *Task) error {
	res := r.state[t.Trigger]
	d, ok := res.Outputs[t.TriggerOutput]
	if !ok {
		return fmt.Errorf("%s: trigger %s has no output %q", t.ID, t.Trigger.ID, t.TriggerOutput)
	}
	b, err := r.getInput(t.Trigger, t.TriggerOutput, d)
	if err != nil {
		return err
	}
	return t.Expand(r.Plan, b)
}

func (r *Runner) keyParts(t *Task) (keyParts, error) {
	srcs, err := t.sources()
	if err != nil {
		return keyParts{}, err
	}
	code, err := codeHashes(srcs)
	if err != nil {
		return keyParts{}, err
	}
	params, err := canonicalParams(t.Params)
	if err != nil {
		return keyParts{}, err
	}
	in := make(map[string]string, len(t.Deps))
	for _, d := range t.Deps {
		dig, ok := r.state[d.From].Outputs[d.Output]
		if !ok {
			return keyParts{}, fmt.Errorf("%s: input %s: %s has no output %q", t.ID, d.Name, d.From.ID, d.Output)
		}
		in[d.Name] = dig
	}
	return keyParts{Kind: t.Kind, Code: code, Params: params, Inputs: in}, nil
}

// lookup finds the outputs of key: first in the lock (no file read), then in
// the store's index; outputs must all be present in the store.
func (r *Runner) lookup(t *Task, key string) (map[string]string, bool) {
	if rec, ok := r.Lock.Record(t.ID); ok && rec.Key == key && r.present(rec.Outputs) {
		return rec.Outputs, true
	}
	k, err := artifacts.ParseKey(key)
	if err != nil {
		return nil, false
	}
	e, ok, err := r.Store.GetEntry(k)
	if err != nil || !ok {
		return nil, false
	}
	outs := make(map[string]string, len(e.Outputs))
	for _, o := range e.Outputs {
		outs[o.Name] = o.Digest.String()
	}
	if !r.present(outs) {
		return nil, false
	}
	return outs, true
}

// present reports whether every output is in the store. It consults a
// listing of the store's objects made once per pass (hundreds of directory
// reads instead of thousands of stats), and stats only what the listing
// lacks, such as objects written during this pass.
func (r *Runner) present(outs map[string]string) bool {
	if r.listed == nil {
		if r.listed, _ = r.Store.Objects(); r.listed == nil {
			r.listed = map[artifacts.Digest]bool{}
		}
	}
	for _, d := range outs {
		dig, err := artifacts.ParseDigest(d)
		if err != nil || !r.listed[dig] && !r.Store.Has(dig) {
			return false
		}
	}
	return len(outs) > 0
}

// explain says why t must run, comparing with its lock record.
func (r *Runner) explain(t *Task, parts keyParts) string {
	rec, ok := r.Lock.Record(t.ID)
	if !ok {
		return "new"
	}
	var why []string
	if d := diffParams(rec.Params, parts.Params); len(d) > 0 {
		why = append(why, "params changed: "+strings.Join(d, ", "))
	}
	var units []string
	for _, u := range sortedKeys(parts.Code) {
		if old, ok := r.Lock.Code[u]; !ok || old != parts.Code[u] {
			units = append(units, u)
		}
	}
	if len(units) > 0 {
		why = append(why, "code changed in "+strings.Join(units, ", "))
	}
	var inputs []string
	recInputs := rec.InputDigests()
	for _, name := range sortedKeys(parts.Inputs) {
		if recInputs[name] != parts.Inputs[name] {
			inputs = append(inputs, name)
		}
	}
	if len(inputs) > 0 {
		why = append(why, "input changed: "+strings.Join(inputs, ", "))
	}
	if len(why) == 0 {
		if rec.Key == parts.key() {
			return "outputs missing from the store"
		}
		return "key changed"
	}
	return strings.Join(why, "; ")
}

// execute loads the inputs of t, runs its stage, and stores the outputs and
// the index entry. It runs on a worker goroutine.
func (r *Runner) execute(t *Task, parts keyParts) (map[string]string, error) {
	kind, err := stages.Lookup(t.Kind)
	if err != nil {
		return nil, err
	}
	in := make(stages.Inputs, len(t.Deps))
	for _, d := range t.Deps {
		b, err := r.getInput(d.From, d.Output, parts.Inputs[d.Name])
		if err != nil {
			return nil, fmt.Errorf("%s: input %s: %w", t.ID, d.Name, err)
		}
		in[d.Name] = b
	}
	outs, err := kind.Run(parts.Params, in)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t.ID, err)
	}
	entry := artifacts.Entry{Kind: t.Kind, Meta: map[string]string{"task": t.ID, "preimage": parts.preimage()}}
	digests := make(map[string]string, len(outs))
	names := sortedKeys(outs)
	for _, name := range names {
		d, err := r.Store.Put(outs[name])
		if err != nil {
			return nil, fmt.Errorf("%s: storing %s: %w", t.ID, name, err)
		}
		digests[name] = d.String()
		entry.Outputs = append(entry.Outputs, artifacts.Output{Name: name, Digest: d, Size: int64(len(outs[name]))})
	}
	k, err := artifacts.ParseKey(parts.key())
	if err != nil {
		return nil, err
	}
	entry.Key = k
	if err := r.Store.PutEntry(entry); err != nil {
		return nil, fmt.Errorf("%s: %w", t.ID, err)
	}
	return digests, nil
}

// getInput reads a verified output of task from. A missing or corrupted
// object is reported and recomputed by re-executing its producer (whose
// inputs are known), never used; a producer that then yields other bytes is
// not reproducible, which is an error.
func (r *Runner) getInput(from *Task, output, digest string) ([]byte, error) {
	d, err := artifacts.ParseDigest(digest)
	if err != nil {
		return nil, err
	}
	b, err := r.Store.Get(d)
	if err == nil {
		return b, nil
	}
	if !errors.Is(err, artifacts.ErrCorrupt) && !errors.Is(err, artifacts.ErrNotFound) {
		return nil, err
	}
	warnf("%v; recomputing %s", err, from.ID)
	r.mu.RLock()
	parts := r.state[from].parts
	r.mu.RUnlock()
	outs, xerr := r.execute(from, parts)
	if xerr != nil {
		return nil, fmt.Errorf("recomputing %s: %w", from.ID, xerr)
	}
	if outs[output] != digest {
		return nil, fmt.Errorf("recomputing %s gave output %s = %s, the store expected %s: the stage is not deterministic", from.ID, output, outs[output], digest)
	}
	return r.Store.Get(d)
}

// NewLock returns the lock describing a completed pass: the previous records
// of tasks that did not complete are kept.
func (r *Runner) NewLock(profile string) (*Lock, error) {
	l := &Lock{Version: lockVersion, Profile: profile, Code: map[string]string{}}
	for _, t := range r.Plan.Tasks {
		res := r.state[t]
		if res.Status != Cached && res.Status != Executed {
			if rec, ok := r.Lock.Record(t.ID); ok {
				l.Tasks = append(l.Tasks, *rec)
			}
			continue
		}
		parts := res.parts
		for u, h := range parts.Code {
			l.Code[u] = h
		}
		var inputs json.RawMessage
		if len(parts.Inputs) > 0 {
			inputs, _ = json.Marshal(parts.Inputs) // map keys sorted: canonical
		}
		l.Tasks = append(l.Tasks, Record{ID: t.ID, Kind: t.Kind, Key: res.Key, Params: parts.Params, Inputs: inputs, Outputs: res.Outputs})
	}
	l.index()
	return l, nil
}

// jobQueue orders jobs by decreasing estimated cost, then plan order.
type jobQueue []job

func (q jobQueue) Len() int { return len(q) }
func (q jobQueue) Less(a, b int) bool {
	if q[a].task.Cost != q[b].task.Cost {
		return q[a].task.Cost > q[b].task.Cost
	}
	return q[a].task.order < q[b].task.order
}
func (q jobQueue) Swap(a, b int) { q[a], q[b] = q[b], q[a] }
func (q *jobQueue) Push(x any)   { *q = append(*q, x.(job)) }
func (q *jobQueue) Pop() any {
	old := *q
	j := old[len(old)-1]
	*q = old[:len(old)-1]
	return j
}
