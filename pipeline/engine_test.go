package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"thv/artifacts"
	"thv/artifacts/damage"
	"thv/pipeline/codeid"
)

// The engine's contract, tested with fake stages: a fake module whose
// package hashes the tests change at will, and small deterministic kinds.

// fakeCode is a CodeSource over a fake module: package → hash, and
// package → its imports.
type fakeCode struct {
	mu      sync.Mutex
	hash    map[string]string
	imports map[string][]string
}

func newFakeCode() *fakeCode {
	return &fakeCode{
		hash: map[string]string{"fake/gen": "g1", "fake/sum": "s1", "fake/fail": "f1", "fake/util": "u1", "fake/famA": "a1", "fake/famB": "b1", "fake/slow": "w1", "fake/flaky": "k1"},
		imports: map[string][]string{
			"fake/gen": {"fake/util"}, "fake/sum": {"fake/util"},
		},
	}
}

func (c *fakeCode) set(pkg, hash string) {
	c.mu.Lock()
	c.hash[pkg] = hash
	c.mu.Unlock()
}

func (c *fakeCode) Identity(roots ...string) (*codeid.Identity, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	seen := map[string]bool{}
	var walk func(string) error
	walk = func(p string) error {
		if seen[p] {
			return nil
		}
		if _, ok := c.hash[p]; !ok {
			return fmt.Errorf("package %s not in the fake module", p)
		}
		seen[p] = true
		for _, q := range c.imports[p] {
			if err := walk(q); err != nil {
				return err
			}
		}
		return nil
	}
	for _, r := range roots {
		if err := walk(r); err != nil {
			return nil, err
		}
	}
	id := &codeid.Identity{Roots: roots}
	for _, p := range sortedKeys(seen) {
		id.Units = append(id.Units, codeid.Unit{Name: p, Hash: c.hash[p]})
	}
	id.Units = append(id.Units, codeid.Unit{Name: "go", Hash: "go-test"})
	h := sha256.New()
	for _, u := range id.Units {
		fmt.Fprintf(h, "%s %s\n", u.Name, u.Hash)
	}
	id.Digest = "sha256:" + hex.EncodeToString(h.Sum(nil))
	return id, nil
}

type genParams struct {
	Name string `json:"name"`
	N    int    `json:"n"`
}

// gen writes "<name>:<n>".
func gen(_ context.Context, params []byte, _ map[string][]byte) (map[string][]byte, error) {
	var p genParams
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, err
	}
	return map[string][]byte{"x": fmt.Appendf(nil, "%s:%d", p.Name, p.N)}, nil
}

// sum concatenates its inputs in role order, plus its params.
func sum(_ context.Context, params []byte, in map[string][]byte) (map[string][]byte, error) {
	var b []byte
	for _, role := range sortedKeys(in) {
		b = append(append(append(b, role...), '='), in[role]...)
		b = append(b, ';')
	}
	return map[string][]byte{"y": append(b, params...)}, nil
}

func failStage(context.Context, []byte, map[string][]byte) (map[string][]byte, error) {
	return nil, errors.New("this stage always fails")
}

// slowStarted is closed when a slow stage has started; slow then blocks
// until its context is cancelled.
var slowStarted = make(chan struct{}, 100)

func slow(ctx context.Context, _ []byte, _ map[string][]byte) (map[string][]byte, error) {
	slowStarted <- struct{}{}
	<-ctx.Done()
	return nil, ctx.Err()
}

// flakyCount makes flaky non-deterministic: each execution differs.
var flakyCount atomic.Int64

func flaky(context.Context, []byte, map[string][]byte) (map[string][]byte, error) {
	return map[string][]byte{"x": fmt.Appendf(nil, "run %d", flakyCount.Add(1))}, nil
}

func fakeKindList() []Kind {
	return []Kind{
		{Name: "gen", Run: gen, Entry: "fake/gen"},
		{Name: "sum", Run: sum, Entry: "fake/sum"},
		{Name: "fail", Run: failStage, Entry: "fake/fail"},
		{Name: "slow", Run: slow, Entry: "fake/slow"},
		{Name: "flaky", Run: flaky, Entry: "fake/flaky"},
	}
}

