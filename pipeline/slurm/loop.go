package slurm

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"thv/artifacts"
	"thv/pipeline"
)

// loop owns the executor's state: it queues requests, submits arrays,
// polls squeue and resolves requests as their elements end. Slurm
// commands run here, one at a time.
func (e *Executor) loop() {
	defer close(e.done)
	tick := time.NewTicker(min(e.opt.PollInterval, e.opt.Linger) / 2)
	defer tick.Stop()
	var polled time.Time
	for {
		select {
		case r := <-e.reqs:
			if e.run == "" && e.beginErr == nil {
				e.beginErr = e.begin()
			}
			if e.beginErr != nil {
				e.resolve(r, outcome{err: e.beginErr})
				continue
			}
			r.queued = time.Now()
			e.pending = append(e.pending, r)
		case r := <-e.abandon:
			e.drop(r)
		case <-tick.C:
		case <-e.quit:
			e.shutdown()
			return
		}
		if !e.deadline.IsZero() && time.Now().After(e.deadline) {
			e.expire()
		}
		if len(e.live) > 0 && time.Since(polled) >= e.opt.PollInterval {
			e.poll()
			polled = time.Now()
		}
		e.maybeSubmit()
		e.flushCancels()
	}
}

// maybeSubmit submits the pending tasks when they fill every free element,
// or when the oldest has waited Linger, as evenly as possible over at most
// MaxElements elements in flight. A short batch (a stage of few tasks) is
// spread over the free elements, down to a quarter of TasksPerElement
// each: parallelism where the cluster has room, without elements so small
// that Slurm's per-element cost (about a second) dominates.
func (e *Executor) maybeSubmit() {
	free := e.p.MaxElements - len(e.live)
	if free <= 0 || len(e.pending) == 0 {
		return
	}
	tpe := e.p.TasksPerElement
	if len(e.pending) < free*tpe && time.Since(e.pending[0].queued) < e.opt.Linger {
		return
	}
	least := max(1, tpe/4)
	n := min(free, (len(e.pending)+least-1)/least)
	take := min(len(e.pending), n*tpe)
	batch := e.pending[:take:take]
	e.pending = append([]*request(nil), e.pending[take:]...)
	groups := make([][]*request, n)
	for i := range n {
		groups[i] = batch[i*take/n : (i+1)*take/n]
	}
	for len(groups) > 0 {
		k := min(len(groups), e.maxArray)
		e.submit(groups[:k])
		groups = groups[k:]
	}
}

// submit writes one array's spec files and script and submits it.
func (e *Executor) submit(groups [][]*request) {
	e.seq++
	dirName := fmt.Sprintf("a%04d", e.seq)
	dir := filepath.Join(e.dir, dirName)
	fail := func(err error) {
		e.failed = true
		for _, g := range groups {
			for _, r := range g {
				e.resolve(r, outcome{err: err})
			}
		}
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		fail(fmt.Errorf("slurm executor: %w", err))
		return
	}
	for i, g := range groups {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		for _, r := range g {
			if err := enc.Encode(r.spec); err != nil {
				fail(err)
				return
			}
		}
		// Atomic, and closed before sbatch: a node opening it later sees
		// it whole (close-to-open consistency on NFS).
		if err := artifacts.WriteFileAtomic(filepath.Join(dir, strconv.Itoa(i)+".spec"), b.Bytes()); err != nil {
			fail(fmt.Errorf("slurm executor: writing specs: %w", err))
			return
		}
	}
	script := filepath.Join(dir, "element.sh")
	if err := artifacts.WriteFileAtomic(script, []byte(e.script())); err != nil {
		fail(fmt.Errorf("slurm executor: %w", err))
		return
	}
	args := []string{
		"--job-name=" + jobName(e.run),
		fmt.Sprintf("--array=0-%d%%%d", len(groups)-1, e.p.MaxElements),
		"--chdir=" + dir,
		"--output=" + filepath.Join(dir, "%a.out"),
		"--error=" + filepath.Join(dir, "%a.err"),
		"--open-mode=append", // a requeued element adds to its logs
	}
	args = append(append(args, e.jobArgs()...), script)
	id, err := e.sl.submit(args)
	if err != nil {
		fail(fmt.Errorf("slurm executor: submitting %d tasks: %w", countReqs(groups), err))
		return
	}
	jr := jobRecord{ID: id, Dir: dirName}
	for i, g := range groups {
		el := &element{job: id, index: i, dir: dir, reqs: g}
		keys := make([]artifacts.Key, len(g))
		for j, r := range g {
			r.elem = el
			keys[j] = r.spec.Key
		}
		jr.Elements = append(jr.Elements, keys)
		e.live[el] = true
	}
	if err := e.journal.add(jr); err != nil {
		e.log.Warn("slurm: could not record a submission", "job", id, "err", err)
	}
	e.log.Debug("slurm: submitted", "job", id, "elements", len(groups), "tasks", countReqs(groups))
}

