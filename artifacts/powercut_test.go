package artifacts_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"thv/artifacts"
	"thv/pipeline"
	"thv/pipeline/codeid"
)

// The tests of durability from verification (durable.go): a
// store opened Create does not fsync its writes one by one; a barrier
// before the lock is written and sealed, and at the end of a pass, makes
// them durable. A simulated power cut (artifacts.FaultFS) damages what was
// written since the last barrier; reopening the store after the restart
// and running the pipeline again must detect every damaged object and
// entry, recompute exactly the tasks they belong to, end with the lock of
// an uninterrupted run, and never give damaged bytes.

// powerPlan is the plan of pipeline's Example: two "words" tasks feeding
// "common". second is the text of words/b.
func powerPlan(second string) *pipeline.Plan {
	p := pipeline.NewPlan()
	a := p.Add(&pipeline.Task{ID: "words/a", Kind: "words", Params: map[string]string{"text": "to be or not to be"}})
	b := p.Add(&pipeline.Task{ID: "words/b", Kind: "words", Params: map[string]string{"text": second}})
	p.Add(&pipeline.Task{ID: "common", Kind: "common", Deps: []pipeline.Dep{{Name: "a", From: a, Output: "list"}, {Name: "b", From: b, Output: "list"}}})
	return p
}

func powerKinds(t *testing.T) *pipeline.Kinds {
	t.Helper()
	code := codeid.New(codeid.Config{Path: "example", Toolchain: "go1.26", Sources: fstest.MapFS{
		"text/text.go": {Data: []byte("package text\n")},
	}})
	words := func(_ context.Context, params []byte, _ map[string][]byte) (map[string][]byte, error) {
		var p struct{ Text string }
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, err
		}
		return map[string][]byte{"list": []byte(strings.Join(strings.Fields(p.Text), "\n"))}, nil
	}
	common := func(_ context.Context, _ []byte, in map[string][]byte) (map[string][]byte, error) {
		a, b := strings.Split(string(in["a"]), "\n"), strings.Split(string(in["b"]), "\n")
		var both []string
		for _, w := range a {
			if slices.Contains(b, w) && !slices.Contains(both, w) {
				both = append(both, w)
			}
		}
		slices.Sort(both)
		return map[string][]byte{"words": []byte(strings.Join(both, " "))}, nil
	}
	kinds, err := pipeline.NewKinds(code,
		pipeline.Kind{Name: "words", Run: words, Entry: "example/text"},
		pipeline.Kind{Name: "common", Run: common, Entry: "example/text"})
	if err != nil {
		t.Fatal(err)
	}
	return kinds
}

// powerRepro runs one pass of the plan on st and returns its report (and
// error) and the IDs of the tasks it executed.
func powerRepro(t *testing.T, st *artifacts.Store, kinds *pipeline.Kinds, lockPath, second string) (*pipeline.Report, []string, error) {
	t.Helper()
	proj, err := pipeline.NewProject(powerPlan(second), kinds, st, lockPath, "power")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := proj.Repro(context.Background(), pipeline.Options{Jobs: 2})
	var ran []string
	for _, r := range rep.Results {
		if r.Status == pipeline.Executed {
			ran = append(ran, r.Task.ID)
		}
	}
	slices.Sort(ran)
	return rep, ran, err
}

// sealRel is where the seal of the lock file at path lives in the store
// (pipeline/seal.go: an index entry keyed by the lock's digest).
func sealRel(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	k := sha256.Sum256([]byte("thv lock seal v1\n" + artifacts.Sum(b).String()))
	h := artifacts.Key(k).Hex()
	return filepath.Join("index", h[:2], h+".json")
}