func fakeKinds(t testing.TB, code CodeSource) *Kinds {
	k, err := NewKinds(code, fakeKindList()...)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// diamond: two generators per family, a sum per family, a total.
//
//	gen/a/i (root fake/famA) ─┐
//	                          ├─ sum/a ─┐
//	gen/b/i (root fake/famB) ─┘          ├─ total
//	                            sum/b ───┘
func diamond(n int) *Plan {
	p := NewPlan()
	total := &Task{ID: "total", Kind: "sum", Params: map[string]int{"v": 1}}
	for _, fam := range []string{"a", "b"} {
		s := &Task{ID: "sum/" + fam, Kind: "sum", Params: map[string]string{"family": fam}}
		for i := range n {
			g := p.Add(&Task{ID: fmt.Sprintf("gen/%s/%d", fam, i), Kind: "gen", Roots: []string{"fake/fam" + strings.ToUpper(fam)},
				Params: genParams{Name: fam, N: i}, Cost: float64(i + 1)})
			s.Deps = append(s.Deps, Dep{Name: fmt.Sprintf("g%d", i), From: g, Output: "x"})
		}
		p.Add(s)
		total.Deps = append(total.Deps, Dep{Name: fam, From: s, Output: "y"})
	}
	p.Add(total)
	return p
}

type env struct {
	t     *testing.T
	dir   string
	code  *fakeCode
	store *artifacts.Store
}

func newEnv(t *testing.T) *env {
	dir := t.TempDir()
	st, err := artifacts.Open(filepath.Join(dir, "store"), artifacts.Create)
	if err != nil {
		t.Fatal(err)
	}
	return &env{t: t, dir: dir, code: newFakeCode(), store: st}
}

func (e *env) project(plan *Plan) *Project {
	e.t.Helper()
	p, err := NewProject(plan, fakeKinds(e.t, e.code), e.store, filepath.Join(e.dir, "test.lock"), "test")
	if err != nil {
		e.t.Fatal(err)
	}
	return p
}

func (e *env) repro(plan *Plan, opt Options) *Report {
	e.t.Helper()
	rep, err := e.project(plan).Repro(context.Background(), opt)
	if err != nil {
		e.t.Fatal(err)
	}
	return rep
}

func (e *env) lock() []byte {
	b, err := os.ReadFile(filepath.Join(e.dir, "test.lock"))
	if err != nil {
		e.t.Fatal(err)
	}
	return b
}

func ids(rep *Report, st Status) []string {
	var out []string
	for _, r := range rep.Results {
		if r.Status == st {
			out = append(out, r.Task.ID)
		}
	}
	return out
}

func TestColdThenNoOp(t *testing.T) {
	e := newEnv(t)
	plan := diamond(3)
	first := e.repro(plan, Options{Jobs: 2})
	if first.Executed != len(plan.Tasks) {
		t.Fatalf("cold run executed %d of %d", first.Executed, len(plan.Tasks))
	}
	lock := e.lock()
	second := e.repro(diamond(3), Options{Jobs: 2})
	if second.Executed != 0 || second.Cached != len(plan.Tasks) {
		t.Fatalf("no-op executed %v", ids(second, Executed))
	}
	if string(e.lock()) != string(lock) {
		t.Fatal("a no-op pass changed the lock")
	}
	// Without the lock the store's index answers: still nothing runs.
	os.Remove(filepath.Join(e.dir, "test.lock"))
	if third := e.repro(diamond(3), Options{Jobs: 1}); third.Executed != 0 {
		t.Fatalf("rerun without lock executed %v", ids(third, Executed))
	}
	if string(e.lock()) != string(lock) {
		t.Fatal("the lock rebuilt from the index differs")
	}
}

// TestLockIdenticalAcrossJobsAndExecutors: -j 1, -j 4 and the process
// executor (worker subprocesses speaking the exec-task protocol) give the
// same lock bytes from empty stores.
func TestLockIdenticalAcrossJobsAndExecutors(t *testing.T) {
	var locks []string
	for _, c := range []struct {
		jobs    int
		process bool
	}{{1, false}, {4, false}, {2, true}} {
		e := newEnv(t)
		opt := Options{Jobs: c.jobs}
		if c.process {
			px := testProcessExecutor(e)
			defer px.Close()
			opt.Executor = px
		}
		rep := e.repro(diamond(4), opt)
		if rep.Executed != len(rep.Results) {
			t.Fatalf("%+v: executed %d of %d", c, rep.Executed, len(rep.Results))
		}
		locks = append(locks, string(e.lock()))
	}
	for i := 1; i < len(locks); i++ {
		if locks[i] != locks[0] {
			t.Fatalf("lock %d differs from lock 0:\n%s\n---\n%s", i, locks[i], locks[0])
		}
	}
}

// TestCodeChangeRerunsExactlyItsTasks: a change in a family's package
// reruns that family's generators; a change in a package that two kinds
// import reruns both kinds' tasks. Outputs equal → downstream cut off.
func TestCodeChangeRerunsExactlyItsTasks(t *testing.T) {
	e := newEnv(t)
	e.repro(diamond(3), Options{Jobs: 2})
	e.code.set("fake/famA", "a2")
	st, err := e.project(diamond(3)).Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range st.Results {
		if r.Status == Stale && r.Reason != "code changed in fake/famA" {
			t.Errorf("%s: reason %q", r.Task.ID, r.Reason)
		}
	}
	rep := e.repro(diamond(3), Options{Jobs: 2})
	if got, want := ids(rep, Executed), []string{"gen/a/0", "gen/a/1", "gen/a/2"}; !slices.Equal(got, want) {
		t.Fatalf("famA change executed %v, want %v (then early cutoff)", got, want)
	}
	e.code.set("fake/util", "u2") // imported by gen and sum
	rep = e.repro(diamond(3), Options{Jobs: 2})
	if rep.Executed != len(rep.Results) {
		t.Fatalf("shared helper change executed %v, want every task", ids(rep, Executed))
	}
}

func TestParamsChangeExplainedAndCutOff(t *testing.T) {
	e := newEnv(t)
	e.repro(diamond(2), Options{Jobs: 2})
	plan := diamond(2)
	g, _ := plan.Task("gen/b/1")
	g.Params = genParams{Name: "b", N: 7}
	st, err := e.project(plan).Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var reasons []string
	for _, r := range st.Results {
		if r.Status == Stale || r.Status == Waiting {
			reasons = append(reasons, r.Task.ID+": "+r.Reason)
		}
	}
	want := []string{"gen/b/1: params changed: n 1 → 7", "sum/b: input will be recomputed: gen/b/1", "total: input will be recomputed: sum/b"}
	if !slices.Equal(reasons, want) {
		t.Fatalf("status:\n%s\nwant:\n%s", strings.Join(reasons, "\n"), strings.Join(want, "\n"))
	}
	rep := e.repro(plan, Options{Jobs: 2})
	if got := ids(rep, Executed); !slices.Equal(got, []string{"gen/b/1", "sum/b", "total"}) {
		t.Fatalf("executed %v", got)
	}
}

// TestFailureBlocksDependentsOnly: a failing task blocks what depends on
// it; independent tasks complete; the lock keeps the failed task's
// previous record.
func TestFailureBlocksDependentsOnly(t *testing.T) {
	e := newEnv(t)
	e.repro(diamond(2), Options{Jobs: 2})
	before, _ := ReadLock(filepath.Join(e.dir, "test.lock"))
	plan := diamond(2)
	g, _ := plan.Task("gen/a/0")
	g.Kind = "fail"
	h, _ := plan.Task("gen/b/1")
	h.Params = genParams{Name: "b", N: 9}
	rep, err := e.project(plan).Repro(context.Background(), Options{Jobs: 2})
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(rep, Failed); !slices.Equal(got, []string{"gen/a/0"}) {
		t.Fatalf("failed %v", got)
	}
	if got := ids(rep, Blocked); !slices.Equal(got, []string{"sum/a", "total"}) {
		t.Fatalf("blocked %v", got)
	}
	if got := ids(rep, Executed); !slices.Equal(got, []string{"gen/b/1", "sum/b"}) {
		t.Fatalf("executed %v: independent work must go on", got)
	}
	r := rep.Results[0]
	if r.Err == nil || strings.Contains(r.Err.Error(), "gen/a/0") {
		t.Fatalf("error %v: want the stage's error, without the task ID (callers add it once)", r.Err)
	}
	after, _ := ReadLock(filepath.Join(e.dir, "test.lock"))
	for _, id := range []string{"gen/a/0", "sum/a", "total"} {
		old, _ := before.Record(id)
		cur, ok := after.Record(id)
		if !ok || cur.Key != old.Key {
			t.Errorf("%s: the lock lost the previous record of a task that did not complete", id)
		}
	}
	if cur, _ := after.Record("sum/b"); cur.Key == rep.Results[0].Key {
		t.Error("sum/b not updated")
	}
}

// expandPlan: "pick" reads its trigger's output to decide its inputs.
func expandPlan(bad bool) *Plan {
	p := NewPlan()
	choose := p.Add(&Task{ID: "choose", Kind: "gen", Params: genParams{Name: "choice", N: 2}})
	pick := &Task{ID: "pick", Kind: "sum", Params: "pick", Trigger: choose, TriggerOutput: "x"}
	pick.Expand = func(p *Plan, trig []byte) error {
		if bad {
			return errors.New("cannot read the choice")
		}
		var n int
		if _, err := fmt.Sscanf(string(trig), "choice:%d", &n); err != nil {
			return err
		}
		for i := range n {
			g := p.Add(&Task{ID: fmt.Sprintf("chosen/%d", i), Kind: "gen", Params: genParams{Name: "c", N: i}})
			pick.Deps = append(pick.Deps, Dep{Name: g.ID, From: g, Output: "x"})
		}
		return nil
	}
	p.Add(pick)
	p.Add(&Task{ID: "after", Kind: "sum", Params: "after", Deps: []Dep{{Name: "pick", From: pick, Output: "y"}}})
	return p
}

func TestExpand(t *testing.T) {
	e := newEnv(t)
	rep := e.repro(expandPlan(false), Options{Jobs: 2})
	// The tasks pick's expansion added come right after it (lockOrder).
	if got := ids(rep, Executed); !slices.Equal(got, []string{"choose", "pick", "chosen/0", "chosen/1", "after"}) {
		t.Fatalf("executed %v", got)
	}
	st, err := e.project(expandPlan(false)).Status(context.Background())
	if err != nil || st.Cached != 5 {
		t.Fatalf("status after expand: %d cached, %v", st.Cached, err)
	}

	e = newEnv(t)
	rep, err = e.project(expandPlan(true)).Repro(context.Background(), Options{Jobs: 2})
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(rep, Failed); !slices.Equal(got, []string{"pick"}) || !strings.Contains(rep.Results[1].Err.Error(), "cannot read the choice") {
		t.Fatalf("failed %v (%v)", got, rep.Results[1].Err)
	}
	if got := ids(rep, Blocked); !slices.Equal(got, []string{"after"}) {
		t.Fatalf("blocked %v", got)
	}
}

func objectOf(t *testing.T, p *Project, id, output string) artifacts.Digest {
	rec, ok := p.Lock.Record(id)
	if !ok {
		t.Fatalf("no lock record for %s", id)
	}
	return outputOf(rec.Outputs, output)
}

// TestLostInputIsRecomputed: a corrupted object that a stale task needs is
// found when read, and recomputed by its producer (the scheduler's job,
// through the executor), with a warning; then the task runs. Also through
// the process executor, whose worker reports the lost input as typed, and
// for the output an expanding task reads. A deleted object is seen before
// anything runs: its producer is simply stale.
func TestLostInputIsRecomputed(t *testing.T) {
	for _, how := range []string{"deleted", "corrupted", "corrupted/process", "trigger"} {
		t.Run(how, func(t *testing.T) {
			e := newEnv(t)
			plan := diamond(2)
			if how == "trigger" {
				plan = expandPlan(false)
			}
			e.repro(plan, Options{Jobs: 2})
			p := e.project(plan)
			victim, consumer := "gen/a/1", "sum/a"
			if how == "trigger" {
				victim, consumer = "choose", "pick"
			}
			d := objectOf(t, p, victim, "x")
			if strings.HasPrefix(how, "deleted") {
				damage.Remove(t, p.Store, d)
			} else {
				damage.Flip(t, p.Store, d)
			}
			// Make the consumer stale so it must read the lost input; the
			// producer itself looks cached (its record and index entry).
			plan = diamond(2)
			if how == "trigger" {
				plan = expandPlan(false)
			}
			c, _ := plan.Task(consumer)
			c.Params = "changed"
			var log strings.Builder
			opt := Options{Jobs: 2, Logger: newTextLogger(&log)}
			if how == "corrupted/process" {
				px := testProcessExecutor(e)
				defer px.Close()
				opt.Executor = px
			}
			rep := e.repro(plan, opt)
			if how == "deleted" {
				if r := rep.Results[slices.IndexFunc(rep.Results, func(r *Result) bool { return r.Task.ID == victim })]; r.Status != Executed || r.Reason != "outputs missing from the store" {
					t.Fatalf("%s: %v %q", victim, r.Status, r.Reason)
				}
			} else if !strings.Contains(log.String(), "re-executing its producer") || !strings.Contains(log.String(), victim) {
				t.Fatalf("no warning naming %s: %q", victim, log.String())
			}
			if r := rep.Results[slices.IndexFunc(rep.Results, func(r *Result) bool { return r.Task.ID == consumer })]; r.Status != Executed {
				t.Fatalf("%s: %v %v", consumer, r.Status, r.Err)
			}
			if err := p.Store.Verify(d); err != nil {
				t.Fatalf("the lost object was not restored: %v", err)
			}
		})
	}
}

// TestNonDeterministicStageIsCaught: recovering a lost input from a stage
// that yields other bytes fails the consumer, naming the producer.
func TestNonDeterministicStageIsCaught(t *testing.T) {
	e := newEnv(t)
	mk := func(param string) *Plan {
		p := NewPlan()
		f := p.Add(&Task{ID: "flaky", Kind: "flaky", Params: "f"})
		p.Add(&Task{ID: "use", Kind: "sum", Params: param, Deps: []Dep{{Name: "f", From: f, Output: "x"}}})
		return p
	}
	e.repro(mk("one"), Options{Jobs: 1})
	damage.Flip(t, e.store, objectOf(t, e.project(mk("one")), "flaky", "x"))
	rep, err := e.project(mk("two")).Repro(context.Background(), Options{Jobs: 1, Logger: newTextLogger(&strings.Builder{})})
	if err != nil {
		t.Fatal(err)
	}
	use := rep.Results[1]
	if use.Status != Failed || !strings.Contains(use.Err.Error(), "not deterministic") || !strings.Contains(use.Err.Error(), "flaky") {
		t.Fatalf("use: %v %v", use.Status, use.Err)
	}
}

// TestCancel: cancelling a pass stops it cleanly: running stages see the
// cancellation, nothing more starts, the report says Cancelled, and the
// lock records exactly what completed.
func TestCancel(t *testing.T) {
	e := newEnv(t)
	p := NewPlan()
	g := p.Add(&Task{ID: "g", Kind: "gen", Params: genParams{Name: "g"}})
	s := p.Add(&Task{ID: "s", Kind: "slow", Params: "s", Deps: []Dep{{Name: "g", From: g, Output: "x"}}, Cost: 10})
	p.Add(&Task{ID: "after", Kind: "sum", Params: "a", Deps: []Dep{{Name: "s", From: s, Output: "x"}}})
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-slowStarted; cancel() }()
	rep, err := e.project(p).Repro(ctx, Options{Jobs: 2})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if got := ids(rep, Executed); !slices.Equal(got, []string{"g"}) {
		t.Fatalf("executed %v", got)
	}
	if rep.Results[1].Status != Failed || !errors.Is(rep.Results[1].Err, context.Canceled) {
		t.Fatalf("slow: %v %v", rep.Results[1].Status, rep.Results[1].Err)
	}
	if rep.Results[2].Status != Blocked && rep.Results[2].Status != Cancelled {
		t.Fatalf("after: %v", rep.Results[2].Status)
	}
	l, _ := ReadLock(filepath.Join(e.dir, "test.lock"))
	if len(l.Tasks) != 1 || l.Tasks[0].ID != "g" {
		t.Fatalf("lock after cancel: %+v", l.Tasks)
	}
	entries, _ := os.ReadDir(filepath.Join(e.store.Root(), "tmp"))
	if len(entries) != 0 {
		t.Fatalf("cancel left %d temporary files in the store", len(entries))
	}
}

