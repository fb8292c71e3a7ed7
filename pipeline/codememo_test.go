package pipeline

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"thv/artifacts"
	"thv/artifacts/damage"
	"thv/pipeline/codeid"
)

// The code identity memo (codememo.go), with a real codeid Module over a
// small fake module that has the fake kinds' packages.

const memoBinary = "memoTestBinary0001/memoTestBinary0002"

func memoSources() fstest.MapFS {
	fsys := fstest.MapFS{}
	for _, p := range []string{"gen", "sum", "fail", "slow", "flaky", "util", "famA", "famB"} {
		src := "package " + p + "\n\nvar X = 1\n"
		if p == "gen" || p == "sum" {
			src = "package " + p + "\n\nimport \"fake/util\"\n\nvar X = util.X\n"
		}
		fsys[p+"/"+p+".go"] = &fstest.MapFile{Data: []byte(src)}
	}
	return fsys
}

// memoModule is a fresh process's Module of a binary.
func memoModule(fsys fstest.MapFS, binary string) *codeid.Module {
	return codeid.New(codeid.Config{Path: "fake", Sources: fsys, Toolchain: "go-test", Binary: binary})
}

func (e *env) memoProject(code CodeSource, plan *Plan) *Project {
	e.t.Helper()
	p, err := NewProject(plan, fakeKinds(e.t, code), e.store, filepath.Join(e.dir, "test.lock"), "test")
	if err != nil {
		e.t.Fatal(err)
	}
	return p
}

func (e *env) memoEntry(binary string) (artifacts.Entry, bool) {
	e.t.Helper()
	ent, ok, err := e.store.GetEntry(memoKey(binary))
	if err != nil {
		e.t.Fatal(err)
	}
	return ent, ok
}

// identities returns every (kind, roots) identity digest a plan's tasks ask
// kinds for.
func identities(t *testing.T, k *Kinds, plan *Plan) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, task := range plan.Tasks {
		id, err := k.Identity(task.Kind, task.Roots)
		if err != nil {
			t.Fatal(err)
		}
		out[task.Kind+" "+strings.Join(task.Roots, ",")] = id.Digest
	}
	return out
}

// TestCodeMemo: the first repro of a binary keeps its memo in the store;
// the next process of the same binary takes every package hash from it,
// normalising nothing, and gets the same identities, keys and lock.
func TestCodeMemo(t *testing.T) {
	e := newEnv(t)
	fsys := memoSources()
	if rep, err := e.memoProject(memoModule(fsys, memoBinary), diamond(2)).Repro(context.Background(), Options{Jobs: 2}); err != nil || rep.Executed != len(diamond(2).Tasks) {
		t.Fatalf("cold repro: %v", err)
	}
	lock := e.lock()
	ent, ok := e.memoEntry(memoBinary)
	if !ok || ent.Kind != memoKind || ent.Meta["binary"] != memoBinary || len(ent.Outputs) != 1 {
		t.Fatalf("memo entry %+v, found %v", ent, ok)
	}

	plain := fakeKinds(t, memoModule(fsys, memoBinary))
	seeded := plain.memoised(e.store)
	if seeded == plain {
		t.Fatal("the store's memo was not used")
	}
	if want, got := identities(t, plain, diamond(2)), identities(t, seeded, diamond(2)); !maps.Equal(want, got) {
		t.Fatalf("identities from the memo %v, computed %v", got, want)
	}
	if _, computed := seeded.code.(*codeid.Module).Memo(); computed {
		t.Fatal("a package was normalised despite the memo")
	}

	// The next repro: a no-op, and the memo is not rewritten.
	before, _ := os.Stat(filepath.Join(e.store.Root(), "index", memoKey(memoBinary).Hex()[:2], memoKey(memoBinary).Hex()+".json"))
	rep, err := e.memoProject(memoModule(fsys, memoBinary), diamond(2)).Repro(context.Background(), Options{Jobs: 2})
	if err != nil || rep.Executed != 0 {
		t.Fatalf("no-op repro executed %v, %v", ids(rep, Executed), err)
	}
	after, _ := os.Stat(filepath.Join(e.store.Root(), "index", memoKey(memoBinary).Hex()[:2], memoKey(memoBinary).Hex()+".json"))
	if before == nil || after == nil || !before.ModTime().Equal(after.ModTime()) {
		t.Error("a pass that normalised nothing rewrote the memo")
	}
	if string(e.lock()) != string(lock) {
		t.Fatal("the lock changed")
	}

	// A pass with a failure keeps no memo, as it seals no lock.
	failing := newEnv(t)
	plan := NewPlan()
	plan.Add(&Task{ID: "broken", Kind: "fail"})
	if rep, _ := failing.memoProject(memoModule(fsys, memoBinary), plan).Repro(context.Background(), Options{Jobs: 1}); rep == nil || rep.Failed != 1 {
		t.Fatalf("the failing pass: %+v", rep)
	}
	if _, ok := failing.memoEntry(memoBinary); ok {
		t.Fatal("a pass with a failure kept a memo")
	}

	// A binary without a build ID keeps no memo, and uses none.
	noID := fakeKinds(t, memoModule(fsys, ""))
	if noID.memoised(e.store) != noID {
		t.Fatal("a binary without a build ID used a memo")
	}
	if err := noID.saveMemo(e.store); err != nil {
		t.Fatal(err)
	}
}

