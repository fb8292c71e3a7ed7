package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"thv/artifacts/damage"
)

// The trust model's tests: nothing the store, the lock or a worker says
// vouches for itself (docs/reliability.md, "Who is trusted").

// launder points the index entry of task id at the objects of task from,
// as someone who can write the store (a shared one) could.
func (e *env) launder(id, from string) {
	e.t.Helper()
	l, err := ReadLock(filepath.Join(e.dir, "test.lock"))
	if err != nil {
		e.t.Fatal(err)
	}
	victim, _ := l.Record(id)
	donor, _ := l.Record(from)
	ve, ok, err := e.store.GetEntry(victim.Key)
	if err != nil || !ok {
		e.t.Fatal(ok, err)
	}
	de, _, _ := e.store.GetEntry(donor.Key)
	ve.Outputs = de.Outputs
	if err := e.store.PutEntry(ve); err != nil {
		e.t.Fatal(err)
	}
}

// unseal removes the seal of the current lock, so that the next pass reads
// the index.
func (e *env) unseal() {
	e.t.Helper()
	l, _ := ReadLock(filepath.Join(e.dir, "test.lock"))
	h := sealKey(l.digest).Hex()
	if err := os.Remove(filepath.Join(e.store.Root(), "index", h[:2], h+".json")); err != nil {
		e.t.Fatal(err)
	}
}

// TestLaunderedIndexIsUndone: a forgery of a verification. Whoever can
// write the store's index points a task's entry at another task's (valid)
// objects. The next repro does not take the store's word: the lock and the
// index disagree, the task is re-executed, the computation sides with the
// lock, the laundered entry is set aside in corrupt/ and replaced, and
// nothing downstream changes: the lock keeps its bytes.
func TestLaunderedIndexIsUndone(t *testing.T) {
	e := newEnv(t)
	e.repro(diamond(2), Options{Jobs: 2})
	good := e.lock()
	e.launder("gen/a/0", "gen/b/0")
	e.unseal()
	var log strings.Builder
	rep := e.repro(diamond(2), Options{Jobs: 2, Logger: newTextLogger(&log)})
	if got := ids(rep, Executed); !slices.Equal(got, []string{"gen/a/0"}) {
		t.Fatalf("executed %v, want only the disputed gen/a/0; log %q", got, log.String())
	}
	if len(rep.Disputes) != 1 || rep.Disputes[0].Task != "gen/a/0" || rep.Disputes[0].Winner() != "lock" ||
		!strings.Contains(log.String(), `"agrees with"=lock`) || !strings.Contains(rep.Disputes[0].String(), "the index entry was wrong and is replaced") {
		t.Fatalf("disputes %v; log %q", rep.Disputes, log.String())
	}
	if string(e.lock()) != string(good) {
		t.Fatal("the lock changed: it was rewritten on the store's word")
	}
	corrupt, _ := os.ReadDir(filepath.Join(e.store.Root(), "corrupt"))
	if len(corrupt) != 1 || !strings.HasPrefix(corrupt[0].Name(), "index-entry-") {
		t.Fatalf("corrupt/ holds %v, want the laundered entry", corrupt)
	}
	// The store now agrees with the lock: the next pass runs nothing.
	if rep := e.repro(diamond(2), Options{Jobs: 2}); rep.Executed != 0 || len(rep.Disputes) != 0 {
		t.Fatalf("second pass: executed %v, disputes %v", ids(rep, Executed), rep.Disputes)
	}
}

// TestVerifyHonoursNoSeal: a forgery of a verification, the lock edited
// and a seal added for the edited bytes (its key is a plain hash anyone
// can compute). A repro on this machine trusts its seals (they are its
// own checks), but Verify reads every record from the index, finds the
// dispute, re-executes the task to say which record is right, and fails.
func TestVerifyHonoursNoSeal(t *testing.T) {
	e := newEnv(t)
	e.repro(diamond(2), Options{Jobs: 2})
	path := filepath.Join(e.dir, "test.lock")
	l, _ := ReadLock(path)
	total, _ := l.Record("total")
	forged, err := e.store.Put([]byte("a forged total"))
	if err != nil {
		t.Fatal(err)
	}
	honest := outputOf(total.Outputs, "y")
	total.Outputs = withOutput(total.Outputs, "y", forged)
	if err := l.Write(path); err != nil {
		t.Fatal(err)
	}
	l, _ = ReadLock(path)
	if err := seal(e.store, l); err != nil {
		t.Fatal(err)
	}
	p := e.project(diamond(2))
	if !p.runner().trustLock {
		t.Fatal("the forged seal was not taken by the fast path: the test does not test what it says")
	}
	rep, err := p.Verify(context.Background(), VerifyOptions{Jobs: 2})
	if err != nil {
		t.Fatal(err)
	}
	if rep.OK() || len(rep.Disputes) != 1 || rep.Disputes[0].Task != "total" || rep.Disputes[0].Winner() != "index" ||
		outputOf(rep.Disputes[0].Computed, "y") != honest {
		t.Fatalf("verify of a sealed forged lock: ok %v, disputes %v", rep.OK(), rep.Disputes)
	}
}

