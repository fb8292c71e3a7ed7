package pipeline

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"time"

	"thv/artifacts"
)

// Status is the state of a task after a pass over the DAG.
type Status int

// The statuses of a task: Pending before the pass decides; then one of the
// others.
const (
	Pending   Status = iota
	Cached           // up to date: outputs found in the store
	Executed         // ran in this pass
	Failed           // its stage returned an error
	Blocked          // an upstream task failed
	Stale            // dry run: would run
	Waiting          // dry run: its inputs are not known until an upstream task runs
	Cancelled        // the pass was cancelled before the task could run
)

// String returns the status as thv prints it: "cached", "executed", ….
func (s Status) String() string {
	return [...]string{"pending", "cached", "executed", "failed", "blocked", "stale", "waiting", "cancelled"}[s]
}

// Options control a pass over the DAG.
type Options struct {
	Jobs     int          // parallel executions; ≤ 0 means all cores
	DryRun   bool         // decide what is stale, run nothing, write nothing
	Executor Executor     // nil: Local on the runner's store
	Progress *Progress    // nil: silent
	Logger   *slog.Logger // warnings (recovered inputs); nil: slog.Default()
	// Image is the digest of the container image the executor runs tasks
	// in, if any: provenance, recorded in the lock, never in a key.
	Image string
	// Remote, if set, is asked before a task executes and given its
	// result after (remote.go).
	Remote Remote
}

// Result is the outcome of one task.
type Result struct {
	Task    *Task
	Status  Status
	Key     artifacts.Key
	Outputs Outputs
	Reason  string        // why it was stale (executed, stale, waiting)
	Err     error         // why it failed (without the task ID: callers name it)
	Elapsed time.Duration // execution time (unhashed, for reports only)
	// Dispute is set when the lock and the store disagreed about this
	// task's outputs; Computed is filled once it re-ran.
	Dispute *Dispute

	parts keyParts // what the key was computed from
	code  string   // the code identity digest
}

// Report summarises a pass.
type Report struct {
	Results   []*Result // in the lock's order (Plan.lockOrder)
	Executed  int
	Cached    int
	Failed    int
	Blocked   int
	Stale     int // dry run: tasks that would run (including waiting ones)
	Cancelled int
	// Disputes lists, in the lock's order, the tasks whose lock record and
	// store index disagreed or whose lock record their re-execution did
	// not reproduce.
	Disputes []*Dispute
}

// Runner walks a plan against a store and a lock.
type Runner struct {
	Plan  *Plan
	Kinds *Kinds
	Store *artifacts.Store
	Lock  *Lock // the previous lock: explains staleness and is a fast path

	results []*Result                        // by Task.order, during and after Run
	listing <-chan map[artifacts.Digest]bool // a prefetched object listing, if any
	// trustLock says the lock's bytes are sealed in this store (seal.go):
	// its records may be used without reading the index.
	trustLock bool
	// reads are the objects the pass read to expand tasks: a no-op
	// certificate lists them, to be re-hashed as this pass did (noop.go).
	reads []artifacts.Digest
}

// result returns t's result in the last pass.
func (r *Runner) result(t *Task) *Result { return r.results[t.order] }

// job is one execution handed to the executor.
type job struct {
	task *Task
	spec *Spec
	// recovery marks the re-execution of a task whose outputs were known
	// but lost; its consumers wait in pass.recovering.
	recovery bool
	retried  bool // it already had an input recovered once
	remote   bool // ask Options.Remote before executing it
}

type done struct {
	job     *job
	outputs Outputs
	err     error
	elapsed time.Duration
	fetched bool // from Options.Remote, not executed
}

// waiter is what to do once a lost output has been recomputed.
type waiter struct {
	ok   func()
	fail func(error)
}

// pass is the scheduler's state during Run; only Run's goroutine touches it.
type pass struct {
	*Runner
	ctx        context.Context
	opt        Options
	log        *slog.Logger
	listed     map[artifacts.Digest]bool // objects present when the pass began
	waiting    []int                     // by Task.order: upstream tasks not yet finished
	dependents [][]*Task                 // by Task.order: tasks waiting for this one
	ready      []*Task
	queue      jobQueue
	recovering map[*Task][]waiter
	known      int     // tasks of the plan registered so far
	armed      int     // … and armed (their upstream tasks counted)
	cost       float64 // their summed cost estimates
	hashers    []*keyHasher
	codeWhy    sync.Map // code identity digest → its changes since the lock (explainCode)
}