// forgeMemo rewrites the store's memo of memoBinary with edit applied to
// its JSON, as someone who can write the store could.
func (e *env) forgeMemo(edit func(m map[string]any)) {
	e.t.Helper()
	ent, ok := e.memoEntry(memoBinary)
	if !ok {
		e.t.Fatal("no memo")
	}
	data, err := e.store.Get(ent.Outputs[0].Digest)
	if err != nil {
		e.t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		e.t.Fatal(err)
	}
	edit(m)
	data, _ = json.Marshal(m)
	d, err := e.store.Put(data)
	if err != nil {
		e.t.Fatal(err)
	}
	ent.Outputs[0] = artifacts.Output{Name: "memo.json", Digest: d, Size: int64(len(data))}
	if err := e.store.PutEntry(ent); err != nil {
		e.t.Fatal(err)
	}
}

// memoPackage returns the memo's entry of package path.
func memoPackage(m map[string]any, path string) map[string]any {
	for _, p := range m["packages"].([]any) {
		if p := p.(map[string]any); p["path"] == path {
			return p
		}
	}
	return nil
}

// forgeDeclHash sets the hash of the first declaration of a package of a
// memo decoded as JSON (its second field).
func forgeDeclHash(m map[string]any, path, hash string) {
	decls := memoPackage(m, path)["decls"].([]any)
	f := strings.Split(decls[0].(string), " ")
	f[1] = hash
	decls[0] = strings.Join(f, " ")
}