// powerReference is the lock of an uninterrupted run: the plan, then the
// plan with words/b changed.
func powerReference(t *testing.T, kinds *pipeline.Kinds) []byte {
	t.Helper()
	dir := t.TempDir()
	st, err := artifacts.Open(filepath.Join(dir, ".thv"), artifacts.Create)
	if err != nil {
		t.Fatal(err)
	}
	lock := filepath.Join(dir, "power.lock")
	for _, second := range []string{"not that question", "to do is to be"} {
		if _, _, err := powerRepro(t, st, kinds, lock, second); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(lock)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestPowerCut(t *testing.T) {
	kinds := powerKinds(t)
	want := powerReference(t, kinds)
	isEntry := func(rel string) bool {
		what, _, ok := artifacts.IsRecord(rel)
		return ok && what == "entry" || strings.HasPrefix(rel, "index"+string(filepath.Separator))
	}

	type cut struct {
		name string
		// barrier is the barrier of the second pass that is the cut:
		// 1, before the lock is written; 2, at the end of the pass,
		// after the seal.
		barrier int
		// which files written since the last barrier are damaged
		// (nil: all).
		which func(st *artifacts.Store, rel string) bool
		// sameBoot reopens the store without a restart of the machine:
		// then nothing Open checks, and only reading verifies.
		sameBoot bool
		// wantRan are the tasks the pass after the cut executes
		// (wantRanDrop, if set, when the damage is Drop).
		wantRan, wantRanDrop []string
	}
	var cuts []cut
	for _, c := range []cut{
		// Everything the second pass wrote (words/b's and common's
		// objects and entries) is damaged: both recomputed.
		{name: "all", barrier: 1, wantRan: []string{"common", "words/b"}},
		// Only the object words/b gave, common's input: words/b is
		// recomputed (to the same bytes), common stays cached.
		{name: "input", barrier: 1, which: func(st *artifacts.Store, rel string) bool {
			return objectRelOf(st, rel, "to\ndo\nis\nto\nbe")
		}, wantRan: []string{"words/b"}},
		// Only common's index entry: common alone.
		{name: "entry", barrier: 1, which: func(st *artifacts.Store, rel string) bool {
			return isEntry(rel) && rel != entryRelOfKind(st, rel, "words")
		}, wantRan: []string{"common"}},
		// The cut at the end of the pass: the lock is written and
		// sealed, the seal (and the code memo) not yet synced. A lost
		// seal is a cache lost: the next pass checks the lock against
		// the index and runs nothing.
		{name: "seal", barrier: 2, wantRan: nil},
		// Defence in depth: the same damage to words/b's object and
		// common's entry without the check at Open (as if the store
		// were reopened in the same boot). common is re-executed; its
		// input fails verification when read, so its producer is
		// re-executed to recover it (a recovery, not counted) and
		// common then runs on the recomputed bytes: never on the
		// damaged ones, and it does not fail. (A record dropped from the
		// middle of a pack is bytes never written, which its index still
		// lists: found corrupt when read, as a garbled one, not missing
		// as a lost loose file is.)
		{name: "read", barrier: 1, sameBoot: true, which: func(st *artifacts.Store, rel string) bool {
			return objectRelOf(st, rel, "to\ndo\nis\nto\nbe") || isEntry(rel) && rel != entryRelOfKind(st, rel, "words")
		}, wantRan: []string{"common"}},
	} {
		for _, d := range []artifacts.Damage{artifacts.Drop, artifacts.Empty, artifacts.Truncate, artifacts.Garble} {
			c := c
			c.name += "/" + d.String()
			cuts = append(cuts, c)
		}
	}
	for i, c := range cuts {
		d := artifacts.Damage(i % 4)
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			storeDir := filepath.Join(dir, ".thv")
			lock := filepath.Join(dir, "power.lock")
			st, err := artifacts.Open(storeDir, artifacts.Create)
			if err != nil {
				t.Fatal(err)
			}
			if _, _, err := powerRepro(t, st, kinds, lock, "not that question"); err != nil {
				t.Fatal(err)
			}
			before, err := os.ReadFile(lock)
			if err != nil {
				t.Fatal(err)
			}
			ff := artifacts.InjectFaults(st)
			ff.CutAtBarrier(c.barrier)
			_, ran, err := powerRepro(t, st, kinds, lock, "to do is to be")
			if !slices.Equal(ran, []string{"common", "words/b"}) {
				t.Fatalf("the interrupted pass executed %v", ran)
			}
			after, rerr := os.ReadFile(lock)
			if rerr != nil {
				t.Fatal(rerr)
			}
			if c.barrier == 1 {
				// No lock is written without its barrier.
				if !errors.Is(err, artifacts.ErrPowerCut) {
					t.Fatalf("repro: %v, want the power cut", err)
				}
				if !bytes.Equal(after, before) {
					t.Fatal("the lock was rewritten although its barrier failed")
				}
			} else if !bytes.Equal(after, want) {
				t.Fatalf("lock before the end barrier:\n%s\nwant\n%s", after, want)
			}
			var which func(rel string) bool // nil: everything, pack indexes too
			if c.which != nil {
				which = func(rel string) bool { return c.which(st, rel) }
			}
			hit, err := ff.PowerCut(d, which)
			if err != nil {
				t.Fatal(err)
			}
			if len(hit) == 0 {
				t.Fatalf("nothing to damage among %v", ff.Unsynced())
			}
			t.Logf("damaged (%v): %v", d, hit)

			// The machine restarts (another boot ID); the store is
			// opened again.
			if !c.sameBoot {
				defer artifacts.SetBootID("after the cut")()
			}
			st2, err := artifacts.Open(storeDir, artifacts.Create)
			if err != nil {
				t.Fatal(err)
			}
			if rec := st2.Recovered(); c.sameBoot {
				if rec != nil {
					t.Fatal("a check at Open in the same boot")
				}
			} else {
				if rec == nil {
					t.Fatal("no check after the restart")
				}
				// Every damaged file or record still in place was found
				// and set aside (a torn tail of several records is one
				// problem): below, none of them is served.
				if d != artifacts.Drop && len(rec.Problems) == 0 {
					t.Errorf("the check found nothing, %d files or records were damaged", len(hit))
				}
				for _, rel := range hit {
					if _, _, ok := artifacts.IsRecord(rel); ok {
						if artifacts.RecordLive(st2, rel) {
							t.Errorf("record %s still served after the check", rel)
						}
						continue
					}
					if strings.HasSuffix(rel, ".idx") {
						continue // a pack's index: rebuilt by the check
					}
					if _, err := os.Lstat(filepath.Join(storeDir, rel)); d != artifacts.Drop && err == nil {
						t.Errorf("%s still in place after the check", rel)
					}
				}
			}
			if markers, _ := filepath.Glob(filepath.Join(storeDir, "UNSYNCED.*")); len(markers) > 0 {
				t.Errorf("markers left after the recovery: %v", markers)
			}
			ff2 := artifacts.InjectFaults(st2)
			_, ran, err = powerRepro(t, st2, kinds, lock, "to do is to be")
			if err != nil {
				t.Fatal(err)
			}
			wantRan := c.wantRan
			if d == artifacts.Drop && c.wantRanDrop != nil {
				wantRan = c.wantRanDrop
			}
			if !slices.Equal(ran, wantRan) {
				t.Errorf("after the cut the pass executed %v, want %v", ran, wantRan)
			}
			got, err := os.ReadFile(lock)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("lock after the cut:\n%s\nwant (uninterrupted)\n%s", got, want)
			}
			// The seal was written after a barrier, with nothing unsynced.
			if n, b, ok := ff2.WrittenAfter(sealRel(t, lock)); !ok || n != 0 || b < 1 {
				t.Errorf("seal written with %d files unsynced after %d barriers (written: %v)", n, b, ok)
			}
			if u := ff2.Unsynced(); len(u) > 0 {
				t.Errorf("unsynced after the pass: %v", u)
			}
			// Every object the lock names is whole, and the store checks
			// clean.
			check, err := st2.Check(context.Background(), 2, nil)
			if err != nil || len(check.Problems) > 0 {
				t.Errorf("check after the pass: %v %v", check.Problems, err)
			}
			var l struct {
				Tasks []struct {
					Outputs map[string]artifacts.Digest `json:"outputs"`
				} `json:"tasks"`
			}
			if err := json.Unmarshal(got, &l); err != nil {
				t.Fatal(err)
			}
			for _, task := range l.Tasks {
				for name, dig := range task.Outputs {
					b, err := st2.Get(dig)
					if err != nil || artifacts.Sum(b) != dig {
						t.Errorf("output %s (%v): %v", name, dig, err)
					}
				}
			}
		})
	}
}