// Run decides, for every task in dependency order, whether its outputs are
// in the store under its key, and has the executor run those that are not
// (unless opt.DryRun). It never stops at the first failure: independent
// tasks go on, dependents of a failed task are Blocked. When ctx is
// cancelled it starts nothing more, waits for what runs, and marks the
// rest Cancelled; the error is then ctx's.
func (r *Runner) Run(ctx context.Context, opt Options) (*Report, error) {
	jobs := opt.Jobs
	if jobs <= 0 {
		jobs = runtime.NumCPU()
	}
	exec := opt.Executor
	if exec == nil && !opt.DryRun {
		exec = &Local{Worker: &Worker{Store: r.Store, Kinds: r.Kinds}}
	}
	s := &pass{
		Runner: r, ctx: ctx, opt: opt, log: opt.Logger,
		recovering: map[*Task][]waiter{},
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	r.results, r.reads = nil, nil
	s.register()

	// A worker's answer is a claim unless the worker is this process's
	// own code: the host reads back what it stored and re-hashes it.
	_, trusted := exec.(inProcess)
	todo := make(chan *job)
	results := make(chan done)
	for w := 0; w < jobs; w++ {
		go func() {
			for j := range todo {
				start := time.Now()
				if j.remote && opt.Remote != nil {
					if outs, ok := opt.Remote.Fetch(ctx, r.Store, j.spec.Key, j.spec.Kind, j.task.ID); ok {
						results <- done{job: j, outputs: OutputsOf(outs), elapsed: time.Since(start), fetched: true}
						continue
					}
				}
				outs, err := exec.Execute(ctx, j.spec)
				if err == nil && !trusted {
					err = confirmOutputs(r.Store, j.spec, outs)
				}
				if err == nil && opt.Remote != nil && !j.recovery {
					opt.Remote.Publish(ctx, r.Store, j.spec.Key, j.task.ID)
				}
				results <- done{job: j, outputs: OutputsOf(outs), err: err, elapsed: time.Since(start)}
			}
		}()
	}
	running := 0
	receive := func(d done) {
		running--
		opt.Progress.jobEnded()
		s.complete(d)
	}
	for {
		s.decideReady()
		for len(s.queue) > 0 && running < jobs && ctx.Err() == nil {
			select {
			case todo <- s.queue[0]:
				heap.Pop(&s.queue)
				running++
				opt.Progress.jobStarted()
			case d := <-results:
				receive(d)
			case <-ctx.Done():
			}
		}
		if running == 0 && len(s.ready) == 0 && (len(s.queue) == 0 || ctx.Err() != nil) {
			break
		}
		if running > 0 {
			receive(<-results)
		}
	}
	close(todo)
	opt.Progress.finish()

	rep := &Report{}
	for _, t := range r.Plan.lockOrder() {
		res := r.result(t)
		if res.Status == Pending {
			res.Status = Cancelled
		}
		rep.Results = append(rep.Results, res)
		if res.Dispute != nil {
			rep.Disputes = append(rep.Disputes, res.Dispute)
		}
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
		case Cancelled:
			rep.Cancelled++
		}
	}
	if err := ctx.Err(); err != nil {
		return rep, err
	}
	return rep, nil
}

// register adds the tasks appended to the plan since the last call.
func (s *pass) register() {
	for ; s.known < len(s.Plan.Tasks); s.known++ {
		t := s.Plan.Tasks[s.known]
		s.cost += t.Cost
		s.results = append(s.results, &Result{Task: t})
		s.waiting = append(s.waiting, 0)
		s.dependents = append(s.dependents, nil)
	}
	for i := s.armed; i < len(s.Plan.Tasks); i++ {
		if t := s.Plan.Tasks[i]; s.arm(t) == 0 {
			s.ready = append(s.ready, t)
		}
	}
	s.armed = len(s.Plan.Tasks)
	s.opt.Progress.setTotal(len(s.Plan.Tasks), s.cost)
}

// arm counts the unfinished upstream tasks of t and registers t as their
// dependent.
func (s *pass) arm(t *Task) int {
	n := 0
	for _, u := range t.upstream() {
		if u == nil || u.order >= len(s.results) || s.results[u.order].Task != u {
			s.result(t).Err = fmt.Errorf("depends on a task that is not in the plan (%v)", u)
			continue
		}
		if s.result(u).Status == Pending {
			n++
			s.dependents[u.order] = append(s.dependents[u.order], t)
		}
	}
	s.waiting[t.order] = n
	return n
}

// finish records t's final status and releases its dependents.
func (s *pass) finish(t *Task, st Status) {
	res := s.result(t)
	res.Status = st
	s.opt.Progress.taskDone(res)
	for _, d := range s.dependents[t.order] {
		s.waiting[d.order]--
		if s.waiting[d.order] == 0 {
			s.ready = append(s.ready, d)
		}
	}
	s.dependents[t.order] = nil
}