// TestWorkerRefusesForeignSpecs: a worker checks the spec's code identity
// against its own code and the key against the spec's contents.
func TestWorkerRefusesForeignSpecs(t *testing.T) {
	e := newEnv(t)
	plan := diamond(1)
	e.repro(plan, Options{Jobs: 1})
	p := e.project(plan)
	r := p.runner()
	if _, err := r.Run(context.Background(), Options{DryRun: true}); err != nil {
		t.Fatal(err)
	}
	res := r.result(plan.Tasks[0])
	spec := newSpec(plan.Tasks[0], res.code, res.parts, res.Key)
	w := &Worker{Store: e.store, Kinds: fakeKinds(t, e.code)}
	if _, err := w.Execute(context.Background(), spec); err != nil {
		t.Fatalf("a faithful spec: %v", err)
	}
	other := newFakeCode()
	other.set("fake/util", "changed")
	w2 := &Worker{Store: e.store, Kinds: fakeKinds(t, other)}
	var cm *CodeMismatchError
	if _, err := w2.Execute(context.Background(), spec); !errors.As(err, &cm) {
		t.Fatalf("worker with other code: %v", err)
	}
	tampered := *spec
	tampered.Params = json.RawMessage(`{"name":"a","n":99}`)
	if _, err := w.Execute(context.Background(), &tampered); err == nil || !strings.Contains(err.Error(), "does not match") {
		t.Fatalf("tampered params: %v", err)
	}
}