func countReqs(groups [][]*request) int {
	n := 0
	for _, g := range groups {
		n += len(g)
	}
	return n
}

// script is the batch script of every element: run the element's specs,
// then rename the result lines into place, so a reader sees all of them or
// none, and a requeued element's second run replaces its first's.
func (e *Executor) script() string {
	return fmt.Sprintf(`#!/bin/sh
# thv slurm run %s: array element $SLURM_ARRAY_TASK_ID runs the task specs
# in $SLURM_ARRAY_TASK_ID.spec and leaves one result line per spec in
# $SLURM_ARRAY_TASK_ID.result.
i=$SLURM_ARRAY_TASK_ID
store=%s
if [ ! -f "$store/VERSION" ] || [ ! -f "$i.spec" ]; then
  echo "thv: the store $store or the spec $PWD/$i.spec is not visible on $(hostname): the store must be on a filesystem the login node and the compute nodes share, at the same path (docs/cluster.md)" >&2
  exit 2
fi
tmp=".$i.result.$SLURM_JOB_ID.tmp"
%s "$i.spec" >"$tmp"
rc=$?
mv -f "$tmp" "$i.result" || exit 1
exit $rc
`, e.run, shellQuote(e.store), shellJoin(pipeline.WorkerArgs{Store: e.store}.Command(e.thv)))
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// shellJoin is a command line as one line of sh, every word quoted.
func shellJoin(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = shellQuote(a)
	}
	return strings.Join(q, " ")
}

// poll asks squeue about the live elements and ends those Slurm is done
// with.
func (e *Executor) poll() {
	jobs := map[string]bool{}
	var ids []string
	for el := range e.live {
		if !jobs[el.job] {
			jobs[el.job] = true
			ids = append(ids, el.job)
		}
	}
	states, err := e.sl.queue(ids)
	if err != nil {
		if e.unreached.IsZero() {
			e.unreached = time.Now()
			e.log.Warn("slurm: squeue fails; retrying", "err", err)
		}
		if time.Since(e.unreached) > e.opt.ControllerTimeout {
			for el := range e.live {
				e.cancels = append(e.cancels, el.id())
				e.finish(el, nil, fmt.Errorf("the Slurm controller has not answered for %s (last: %v); element %s cancelled", e.opt.ControllerTimeout, err, el.id()))
			}
		}
		return
	}
	e.unreached = time.Time{}
	for el := range e.live {
		st, ok := states[el.id()]
		switch {
		case !ok:
			// Gone from squeue (MinJobAge passed, or the controller
			// lost it): its result file is all there is.
			if el.missing++; el.missing >= 3 {
				e.end(el, elemState{State: "UNKNOWN", Reason: "no longer known to Slurm"})
			}
		case st.State == "RUNNING" || st.State == "COMPLETING":
			el.missing = 0
			if el.running.IsZero() {
				el.running = time.Now()
			}
			// COMPLETING: the script has ended (slurmd may be away and
			// not report it yet), so a complete result file is final.
			if st.State == "COMPLETING" {
				if res, complete := e.readResult(el); complete {
					e.finish(el, res, nil)
					continue
				}
			}
			e.stream(el)
			if time.Since(el.running) > e.limit+e.opt.Grace {
				e.cancels = append(e.cancels, el.id())
				e.finish(el, nil, fmt.Errorf("slurm element %s still %s %s after it started, past its time limit %s: its node is probably lost; cancelled (stderr: %s)",
					el.id(), st.State, time.Since(el.running).Round(time.Second), e.p.Time, e.stderrTail(el)))
			}
		case terminal(st.State):
			e.end(el, st)
		default:
			// PENDING again after running: requeued; its clock restarts.
			el.missing, el.running = 0, time.Time{}
		}
	}
}