func (s *pass) fail(t *Task, err error) {
	s.result(t).Err = err
	s.finish(t, Failed)
}

// decideReady decides every ready task: blocked, expanded, cached, stale
// (dry run) or queued for execution. Tasks become ready in waves (7,040
// runs at once in the paper), and deciding one is mostly hashing, so the
// keys and lookups of a wave are computed on all cores (decide only reads
// the pass's state); the decisions are then applied in order.
func (s *pass) decideReady() {
	for len(s.ready) > 0 {
		batch := s.ready
		s.ready = nil
		var todo []*Task
		for _, t := range batch {
			if s.result(t).Err != nil { // a malformed task (see arm)
				s.finish(t, Failed)
				continue
			}
			if blocker, st := s.blockedBy(t); blocker != "" {
				s.result(t).Reason = blocker
				s.finish(t, st)
				continue
			}
			if t.Expand != nil {
				if !s.expand(t) {
					continue
				}
				s.register()
				if s.arm(t) > 0 {
					continue // its new dependencies will make it ready again
				}
			}
			todo = append(todo, t)
		}
		for _, d := range s.decideAll(todo) {
			s.apply(d)
		}
	}
}

// decision is what deciding a task computed.
type decision struct {
	task    *Task
	parts   keyParts
	code    string
	key     artifacts.Key
	outs    Outputs  // set when cached
	reason  string   // why it is stale
	dispute *Dispute // the lock and the index disagree
	err     error
}

// decideAll decides tasks, in parallel when there are many.
func (s *pass) decideAll(tasks []*Task) []decision {
	out := make([]decision, len(tasks))
	workers := min(runtime.NumCPU(), 8, len(tasks)/64+1)
	for len(s.hashers) < workers {
		s.hashers = append(s.hashers, &keyHasher{})
	}
	s.ensureListing() // before the workers read it
	if workers == 1 {
		for i, t := range tasks {
			out[i] = s.decide(t, s.hashers[0])
		}
		return out
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(tasks); i += workers {
				out[i] = s.decide(tasks[i], s.hashers[w])
			}
		}()
	}
	wg.Wait()
	return out
}

// decide computes t's key and looks it up. It only reads the pass's state.
func (s *pass) decide(t *Task, h *keyHasher) decision {
	parts, code, err := s.keyParts(t)
	if err != nil {
		return decision{task: t, err: err}
	}
	d := decision{task: t, parts: parts, code: code, key: h.key(parts, code)}
	outs, ok, dispute := s.lookup(t, d.key)
	switch {
	case dispute != nil:
		d.dispute = dispute
		d.reason = "the lock and the store's index disagree on its outputs: re-executing it settles which is right"
	case ok:
		d.outs = outs
	default:
		d.reason = s.explain(t, parts)
	}
	return d
}

// apply records a decision: cached, stale (dry run) or queued.
func (s *pass) apply(d decision) {
	t, res := d.task, s.result(d.task)
	if d.err != nil {
		s.fail(t, d.err)
		return
	}
	res.Key, res.parts, res.code = d.key, d.parts, d.code
	if d.outs != nil {
		res.Outputs = d.outs
		s.finish(t, Cached)
		return
	}
	res.Reason = d.reason
	res.Dispute = d.dispute
	if s.opt.DryRun {
		s.finish(t, Stale)
		return
	}
	if d.dispute != nil {
		// The disputed entry is evidence: set it aside before the
		// re-execution writes the entry the computation gives.
		if err := s.Store.SetAsideEntry(d.key, "disputed: the lock records other outputs for this key"); err != nil {
			s.fail(t, fmt.Errorf("setting aside the disputed index entry: %w", err))
			return
		}
	}
	// A disputed task is settled by computing it, not by a third opinion.
	heap.Push(&s.queue, &job{task: t, spec: newSpec(t, d.code, d.parts, d.key), remote: d.dispute == nil})
}

// blockedBy names the first upstream task that produced no outputs, and
// the status that follows for t.
func (s *pass) blockedBy(t *Task) (string, Status) {
	for _, u := range t.upstream() {
		switch s.result(u).Status {
		case Failed, Blocked:
			return "upstream failed: " + u.ID, Blocked
		case Stale, Waiting:
			return "input will be recomputed: " + u.ID, Waiting
		}
	}
	return "", Pending
}

