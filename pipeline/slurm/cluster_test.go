package slurm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"thv/artifacts"
	"thv/internal/testenv"
	"thv/pipeline"
	"thv/pipeline/slurm/slurmtest"
)

// The tests below run against a real single-node Slurm (slurmtest),
// brought up once on first use and down at the end. Where Slurm is missing
// they skip, except in CI (CI set), which installs it: there they fail.

var (
	clusterOnce sync.Once
	cluster     *slurmtest.Cluster
	clusterErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if cluster != nil {
		if err := cluster.Down(); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}
	os.Exit(code)
}

func needCluster(t testing.TB) *slurmtest.Cluster {
	t.Helper()
	if why := slurmtest.Missing(); why != "" {
		testenv.Missing(t, "%s (CI installs Slurm and runs as root)", why)
	}
	clusterOnce.Do(func() {
		cluster, clusterErr = slurmtest.Up(filepath.Join(os.TempDir(), fmt.Sprintf("thv-slurm-pkg-%d", os.Getpid())), 16817)
	})
	if clusterErr != nil {
		t.Fatal(clusterErr)
	}
	return cluster
}

// fakeThv is a stand-in for `thv exec-task --store S FILE`: it answers
// each spec line by its task name: fail-* with an error line, crash-*
// by dying (exit 3, after the lines before it), sleep-* after 60 s, hold-*
// at once but then keeps the element running for 60 s, the rest with one
// output.
const fakeThv = `#!/bin/sh
while IFS= read -r line; do
  task=$(printf '%s' "$line" | sed -n 's/.*"task":"\([^"]*\)".*/\1/p')
  case "$task" in
    fail-*) printf '{"task":"%s","error":"boom in %s"}\n' "$task" "$task" ;;
    crash-*) echo "worker crashed on $task" >&2; exit 3 ;;
    sleep-*) sleep 60; printf '{"task":"%s","outputs":{"out":"%s"}}\n' "$task" "$DIGEST" ;;
    hold-*) printf '{"task":"%s","outputs":{"out":"%s"}}\n' "$task" "$DIGEST"; sleep 60 ;;
    *) printf '{"task":"%s","outputs":{"out":"%s"}}\n' "$task" "$DIGEST" ;;
  esac
done < "$4"
`

var fakeDigest = artifacts.Digest{1, 2, 3}

// newTestExecutor starts an executor over a fresh store whose nodes run
// fakeThv.
func newTestExecutor(t *testing.T, c *slurmtest.Cluster, p Params, maxArray int) *Executor {
	t.Helper()
	dir := t.TempDir()
	st, err := artifacts.Open(filepath.Join(dir, "store"), artifacts.Create)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "fake-thv")
	if err := os.WriteFile(bin, []byte(fakeThv), 0o755); err != nil {
		t.Fatal(err)
	}
	p.Thv = bin
	if p.Time == "" {
		p.Time = "5"
	}
	e, err := New(Options{Params: p, Store: st, Env: append(c.Env, "DIGEST="+fakeDigest.String()), maxArraySize: maxArray, PollInterval: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

func spec(task string) *pipeline.Spec {
	return &pipeline.Spec{Task: task, Kind: "k", Code: "c", Params: json.RawMessage(`{}`), Key: artifacts.Key{byte(len(task))}}
}

type answer struct {
	outs map[string]artifacts.Digest
	err  error
}

// executeAll runs the tasks concurrently, as the scheduler does.
func executeAll(ctx context.Context, e *Executor, tasks []string) map[string]answer {
	var mu sync.Mutex
	var wg sync.WaitGroup
	got := map[string]answer{}
	for _, task := range tasks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			outs, err := e.Execute(ctx, spec(task))
			mu.Lock()
			got[task] = answer{outs, err}
			mu.Unlock()
		}()
	}
	wg.Wait()
	return got
}