// end settles an element Slurm is done with: tasks with a result line get
// it; the others fail with the element's state and stderr.
func (e *Executor) end(el *element, st elemState) {
	res, complete := e.readResult(el)
	if !complete && st.State == "COMPLETED" {
		// The script exited 0, so it renamed its result: give the
		// shared filesystem time to show it.
		if el.noFile.IsZero() {
			el.noFile = time.Now()
		}
		if time.Since(el.noFile) < e.opt.ResultGrace {
			return
		}
	}
	var err error
	if !complete {
		err = fmt.Errorf("slurm element %s ended %s%s without a result for this task; stderr (%s): %s%s",
			el.id(), st, reason(st), filepath.Join(el.dir, strconv.Itoa(el.index)+".err"), e.stderrTail(el), e.hint(el, st))
	}
	e.finish(el, res, err)
}

// hint adds what to do for the failures whose cause is known.
func (e *Executor) hint(el *element, st elemState) string {
	switch {
	case st.State == "FAILED" && (st.Exit == 126 || st.Exit == 127):
		return fmt.Sprintf(" (exit %d: the nodes cannot run %s; put the thv binary on the shared filesystem and give its path with --slurm-thv or slurm.thv)", st.Exit, e.thv)
	case st.State == "TIMEOUT":
		return fmt.Sprintf(" (the element ran out of its time limit %s: raise executors.slurm.time (--slurm-time) or lower executors.slurm.tasks_per_element)", e.p.Time)
	case st.State == "OUT_OF_MEMORY":
		return " (raise executors.slurm.mem or --slurm-mem)"
	}
	if _, err := os.Stat(filepath.Join(el.dir, strconv.Itoa(el.index)+".err")); errors.Is(err, os.ErrNotExist) {
		return fmt.Sprintf(" (no stderr file: the element never started, or the nodes do not see %s; the store must be on a filesystem the nodes share, at the same path)", el.dir)
	}
	return ""
}

func reason(st elemState) string {
	if st.Reason == "" || st.Reason == "None" {
		return ""
	}
	return ", " + st.Reason
}

// finish resolves the element's requests: by result line when there is
// one, else with err; and retires the element.
func (e *Executor) finish(el *element, res map[string]specResult, err error) {
	delete(e.live, el)
	for _, r := range el.reqs {
		if r.abandoned || r.done {
			continue
		}
		if sr, ok := res[r.spec.Task]; ok {
			e.resolve(r, sr.outcome())
			continue
		}
		if err == nil {
			err = fmt.Errorf("slurm element %s left no result for this task", el.id())
		}
		e.failed = true
		e.resolve(r, outcome{err: err})
	}
}

func (e *Executor) resolve(r *request, o outcome) {
	r.done = true
	if o.err != nil {
		var ie *pipeline.InputError
		if !errors.As(o.err, &ie) {
			e.failed = true
		}
	}
	r.res <- o
}

// specResult is one line of `thv exec-task` output (the protocol of
// pipeline.ServeWorker).
type specResult struct {
	Task    string                      `json:"task"`
	Outputs map[string]artifacts.Digest `json:"outputs,omitempty"`
	Error   string                      `json:"error,omitempty"`
	Input   *pipeline.SpecInput         `json:"input,omitempty"`
}

func (sr specResult) outcome() outcome {
	switch {
	case sr.Input != nil:
		return outcome{err: &pipeline.InputError{Role: sr.Input.Role, Digest: sr.Input.Digest, Err: errors.New(sr.Error)}}
	case sr.Error != "":
		return outcome{err: errors.New(sr.Error)}
	case len(sr.Outputs) == 0:
		return outcome{err: errors.New("the worker reported no outputs")}
	}
	return outcome{outs: sr.Outputs}
}