// expand reads the trigger's output and lets t add its dependencies. It
// reports false when t is decided (failed) or waits for a recovery.
func (s *pass) expand(t *Task) bool {
	res := s.result(t.Trigger)
	d, ok := res.Outputs.Get(t.TriggerOutput)
	if !ok {
		s.fail(t, fmt.Errorf("trigger %s has no output %q", t.Trigger.ID, t.TriggerOutput))
		return false
	}
	b, err := s.Store.Get(d)
	if err != nil {
		lost := errors.Is(err, artifacts.ErrNotFound) || errors.Is(err, artifacts.ErrCorrupt)
		if !lost || s.opt.DryRun {
			if lost {
				s.result(t).Reason = "input will be recomputed: " + t.Trigger.ID
				s.finish(t, Waiting)
			} else {
				s.fail(t, err)
			}
			return false
		}
		s.log.Warn("input lost; re-executing its producer", "task", t.ID, "input", t.TriggerOutput, "producer", t.Trigger.ID, "err", err)
		s.recover(t.Trigger, waiter{ok: func() { s.ready = append(s.ready, t) }, fail: func(err error) { s.fail(t, err) }})
		return false
	}
	s.reads = append(s.reads, d)
	planned := len(s.Plan.Tasks)
	s.Plan.expanding, s.Plan.added = t, 0
	err = t.Expand(s.Plan, b)
	s.Plan.expanding = nil
	if err != nil {
		s.fail(t, err)
		return false
	}
	// Its edges, and those of the tasks it added, known only now.
	for _, u := range append([]*Task{t}, s.Plan.Tasks[planned:]...) {
		if err := s.Kinds.CheckTask(u); err != nil {
			s.fail(t, err)
			return false
		}
	}
	t.Expand = nil
	return true
}

func (s *pass) keyParts(t *Task) (keyParts, string, error) {
	id, err := s.Kinds.Identity(t.Kind, t.Roots)
	if err != nil {
		return keyParts{}, "", err
	}
	params, err := canonicalParams(t.Params)
	if err != nil {
		return keyParts{}, "", err
	}
	in := make(map[string]artifacts.Digest, len(t.Deps))
	for _, d := range t.Deps {
		if _, dup := in[d.Name]; dup {
			return keyParts{}, "", fmt.Errorf("input role %q given twice", d.Name)
		}
		dig, ok := s.result(d.From).Outputs.Get(d.Output)
		if !ok {
			return keyParts{}, "", fmt.Errorf("input %s: %s has no output %q", d.Name, d.From.ID, d.Output)
		}
		in[d.Name] = dig
	}
	return keyParts{Kind: t.Kind, Code: id, Params: params, Inputs: in}, id.Digest, nil
}

// lookup finds the outputs of key. A record of a lock sealed in this store
// is used as it is (no file read); otherwise the store's index decides what
// is cached, and a lock record for the same key that names other outputs
// than the index entry is a dispute (dispute.go): neither is used, and the
// task is re-executed. Outputs must all be present in the store.
func (s *pass) lookup(t *Task, key artifacts.Key) (Outputs, bool, *Dispute) {
	rec, hasRec := s.Lock.Record(t.ID)
	if hasRec && rec.Key == key && s.trustLock && s.present(rec.Outputs) {
		return rec.Outputs, true, nil
	}
	e, ok, err := s.Store.GetEntry(key)
	if err != nil || !ok {
		return nil, false, nil
	}
	outs := make(Outputs, len(e.Outputs)) // sorted by name, as an entry's are
	for i, o := range e.Outputs {
		outs[i] = NamedDigest{o.Name, o.Digest}
	}
	if hasRec && rec.Key == key && !rec.Outputs.Equal(outs) {
		return nil, false, &Dispute{Task: t.ID, Lock: rec.Outputs, Index: outs}
	}
	return outs, s.present(outs), nil
}

// present reports whether every output is in the store. It consults a
// listing of the store's objects made once per pass (hundreds of directory
// reads instead of thousands of stats), and stats only what the listing
// lacks, such as objects written during this pass.
func (s *pass) present(outs Outputs) bool {
	s.ensureListing()
	for _, o := range outs {
		if d := o.Digest; !s.listed[d] && !s.Store.Has(d) {
			return false
		}
	}
	return len(outs) > 0
}

// ensureListing reads the store's object listing (prefetched, if the
// project started it) once per pass.
func (s *pass) ensureListing() {
	if s.listed != nil {
		return
	}
	if s.Runner.listing != nil {
		s.listed = <-s.Runner.listing
	} else {
		s.listed, _ = s.Store.Objects()
	}
	if s.listed == nil {
		s.listed = map[artifacts.Digest]bool{}
	}
}