// TestClusterBatches: 30 tasks at 4 per element and at most 3 elements in
// flight, arrays split at a MaxArraySize of 2: every task gets its
// element's result, no element holds more than 4 tasks, no array more
// than 2 elements, and every task was in exactly one element.
func TestClusterBatches(t *testing.T) {
	c := needCluster(t)
	e := newTestExecutor(t, c, Params{TasksPerElement: 4, MaxElements: 3}, 2)
	var tasks []string
	for i := range 30 {
		tasks = append(tasks, fmt.Sprintf("t%02d", i))
	}
	got := executeAll(context.Background(), e, tasks)
	for _, task := range tasks {
		a := got[task]
		if a.err != nil || a.outs["out"] != fakeDigest {
			t.Fatalf("%s: %v %v", task, a.outs, a.err)
		}
	}
	b, err := os.ReadFile(filepath.Join(e.Dir(), "jobs.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	var head runRecord
	if err := json.Unmarshal([]byte(lines[0]), &head); err != nil || head.JobName != jobName(e.Run()) {
		t.Fatalf("jobs.jsonl starts with %q (%v)", lines[0], err)
	}
	n := 0
	for _, line := range lines[1:] {
		var j jobRecord
		if err := json.Unmarshal([]byte(line), &j); err != nil {
			t.Fatalf("jobs.jsonl: %q: %v", line, err)
		}
		if len(j.Elements) > 2 {
			t.Errorf("job %s has %d elements, over MaxArraySize 2", j.ID, len(j.Elements))
		}
		for _, el := range j.Elements {
			if len(el) > 4 || len(el) == 0 {
				t.Errorf("job %s: an element of %d tasks", j.ID, len(el))
			}
			n += len(el)
		}
	}
	if n != len(tasks) {
		t.Fatalf("the jobs hold %d tasks, want %d", n, len(tasks))
	}
	dir := e.Dir()
	e.Close()
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a clean run left its directory %s: %v", dir, err)
	}
}

// TestClusterFailures: a task whose worker reports an error fails alone
// with that error; a worker that dies fails the tasks it had not answered
// with the element's state and stderr, while those it answered succeed.
func TestClusterFailures(t *testing.T) {
	c := needCluster(t)
	e := newTestExecutor(t, c, Params{TasksPerElement: 3, MaxElements: 1}, 0)
	// One element, in spec order: ok-a, fail-b, crash-c? Order within an
	// element follows arrival; make each element's content certain by
	// sending them one batch at a time.
	got := executeAll(context.Background(), e, []string{"ok-a", "fail-b", "ok-c"})
	if got["ok-a"].err != nil || got["ok-c"].err != nil {
		t.Fatalf("tasks next to a failed one: %v, %v", got["ok-a"].err, got["ok-c"].err)
	}
	if err := got["fail-b"].err; err == nil || err.Error() != "boom in fail-b" {
		t.Fatalf("fail-b: %v", err)
	}
	got = executeAll(context.Background(), e, []string{"crash-d"})
	err := got["crash-d"].err
	for _, want := range []string{"FAILED (exit 3)", "worker crashed on crash-d", "_0"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("crash-d: %v; want %q in it", err, want)
		}
	}
	dir := e.Dir()
	e.Close()
	if _, err := os.Stat(filepath.Join(dir, "a0002", "0.err")); err != nil {
		t.Fatalf("a run with a failed element must keep its logs: %v", err)
	}
}

// TestClusterCancel: cancelling the context of running tasks cancels
// their element in Slurm, and only it: a job of someone else's survives.
func TestClusterCancel(t *testing.T) {
	c := needCluster(t)
	other, err := c.Command("sbatch", "--parsable", "--time=5", "--job-name=not-thv", "--output=/dev/null", "--wrap=sleep 120")
	if err != nil {
		t.Fatal(err)
	}
	other = strings.TrimSpace(other)
	defer c.Command("scancel", other)
	e := newTestExecutor(t, c, Params{TasksPerElement: 1, MaxElements: 2}, 0)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan map[string]answer)
	go func() { done <- executeAll(ctx, e, []string{"sleep-a", "sleep-b"}) }()
	name := jobName(runOf(t, e))
	ids := waitState(t, c, name, "RUNNING", 2)
	cancel()
	for _, a := range <-done {
		if !errors.Is(a.err, context.Canceled) {
			t.Fatalf("a cancelled task returned %v", a.err)
		}
	}
	waitState(t, c, name, "CANCELLED", len(ids))
	if st := state(t, c, other); st != "RUNNING" && st != "PENDING" {
		t.Fatalf("the unrelated job %s is %s after thv cancelled its own", other, st)
	}
}

// TestClusterReapsDeadRuns: a run whose thv died leaves jobs; the next
// executor on the store cancels them, while a live run's jobs are left
// alone.
func TestClusterReapsDeadRuns(t *testing.T) {
	c := needCluster(t)
	dead := newTestExecutor(t, c, Params{TasksPerElement: 1, MaxElements: 1}, 0)
	go dead.Execute(context.Background(), spec("sleep-dead"))
	name := jobName(runOf(t, dead))
	waitState(t, c, name, "RUNNING", 1)
	other := func(task string) {
		e, err := New(Options{Params: Params{Thv: dead.thv, Time: "5"}, Store: dead.opt.Store, Env: append(c.Env, "DIGEST="+fakeDigest.String())})
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		if _, err := e.Execute(context.Background(), spec(task)); err != nil {
			t.Fatal(err)
		}
	}
	// Another run on the same store while the first lives: nothing of
	// the first is touched.
	other("ok-live")
	waitState(t, c, name, "RUNNING", 1)
	// Now the first dies without Close: its owner lock goes with it, and
	// the next run cancels its jobs.
	dead.owner.Close()
	other("ok-next")
	waitState(t, c, name, "CANCELLED", 1)
	if _, err := os.Stat(dead.Dir()); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the dead run's directory is still there: %v", err)
	}
}