// stream answers the tasks of a running element whose result lines its
// worker has already written (to the temporary result file, named after
// the element's job ID, hence the glob): their dependents need not wait
// for the whole element. A line is written only after the task's outputs
// and index entry are in the store, and a torn line does not parse. An
// element Slurm requeued may have a second temporary file; both hold the
// same answers.
func (e *Executor) stream(el *element) {
	tmps, _ := filepath.Glob(filepath.Join(el.dir, "."+strconv.Itoa(el.index)+".result.*.tmp"))
	for _, tmp := range tmps {
		res := readResultFile(tmp)
		for _, r := range el.reqs {
			if r.done || r.abandoned {
				continue
			}
			if sr, ok := res[r.spec.Task]; ok {
				e.resolve(r, sr.outcome())
			}
		}
	}
}

// readResult reads an element's result file: the lines by task, and
// whether there is one for each of its tasks.
func (e *Executor) readResult(el *element) (map[string]specResult, bool) {
	res := readResultFile(filepath.Join(el.dir, strconv.Itoa(el.index)+".result"))
	if res == nil {
		return nil, false
	}
	for _, r := range el.reqs {
		if _, ok := res[r.spec.Task]; !ok {
			return res, false
		}
	}
	return res, true
}

// readResultFile reads result lines by task, skipping lines that do not
// parse (a torn last line); nil if the file cannot be opened.
func readResultFile(path string) map[string]specResult {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	res := map[string]specResult{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 64<<20)
	for sc.Scan() {
		var sr specResult
		if json.Unmarshal(sc.Bytes(), &sr) == nil && sr.Task != "" {
			res[sr.Task] = sr
		}
	}
	return res
}

// stderrTail is the end of an element's stderr file.
func (e *Executor) stderrTail(el *element) string {
	f, err := os.Open(filepath.Join(el.dir, strconv.Itoa(el.index)+".err"))
	if err != nil {
		return "(no stderr file)"
	}
	defer f.Close()
	const max = 2048
	if fi, err := f.Stat(); err == nil && fi.Size() > max {
		f.Seek(fi.Size()-max, io.SeekStart)
	}
	b, _ := io.ReadAll(f)
	s := strings.TrimSpace(string(b))
	if s == "" {
		return "(empty)"
	}
	return s
}

// drop handles a request whose caller gave up (ctx cancelled).
func (e *Executor) drop(r *request) {
	if r.elem == nil {
		for i, p := range e.pending {
			if p == r {
				e.pending = append(e.pending[:i], e.pending[i+1:]...)
				return
			}
		}
		return
	}
	r.abandoned = true
	el := r.elem
	if !e.live[el] {
		return
	}
	for _, q := range el.reqs {
		if !q.abandoned && !q.done {
			return // someone still waits for this element
		}
	}
	delete(e.live, el)
	e.cancels = append(e.cancels, el.id())
}

// flushCancels cancels the queued elements in one scancel, filtered on
// this run's job name.
func (e *Executor) flushCancels() {
	if len(e.cancels) == 0 {
		return
	}
	if err := e.sl.cancelByName(jobName(e.run), e.cancels); err != nil {
		e.log.Warn("slurm: scancel failed", "err", err)
	}
	e.cancels = nil
}

// expire fails every task, pending or in flight, once the run's deadline
// has passed, and cancels the run's elements.
func (e *Executor) expire() {
	err := fmt.Errorf("the slurm run's deadline (slurm.deadline = %s) has passed: task not run; its jobs are cancelled", e.p.Deadline)
	for _, r := range e.pending {
		e.resolve(r, outcome{err: err})
	}
	e.pending = nil
	for el := range e.live {
		e.cancels = append(e.cancels, el.id())
		e.finish(el, nil, err)
	}
}

// shutdown fails what is pending and cancels what is live: Close.
func (e *Executor) shutdown() {
	for _, r := range e.pending {
		r.res <- outcome{err: errClosed}
	}
	e.pending = nil
	for el := range e.live {
		e.cancels = append(e.cancels, el.id())
		for _, r := range el.reqs {
			r.abandoned = true
			select {
			case r.res <- outcome{err: errClosed}:
			default:
			}
		}
		delete(e.live, el)
	}
	// By name, not by the IDs it tracks: a submission whose answer was
	// lost (see cli.submit) is cancelled too.
	e.cancels = nil
	if e.run == "" {
		return // nothing was ever submitted
	}
	if err := e.sl.cancelByName(jobName(e.run), nil); err != nil {
		e.log.Warn("slurm: scancel failed", "err", err)
	}
}