func TestGC(t *testing.T) {
	e := newEnv(t)
	e.repro(diamond(2), Options{Jobs: 2})
	plan := diamond(2)
	g, _ := plan.Task("gen/a/0")
	g.Params = genParams{Name: "a", N: 5}
	e.repro(plan, Options{Jobs: 2})
	p := e.project(plan)
	dry, err := p.GC(context.Background(), true)
	if err != nil {
		t.Fatal(err)
	}
	st, err := p.GC(context.Background(), false)
	if err != nil {
		t.Fatal(err)
	}
	// gen/a/0, sum/a and total were superseded: three objects, three
	// entries, and the seal of the superseded lock.
	if st.ObjectsRemoved != 3 || st.EntriesRemoved != 4 || dry.ObjectsRemoved != 3 || dry.EntriesRemoved != 4 {
		t.Fatalf("gc %+v, dry run %+v", st, dry)
	}
	if rep := e.repro(plan, Options{Jobs: 2}); rep.Executed != 0 {
		t.Fatalf("gc removed live artifacts: %v reran", ids(rep, Executed))
	}
}

func TestValidName(t *testing.T) {
	for _, bad := range []string{"", ".", "..", "../x", "a/b", `a\b`, "/abs", "a\x00b", "tab\t"} {
		if ValidName(bad) == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	for _, good := range []string{"x", "summary_d2.tex", "d2.png", "eta=0.1"} {
		if err := ValidName(good); err != nil {
			t.Errorf("%q refused: %v", good, err)
		}
	}
}

func TestPackageOf(t *testing.T) {
	closure := func() {}
	for _, c := range []struct {
		fn   any
		want string
	}{{gen, "thv/pipeline"}, {closure, "thv/pipeline"}, {filepath.Join, "path/filepath"}, {(*strings.Builder).Len, "strings"}} {
		if got := PackageOf(c.fn); got != c.want {
			t.Errorf("PackageOf = %q, want %q", got, c.want)
		}
	}
}

// entryValue and entryPtr have methods of each receiver kind, for
// TestEntryOf.
type entryValue struct{}

func (entryValue) Value() int { return 1 }

//go:noinline
func (entryValue) Closure() func() int { return func() int { return 5 } }

type entryPtr struct{ n int }

func (p *entryPtr) Ptr() int { return p.n }

func entryGeneric[T any](x T) T { return x }

// entryVar's initialiser holds a closure, which runs with the package.
var entryVar = func() int { return 2 }

var entryInit func() int

func init() { entryInit = func() int { return 3 } }

func TestEntryOf(t *testing.T) {
	closure := func() func() int { return func() int { return 4 } }
	var p entryPtr
	for _, c := range []struct {
		fn   any
		want string
	}{
		{gen, "thv/pipeline.gen"},
		{closure, "thv/pipeline.TestEntryOf"},
		{closure(), "thv/pipeline.TestEntryOf"},
		{filepath.Join, "path/filepath.Join"},
		{(*strings.Builder).Len, "strings.Builder.Len"},
		{entryValue.Value, "thv/pipeline.entryValue.Value"},
		{(*entryPtr).Ptr, "thv/pipeline.entryPtr.Ptr"},
		{p.Ptr, "thv/pipeline.entryPtr.Ptr"},
		{entryValue{}.Value, "thv/pipeline.entryValue.Value"},
		{entryValue{}.Closure(), "thv/pipeline.entryValue"}, // the type: all its methods
		{entryGeneric[int], "thv/pipeline.entryGeneric"},
		{entryVar, "thv/pipeline.init"},
		{entryInit, "thv/pipeline.init"},
		{nil, ""},
		{42, ""},
	} {
		if got := EntryOf(c.fn); got != c.want {
			t.Errorf("EntryOf(%s) = %q, want %q", symbolOf(c.fn), got, c.want)
		}
	}
}

// TestFastKeyIsTheKey: the scheduler's resumed-hash keys equal the SHA-256
// of the whole preimage, for every task of a plan with shared heads.
func TestFastKeyIsTheKey(t *testing.T) {
	e := newEnv(t)
	e.repro(diamond(3), Options{Jobs: 2})
	plan := diamond(3)
	r := e.project(plan).runner()
	if _, err := r.Run(context.Background(), Options{DryRun: true}); err != nil {
		t.Fatal(err)
	}
	var h keyHasher
	n := 0
	for _, task := range plan.Tasks {
		res := r.result(task)
		if res.code == "" {
			continue
		}
		if got, want := h.key(res.parts, res.code), res.parts.key(); got != want || res.Key != want {
			t.Fatalf("%s: fast key %s, scheduler %s, SHA-256 of the preimage %s", task.ID, got, res.Key, want)
		}
		n++
	}
	if n != len(plan.Tasks) {
		t.Fatalf("only %d of %d tasks had keys", n, len(plan.Tasks))
	}
}

// TestDependencyOutsideThePlan: a task whose input comes from a task that
// was never added fails with a clear error instead of waiting forever.
func TestDependencyOutsideThePlan(t *testing.T) {
	e := newEnv(t)
	p := NewPlan()
	stray := &Task{ID: "stray", Kind: "gen", Params: genParams{Name: "s"}}
	p.Add(&Task{ID: "ok", Kind: "gen", Params: genParams{Name: "ok"}})
	p.Add(&Task{ID: "bad", Kind: "sum", Params: "b", Deps: []Dep{{Name: "s", From: stray, Output: "x"}}})
	rep, err := e.project(p).Repro(context.Background(), Options{Jobs: 1})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Results[0].Status != Executed || rep.Results[1].Status != Failed || !strings.Contains(rep.Results[1].Err.Error(), "not in the plan") {
		t.Fatalf("ok: %v; bad: %v %v", rep.Results[0].Status, rep.Results[1].Status, rep.Results[1].Err)
	}
}

// TestLockIsCheckedAgainstTheStore: a lock edited to give a task another
// existing object (two tasks' digests swapped) is not trusted, and neither is
// the store: the two disputed tasks are re-executed and the computation
// decides (here for the index), the disputes are reported by task ID,
// downstream tasks read the right input, and the lock is corrected from the
// re-executions. Unsafe output names are refused.
func TestLockIsCheckedAgainstTheStore(t *testing.T) {
	e := newEnv(t)
	e.repro(diamond(2), Options{Jobs: 2})
	good := e.lock()
	if !e.project(diamond(2)).runner().trustLock {
		t.Fatal("the lock thv wrote is not sealed in the store")
	}
	l, _ := ReadLock(filepath.Join(e.dir, "test.lock"))
	a0, _ := l.Record("gen/a/0")
	a1, _ := l.Record("gen/a/1")
	a0.Outputs, a1.Outputs = withOutput(a0.Outputs, "x", outputOf(a1.Outputs, "x")), withOutput(a1.Outputs, "x", outputOf(a0.Outputs, "x"))
	if err := l.Write(filepath.Join(e.dir, "test.lock")); err != nil {
		t.Fatal(err)
	}
	p := e.project(diamond(2))
	if p.runner().trustLock {
		t.Fatal("an edited lock is trusted")
	}
	var log strings.Builder
	rep, err := p.Repro(context.Background(), Options{Jobs: 2, Logger: newTextLogger(&log)})
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(rep, Executed); !slices.Equal(got, []string{"gen/a/0", "gen/a/1"}) {
		t.Fatalf("executed %v, want the two disputed tasks only; log %q", got, log.String())
	}
	if len(rep.Disputes) != 2 || rep.Disputes[0].Task != "gen/a/0" || rep.Disputes[0].Winner() != "index" || rep.Disputes[1].Winner() != "index" ||
		!strings.Contains(log.String(), `"agrees with"=index`) {
		t.Fatalf("disputes %v; log %q", rep.Disputes, log.String())
	}
	if string(e.lock()) != string(good) {
		t.Fatal("the lock was not corrected to what the re-execution gives")
	}
	if !e.project(diamond(2)).runner().trustLock {
		t.Fatal("the corrected lock is not sealed")
	}

	for _, bad := range []string{"../../victim.txt", "/etc/passwd", "a/b", ".."} {
		l, _ := ReadLock(filepath.Join(e.dir, "test.lock"))
		r, _ := l.Record("total")
		r.Outputs = OutputsOf(map[string]artifacts.Digest{bad: outputOf(r.Outputs, "y")})
		path := filepath.Join(e.dir, "bad.lock")
		if err := l.Write(path); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadLock(path); err == nil || !strings.Contains(err.Error(), "not a valid lock file") {
			t.Errorf("output name %q: %v", bad, err)
		}
	}
}

// TestIncompleteLockIsNotSealed: a pass with a failure keeps old records
// (and their code units) but does not seal the lock.
func TestIncompleteLockIsNotSealed(t *testing.T) {
	e := newEnv(t)
	e.repro(diamond(2), Options{Jobs: 2})
	before, _ := ReadLock(filepath.Join(e.dir, "test.lock"))
	e.code.set("fake/famA", "a2")
	plan := diamond(2)
	g, _ := plan.Task("gen/a/0")
	g.Kind = "fail"
	if _, err := e.project(plan).Repro(context.Background(), Options{Jobs: 2}); err != nil {
		t.Fatal(err)
	}
	after, _ := ReadLock(filepath.Join(e.dir, "test.lock"))
	if e.project(diamond(2)).runner().trustLock {
		t.Fatal("a lock with records of failed tasks is sealed")
	}
	for u, h := range before.Code {
		if _, ok := after.Code[u]; !ok {
			t.Errorf("code unit %s (%s) lost although records that ran it were kept", u, h)
		}
	}
}

// TestLockOrderIndependentOfExpansions: the tasks expansions add are
// listed after the task that added them, in the order it added them,
// whichever expansion ran first (they run as their triggers finish).
func TestLockOrderIndependentOfExpansions(t *testing.T) {
	build := func(firstB bool) []string {
		p := NewPlan()
		a := p.Add(&Task{ID: "a"})
		ea := p.Add(&Task{ID: "expand-a"})
		eb := p.Add(&Task{ID: "expand-b"})
		p.Add(&Task{ID: "z"})
		expand := func(by *Task, ids ...string) {
			p.expanding, p.added = by, 0
			for _, id := range ids {
				p.Add(&Task{ID: id})
			}
			p.Add(&Task{ID: a.ID}) // already there: not added again
			p.expanding = nil
		}
		if firstB {
			expand(eb, "b1", "b2")
			expand(ea, "a1", "a2", "a3")
		} else {
			expand(ea, "a1", "a2", "a3")
			expand(eb, "b1", "b2")
		}
		var ids []string
		for _, task := range p.lockOrder() {
			ids = append(ids, task.ID)
		}
		return ids
	}
	want := []string{"a", "expand-a", "a1", "a2", "a3", "expand-b", "b1", "b2", "z"}
	for _, firstB := range []bool{false, true} {
		if got := build(firstB); !slices.Equal(got, want) {
			t.Errorf("expand-b first %v: %v, want %v", firstB, got, want)
		}
	}
}