// TestCodeMemoChecked: a memo is checked before it is used, and what the
// checks cannot see is what a pass that honours no seal never reads.
func TestCodeMemoChecked(t *testing.T) {
	fsys := memoSources()
	setup := func(t *testing.T) *env {
		e := newEnv(t)
		if _, err := e.memoProject(memoModule(fsys, memoBinary), diamond(2)).Repro(context.Background(), Options{Jobs: 2}); err != nil {
			t.Fatal(err)
		}
		return e
	}
	status := func(e *env) *Report {
		rep, err := e.memoProject(memoModule(fsys, memoBinary), diamond(2)).Status(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	const forgedHash = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

	// Refused as a whole, or per package: the pass computes, every task
	// stays up to date.
	for _, tc := range []struct {
		name string
		edit func(m map[string]any)
	}{
		{"files changed since", func(m map[string]any) {
			memoPackage(m, "fake/util")["sources"] = forgedHash
			forgeDeclHash(m, "fake/util", forgedHash)
		}},
		{"another binary's", func(m map[string]any) {
			m["binary"] = "otherBinary0000001/otherBinary0000002"
			forgeDeclHash(m, "fake/util", forgedHash)
		}},
		{"another toolchain", func(m map[string]any) {
			m["toolchain"] = "go0"
			forgeDeclHash(m, "fake/util", forgedHash)
		}},
		{"malformed", func(m map[string]any) {
			forgeDeclHash(m, "fake/util", strings.ToUpper(forgedHash))
		}},
		{"unknown field", func(m map[string]any) {
			m["trust"] = "me"
			forgeDeclHash(m, "fake/util", forgedHash)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := setup(t)
			e.forgeMemo(tc.edit)
			if rep := status(e); rep.Cached != len(rep.Results) {
				t.Fatalf("status after a memo %s: %d of %d cached", tc.name, rep.Cached, len(rep.Results))
			}
			// The next repro replaces the memo with its own.
			if rep, err := e.memoProject(memoModule(fsys, memoBinary), diamond(2)).Repro(context.Background(), Options{Jobs: 2}); err != nil || rep.Executed != 0 {
				t.Fatalf("repro: executed %v, %v", ids(rep, Executed), err)
			}
			if k := fakeKinds(t, memoModule(fsys, memoBinary)); k.memoised(e.store) == k {
				t.Fatal("the memo was not replaced by a good one")
			}
		})
	}

	t.Run("damaged object", func(t *testing.T) {
		e := setup(t)
		ent, _ := e.memoEntry(memoBinary)
		damage.Flip(t, e.store, ent.Outputs[0].Digest)
		if k := fakeKinds(t, memoModule(fsys, memoBinary)); k.memoised(e.store) != k {
			t.Fatal("a damaged memo object was used")
		}
		if rep := status(e); rep.Cached != len(rep.Results) {
			t.Fatalf("status: %d of %d cached", rep.Cached, len(rep.Results))
		}
	})

	// A forged hash for files that did not change passes every check:
	// the pass takes it, and sees changed code (the forger could as well
	// have forged index entries). Verification uses no memo: it computes
	// the identities, finds every task up to date and the lock true.
	t.Run("forged hash", func(t *testing.T) {
		e := setup(t)
		e.forgeMemo(func(m map[string]any) { forgeDeclHash(m, "fake/util", forgedHash) })
		rep := status(e)
		var stale []string
		for _, r := range rep.Results {
			if r.Status != Cached {
				stale = append(stale, r.Task.ID)
				if !strings.Contains(r.Reason, "code changed") && (r.Task.Kind == "gen" || !strings.Contains(r.Reason, "input will be recomputed")) {
					t.Errorf("%s: reason %q, want code changed", r.Task.ID, r.Reason)
				}
			}
		}
		if len(stale) != len(rep.Results) { // every task reaches fake/util
			t.Fatalf("stale under the forged memo: %v of %d tasks", stale, len(rep.Results))
		}
		vr, err := e.memoProject(memoModule(fsys, memoBinary), diamond(2)).Verify(context.Background(), VerifyOptions{Jobs: 2})
		if err != nil {
			t.Fatal(err)
		}
		if !vr.OK() {
			t.Fatalf("verify took the forged memo: %+v", vr)
		}
	})
}

// TestCodeMemoReadOnlyAndGC: a store that cannot be written serves its memo
// and gets none; gc keeps the running binary's memo and removes another
// binary's.
func TestCodeMemoReadOnlyAndGC(t *testing.T) {
	fsys := memoSources()
	e := newEnv(t)
	const other = "otherBinary0000001/otherBinary0000002"
	if _, err := e.memoProject(memoModule(fsys, other), diamond(2)).Repro(context.Background(), Options{Jobs: 2}); err != nil {
		t.Fatal(err)
	}
	ro := e.store.Untrusted()
	k := fakeKinds(t, memoModule(fsys, memoBinary))
	identities(t, k, diamond(2))
	if err := k.saveMemo(ro); err != nil {
		t.Fatalf("saving to a read-only store: %v", err)
	}
	if _, ok := e.memoEntry(memoBinary); ok {
		t.Fatal("a read-only store got a memo")
	}
	if err := k.saveMemo(e.store); err != nil {
		t.Fatal(err)
	}
	if k2 := fakeKinds(t, memoModule(fsys, memoBinary)); k2.memoised(ro) == k2 {
		t.Fatal("a read-only store's memo was not used")
	}

	p := e.memoProject(memoModule(fsys, memoBinary), diamond(2))
	if _, err := p.GC(context.Background(), false); err != nil {
		t.Fatal(err)
	}
	mine, ok := e.memoEntry(memoBinary)
	if !ok || !e.store.Has(mine.Outputs[0].Digest) {
		t.Fatal("gc removed the running binary's memo")
	}
	if _, ok := e.memoEntry(other); ok {
		t.Fatal("gc kept another binary's memo")
	}
	if rep, err := p.Status(context.Background()); err != nil || rep.Cached != len(rep.Results) {
		t.Fatalf("after gc: %v", err)
	}
}