// TestClusterRefusesBadOptions: a partition the cluster does not have is
// an error before anything runs, naming it.
func TestClusterRefusesBadOptions(t *testing.T) {
	c := needCluster(t)
	st, err := artifacts.Open(filepath.Join(t.TempDir(), "store"), artifacts.Create)
	if err != nil {
		t.Fatal(err)
	}
	exe, _ := os.Executable()
	_, err = New(Options{Params: Params{Partition: "nosuchpartition", Thv: exe}, Store: st, Env: c.Env})
	if err == nil || !strings.Contains(err.Error(), "invalid partition") || !strings.Contains(err.Error(), "params.yaml") {
		t.Fatalf("got %v", err)
	}
	_, err = New(Options{Params: Params{Thv: "relative/thv"}, Store: st, Env: c.Env})
	if err == nil || !strings.Contains(err.Error(), "absolute path") {
		t.Fatalf("relative binary: %v", err)
	}
}

// runOf waits for e's first Execute to have made its run.
func runOf(t *testing.T, e *Executor) string {
	t.Helper()
	for range 600 {
		if r := e.Run(); r != "" {
			return r
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatal("the executor made no run within a minute")
	return ""
}

// TestClusterNothingToRun: an executor that is never given a task makes
// no run directory (a no-op or dry-run repro writes nothing).
func TestClusterNothingToRun(t *testing.T) {
	c := needCluster(t)
	e := newTestExecutor(t, c, Params{}, 0)
	e.Close()
	if ents, err := os.ReadDir(filepath.Join(e.store, runsDir)); err == nil && len(ents) > 0 || e.Run() != "" {
		t.Fatalf("an idle executor made a run: %v", ents)
	}
}

// waitState waits (up to a minute) until n elements of the jobs named
// name are in state, and returns their IDs.
func waitState(t *testing.T, c *slurmtest.Cluster, name, state string, n int) []string {
	t.Helper()
	var out string
	for range 300 {
		var err error
		out, err = c.Command("squeue", "-h", "-r", "-t", "all", "--name="+name, "-O", "JobArrayID:|,State")
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			id, st, _ := strings.Cut(line, "|")
			if strings.TrimSpace(st) == state {
				ids = append(ids, id)
			}
		}
		if len(ids) >= n {
			return ids
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("jobs %s: want %d %s, have:\n%s", name, n, state, out)
	return nil
}

func state(t *testing.T, c *slurmtest.Cluster, id string) string {
	out, err := c.Command("squeue", "-h", "-t", "all", "-j", id, "-O", "State")
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(out)
}

// TestClusterDeadline: past slurm.deadline, the tasks in flight fail
// saying so and their elements are cancelled.
func TestClusterDeadline(t *testing.T) {
	c := needCluster(t)
	e := newTestExecutor(t, c, Params{TasksPerElement: 1, MaxElements: 1, Deadline: "0:03"}, 0)
	_, err := e.Execute(context.Background(), spec("sleep-deadline"))
	if err == nil || !strings.Contains(err.Error(), "deadline (slurm.deadline = 0:03) has passed") {
		t.Fatalf("got %v", err)
	}
	waitState(t, c, jobName(e.Run()), "CANCELLED", 1)
}

// TestClusterHints: an element whose binary the nodes cannot run fails
// its tasks saying so and what to do.
func TestClusterHints(t *testing.T) {
	c := needCluster(t)
	e := newTestExecutor(t, c, Params{TasksPerElement: 1, MaxElements: 1}, 0)
	if err := os.Remove(e.thv); err != nil { // gone from the "shared filesystem" after New checked it
		t.Fatal(err)
	}
	_, err := e.Execute(context.Background(), spec("t"))
	for _, want := range []string{"exit 127", "the nodes cannot run", "--slurm-thv"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("got %v; want %q in it", err, want)
		}
	}
}

// TestClusterStreamsResults: a task is answered as soon as its worker
// writes its result line, while its element still runs.
func TestClusterStreamsResults(t *testing.T) {
	c := needCluster(t)
	e := newTestExecutor(t, c, Params{TasksPerElement: 1, MaxElements: 1}, 0)
	outs, err := e.Execute(context.Background(), spec("hold-a"))
	if err != nil || outs["out"] != fakeDigest {
		t.Fatalf("hold-a: %v %v", outs, err)
	}
	if ids := waitState(t, c, jobName(e.Run()), "RUNNING", 1); len(ids) != 1 {
		t.Fatalf("the element should still run: %v", ids)
	}
}

// BenchmarkClusterElement is the round trip of one array element holding
// one trivial task: submission, Slurm's scheduling and launch, the
// worker, and the poll that sees it end — the cost per element that
// tasks_per_element amortises (docs/performance.md).
func BenchmarkClusterElement(b *testing.B) {
	c := needCluster(b)
	st, err := artifacts.Open(filepath.Join(b.TempDir(), "store"), artifacts.Create)
	if err != nil {
		b.Fatal(err)
	}
	bin := filepath.Join(b.TempDir(), "fake-thv")
	if err := os.WriteFile(bin, []byte(fakeThv), 0o755); err != nil {
		b.Fatal(err)
	}
	e, err := New(Options{Params: Params{Thv: bin, Time: "5", TasksPerElement: 1, MaxElements: 1}, Store: st, Env: append(c.Env, "DIGEST="+fakeDigest.String())})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	for i := 0; b.Loop(); i++ {
		if _, err := e.Execute(context.Background(), spec(fmt.Sprintf("t%d", i))); err != nil {
			b.Fatal(err)
		}
	}
}