// objectRelOf returns rel if rel is the object holding data: its record
// in a pack, or its loose file.
func objectRelOf(_ *artifacts.Store, rel, data string) bool {
	d := artifacts.Sum([]byte(data))
	if what, id, ok := artifacts.IsRecord(rel); ok {
		return what == "object" && id == d
	}
	h := d.Hex()
	return rel == filepath.Join("objects", h[:2], h)
}

// entryRelOfKind returns rel if the index entry at rel (a record or a
// loose file) is of kind (read before any damage), else "".
func entryRelOfKind(st *artifacts.Store, rel, kind string) string {
	var b []byte
	var err error
	if what, _, ok := artifacts.IsRecord(rel); ok {
		if what != "entry" {
			return ""
		}
		b, err = artifacts.RecordPayload(st, rel)
	} else {
		b, err = os.ReadFile(filepath.Join(st.Root(), rel))
	}
	if err != nil {
		return ""
	}
	var e struct{ Kind string }
	if json.Unmarshal(b, &e) != nil || e.Kind != kind {
		return ""
	}
	return rel
}

// TestLockAfterBarrier: a pass that executes writes its lock only after a
// barrier has made every store file it wrote durable, seals it after that
// barrier with nothing unsynced, and ends with a second barrier that
// leaves nothing unsynced; a no-op pass on the sealed lock needs none.
func TestLockAfterBarrier(t *testing.T) {
	kinds := powerKinds(t)
	dir := t.TempDir()
	st, err := artifacts.Open(filepath.Join(dir, ".thv"), artifacts.Create)
	if err != nil {
		t.Fatal(err)
	}
	lock := filepath.Join(dir, "power.lock")
	ff := artifacts.InjectFaults(st)
	var atBarrier []string
	ff.OnBarrier = func(unsynced int) {
		_, err := os.Stat(lock)
		atBarrier = append(atBarrier, fmt.Sprintf("%d unsynced, lock written: %v", unsynced, err == nil))
	}
	if _, ran, err := powerRepro(t, st, kinds, lock, "not that question"); err != nil || len(ran) != 3 {
		t.Fatal(ran, err)
	}
	// Barrier 1: the three tasks' objects and entries (6 files), before
	// the lock exists; barrier 2: the seal.
	if want := []string{"6 unsynced, lock written: false", "1 unsynced, lock written: true"}; !slices.Equal(atBarrier, want) {
		t.Errorf("barriers: %q, want %q", atBarrier, want)
	}
	if n, b, ok := ff.WrittenAfter(sealRel(t, lock)); !ok || n != 0 || b != 1 {
		t.Errorf("seal written with %d files unsynced after %d barriers (written: %v), want 0 after 1", n, b, ok)
	}
	if u := ff.Unsynced(); len(u) > 0 || st.Unsynced() {
		t.Errorf("unsynced after the pass: %v", u)
	}
	atBarrier = nil
	if _, ran, err := powerRepro(t, st, kinds, lock, "not that question"); err != nil || len(ran) != 0 {
		t.Fatal(ran, err)
	}
	if len(atBarrier) != 0 {
		t.Errorf("the no-op pass on a sealed lock made barriers: %q", atBarrier)
	}
}