// TestSealLapsesOnQuarantine: an index entry of a sealed lock's task found
// corrupt and quarantined makes the seal lapse, so that the next repro
// reads the index, re-executes the task and recreates its entry (a sealed
// lock used to hide the loss forever).
func TestSealLapsesOnQuarantine(t *testing.T) {
	e := newEnv(t)
	e.repro(diamond(2), Options{Jobs: 2})
	l, _ := ReadLock(filepath.Join(e.dir, "test.lock"))
	rec, _ := l.Record("sum/b")
	damage.FlipEntry(t, e.store, rec.Key)
	if _, _, err := e.store.GetEntry(rec.Key); err == nil {
		t.Fatal("a garbage entry was read")
	}
	if e.project(diamond(2)).runner().trustLock {
		t.Fatal("the seal still holds after an index entry of its lock was quarantined")
	}
	rep := e.repro(diamond(2), Options{Jobs: 2})
	if got := ids(rep, Executed); !slices.Equal(got, []string{"sum/b"}) {
		t.Fatalf("executed %v, want sum/b (its entry recreated)", got)
	}
	if _, ok, err := e.store.GetEntry(rec.Key); !ok || err != nil {
		t.Fatalf("the entry was not recreated: %v %v", ok, err)
	}
	if !e.project(diamond(2)).runner().trustLock {
		t.Fatal("the repro that recreated the entry did not seal the lock")
	}
}

// liarEnv, when set, makes the test worker (helpers_test.go) lie: after
// storing its outputs it reports the digest of other bytes, which it also
// stored ("digest"), or it overwrites its output objects in place and
// reports the honest digests ("objects").
const liarEnv = "THV_PIPELINE_TEST_LIAR"

// TestWorkerReportsAreChecked: a forgery of a verification, a worker's
// printed digests are claims. With every executor but the in-process one,
// the host reads back the index entry the worker stored and re-hashes its
// objects: in a repro, and in a verify (whose worker writes a scratch
// store).
func TestWorkerReportsAreChecked(t *testing.T) {
	for _, lie := range []string{"digest", "objects"} {
		t.Run(lie, func(t *testing.T) {
			e := newEnv(t)
			ex := testProcessExecutor(e)
			ex.Env = append(ex.Env, liarEnv+"="+lie)
			defer ex.Close()
			rep := e.repro(diamond(1), Options{Jobs: 1, Executor: ex})
			if rep.Executed != 0 || rep.Failed == 0 {
				t.Fatalf("a lying worker's results were accepted: executed %v", ids(rep, Executed))
			}
			if err := rep.Results[0].Err; err == nil || !strings.Contains(err.Error(), "checking the worker's answer") {
				t.Fatalf("first failure: %v", err)
			}

			// Verify: an honest repro, then a liar re-executes into scratch.
			e.repro(diamond(1), Options{Jobs: 1})
			v, err := e.project(diamond(1)).Verify(context.Background(), VerifyOptions{Jobs: 1,
				NewExecutor: func(scratch string) (Executor, error) {
					return &Process{Command: []string{os.Args[0]}, Env: append(os.Environ(),
						workerEnv+"="+e.store.Root(), workerOutEnv+"="+scratch, liarEnv+"="+lie)}, nil
				}})
			if err != nil {
				t.Fatal(err)
			}
			if v.OK() || len(v.Mismatches) == 0 || !strings.Contains(v.Mismatches[0].Err.Error(), "checking the worker's answer") {
				t.Fatalf("verify with a lying worker: ok %v, %v", v.OK(), v.Mismatches)
			}
		})
	}
}

// TestVerifyTimeCeiling: a re-executed task over the time ceiling fails,
// named, instead of holding the verification forever.
func TestVerifyTimeCeiling(t *testing.T) {
	e := newEnv(t)
	plan := NewPlan()
	plan.Add(&Task{ID: "forever", Kind: "gen", Params: genParams{Name: "f"}})
	e.repro(plan, Options{Jobs: 1})
	plan = NewPlan()
	plan.Add(&Task{ID: "forever", Kind: "gen", Params: genParams{Name: "f"}})
	p := e.project(plan)
	// The verifier's kinds: gen now blocks until cancelled, as a task
	// whose protocol asks for more than the ceiling allows would.
	kinds := fakeKindList()
	kinds[0].Run = slow
	k, err := NewKinds(e.code, kinds...)
	if err != nil {
		t.Fatal(err)
	}
	p.Kinds = k
	start := time.Now()
	rep, err := p.Verify(context.Background(), VerifyOptions{Jobs: 1, TaskTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if rep.OK() || len(rep.Mismatches) != 1 || rep.Mismatches[0].Task != "forever" || !strings.Contains(rep.Mismatches[0].Err.Error(), "time ceiling of 200ms") {
		t.Fatalf("after %s: ok %v, %v", time.Since(start), rep.OK(), rep.Mismatches)
	}
}

// TestVerifyMemoryCeiling: a worker process whose task allocates beyond
// its ceiling dies, and the host names the task and the ceiling.
func TestVerifyMemoryCeiling(t *testing.T) {
	if raceEnabled {
		// The ceiling is an address-space limit (RLIMIT_AS): a race-built
		// worker cannot even start under it, for a reason of its own.
		t.Skip("the race detector's shadow memory does not fit under an address-space ceiling; run without -race")
	}
	e := newEnv(t)
	e.repro(diamond(1), Options{Jobs: 1})
	const limit = 1536 << 20
	rep, err := e.project(diamond(1)).Verify(context.Background(), VerifyOptions{Jobs: 1,
		NewExecutor: func(scratch string) (Executor, error) {
			return &Process{Command: []string{os.Args[0]}, MemoryLimit: limit, Env: append(os.Environ(),
				workerEnv+"="+e.store.Root(), workerOutEnv+"="+scratch, hogEnv+"=1536")}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.OK() || len(rep.Mismatches) == 0 || !strings.Contains(rep.Mismatches[0].Err.Error(), "exceeded the memory ceiling of 1536 MiB") {
		t.Fatalf("ok %v, %v", rep.OK(), rep.Mismatches)
	}
}