// complete handles one finished execution.
func (s *pass) complete(d done) {
	j, t := d.job, d.job.task
	res := s.result(t)
	res.Elapsed += d.elapsed
	if d.err != nil {
		var ie *InputError
		if errors.As(d.err, &ie) && !j.retried && s.ctx.Err() == nil {
			if producer := producerOf(t, ie.Role); producer != nil {
				s.log.Warn("input lost; re-executing its producer", "task", t.ID, "input", ie.Role, "producer", producer.ID, "err", ie.Err)
				j.retried = true
				s.recover(producer, waiter{ok: func() { heap.Push(&s.queue, j) }, fail: func(err error) { s.failJob(j, err) }})
				return
			}
		}
		s.failJob(j, d.err)
		return
	}
	if d.fetched {
		// A remote entry that the lock contradicts is not a result: the
		// task is computed, which settles it as for a local dispute.
		if rec, ok := s.Lock.Record(t.ID); ok && rec.Key == res.Key && !rec.Outputs.Equal(d.outputs) {
			s.log.Warn("the remote's entry disagrees with the lock; computing the task", "task", t.ID)
			j.remote = false
			heap.Push(&s.queue, j)
			return
		}
		res.Outputs = d.outputs
		s.finish(t, Cached)
		return
	}
	if !j.recovery {
		res.Outputs = d.outputs
		s.settle(res)
		s.finish(t, Executed)
		return
	}
	waiters := s.recovering[t]
	delete(s.recovering, t)
	var err error
	if !d.outputs.Equal(res.Outputs) {
		err = fmt.Errorf("re-executing %s to recover a lost input gave other outputs than recorded (%v, not %v): its stage is not deterministic", t.ID, d.outputs, res.Outputs)
		s.log.Error("non-deterministic stage", "task", t.ID)
	}
	for _, w := range waiters {
		if err != nil {
			w.fail(err)
		} else {
			w.ok()
		}
	}
}

// settle records how a task's execution bears on its records: a dispute
// found when deciding it is settled by the outputs it gave, and a lock
// record for the same key that the execution did not reproduce becomes a
// dispute of its own (the lock is then corrected from the computation).
func (s *pass) settle(res *Result) {
	if res.Dispute == nil {
		rec, ok := s.Lock.Record(res.Task.ID)
		if !ok || rec.Key != res.Key || rec.Outputs.Equal(res.Outputs) {
			return
		}
		res.Dispute = &Dispute{Task: res.Task.ID, Lock: rec.Outputs}
	}
	res.Dispute.Computed = res.Outputs
	s.log.Warn("the lock and the store disagreed; the re-execution decided", "task", res.Task.ID, "agrees with", res.Dispute.Winner())
}

// failJob fails a job: a task's own execution, or a recovery, whose
// waiters then fail too.
func (s *pass) failJob(j *job, err error) {
	if !j.recovery {
		s.fail(j.task, err)
		return
	}
	waiters := s.recovering[j.task]
	delete(s.recovering, j.task)
	for _, w := range waiters {
		w.fail(fmt.Errorf("recovering lost input from %s: %w", j.task.ID, err))
	}
}

// recover re-executes producer, whose outputs were recorded but are lost
// from the store, and then calls w.
func (s *pass) recover(producer *Task, w waiter) {
	if ws, busy := s.recovering[producer]; busy {
		s.recovering[producer] = append(ws, w)
		return
	}
	res := s.result(producer)
	if res.Outputs == nil || res.code == "" {
		w.fail(fmt.Errorf("lost input from %s, which has no recorded execution to repeat", producer.ID))
		return
	}
	s.recovering[producer] = []waiter{w}
	heap.Push(&s.queue, &job{task: producer, spec: newSpec(producer, res.code, res.parts, res.Key), recovery: true})
}

// producerOf returns the task that feeds role to t.
func producerOf(t *Task, role string) *Task {
	for _, d := range t.Deps {
		if d.Name == role {
			return d.From
		}
	}
	return nil
}

// jobQueue orders jobs by decreasing estimated cost, then plan order.
type jobQueue []*job

func (q jobQueue) Len() int { return len(q) }
func (q jobQueue) Less(a, b int) bool {
	if q[a].task.Cost != q[b].task.Cost {
		return q[a].task.Cost > q[b].task.Cost
	}
	return q[a].task.order < q[b].task.order
}
func (q jobQueue) Swap(a, b int) { q[a], q[b] = q[b], q[a] }
func (q *jobQueue) Push(x any)   { *q = append(*q, x.(*job)) }
func (q *jobQueue) Pop() any {
	old := *q
	j := old[len(old)-1]
	*q = old[:len(old)-1]
	return j
}
