package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	thvmodule "thv"
	"thv/pipeline"
	"thv/pipeline/codeid"
	"thv/protocol"
)

// Code identities with rebuilt binaries: a thv built from edited sources
// reruns what its edit can change, and nothing else.

// editedThv builds thv from a copy of the module with one edit of file
// (from replaced by to).
func editedThv(t *testing.T, file, from, to string) string {
	t.Helper()
	dir := t.TempDir()
	copyModule(t, moduleRoot(t), dir)
	path := filepath.Join(dir, filepath.FromSlash(file))
	src, _ := os.ReadFile(path)
	if !bytes.Contains(src, []byte(from)) {
		t.Fatalf("edit not applied: %q not found in %s", from, file)
	}
	os.WriteFile(path, bytes.Replace(src, []byte(from), []byte(to), 1), 0o644)
	return buildThv(t, dir)
}

// reproParams runs bin's repro in dir on a params file.
func reproParams(t *testing.T, bin, dir, params string) {
	t.Helper()
	cmd := exec.Command(bin, "repro", "--params", params, "-j", "2")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("thv repro: %v\n%s", err, out)
	}
}

// lockKeys reads a lock: task ID → key.
func lockKeys(t *testing.T, path string) map[string]string {
	t.Helper()
	l, err := pipeline.ReadLock(path)
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]string{}
	for _, r := range l.Tasks {
		keys[r.ID] = fmt.Sprint(r.Key)
	}
	if len(keys) == 0 {
		t.Fatalf("%s lists no task", path)
	}
	return keys
}

// reaches reports, for every task of a plan (and the collect and figure
// tasks it unfolds, which have no roots), whether its code reaches decl.
func reaches(t *testing.T, plan *pipeline.Plan, ids []string, decl string) map[string]bool {
	t.Helper()
	m, err := codeid.ForBinary(thvmodule.Sources, thvmodule.ThirdParty, thvmodule.ThirdPartyNames)
	if err != nil {
		t.Fatal(err)
	}
	kinds, err := protocol.Kinds()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, id := range ids {
		kind, _, _ := strings.Cut(id, "/")
		var roots []string
		if task, ok := plan.Task(id); ok {
			kind, roots = task.Kind, task.Roots
		}
		k, err := kinds.Lookup(kind)
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		names, err := m.Reached(append([]string{k.Entry}, roots...)...)
		if err != nil {
			t.Fatal(err)
		}
		out[id] = slices.Contains(names, decl)
	}
	return out
}

// TestRebuiltHelperRerunsItsUsers is the scenario that motivated derived
// code identities: a behavioural edit of a helper that one kind's code
// shares with another (the benchmark decoder, which run tasks call),
// rebuilt into a new thv. Every task whose code reaches the decoder must
// rerun (once, only the benchmark tasks did, and early cutoff kept the
// stale runs), the instances (which cannot reach it) stay, and the
// incremental store must end with the lock that a fresh store gives.
func TestRebuiltHelperRerunsItsUsers(t *testing.T) {
	dir := t.TempDir()
	thvRepro(t, buildThv(t, moduleRoot(t)), dir)
	before := lockKeys(t, filepath.Join(dir, tinyLock))

	const from = "bm.SStar, bm.VStar = append(bm.SStar, int(arm[r])), val[r]"
	changed := editedThv(t, "stages/formats/benchmark.go", from, from+"+1")
	r := thvRepro(t, changed, dir)
	after := lockKeys(t, filepath.Join(dir, tinyLock))
	users := reaches(t, tinyPlan(t), slices.Sorted(func(yield func(string) bool) {
		for id := range after {
			if !yield(id) {
				return
			}
		}
	}), "thv/stages/formats.DecodeBenchmark")
	runs := 0
	for id, key := range after {
		switch {
		case users[id] && key == before[id]:
			t.Errorf("%s reaches the benchmark decoder, and kept its key", id)
		case strings.HasPrefix(id, "instance/") && key != before[id]:
			t.Errorf("%s cannot reach the benchmark decoder, and its key changed", id)
		}
		if strings.HasPrefix(id, "run/") {
			runs++
			if !users[id] {
				t.Errorf("%s: a run does not reach the benchmark decoder", id)
			}
		}
	}
	if r.Executed < runs || runs == 0 {
		t.Fatalf("after editing the benchmark decoder: %+v, want at least the %d runs executed", r, runs)
	}
	fresh := t.TempDir()
	thvRepro(t, changed, fresh)
	a, _ := os.ReadFile(filepath.Join(dir, tinyLock))
	b, _ := os.ReadFile(filepath.Join(fresh, tinyLock))
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Fatal("after the edit, the incremental store's lock differs from a fresh store's")
	}
}

// TestRebuiltParetoUCBDivRerunsItsUsers: a behavioural edit of the code
// only ParetoUCB-Div runs (its greedy farthest-point choice), rebuilt into
// a new thv, on a protocol of ParetoUCB-Div, ParetoUCB and ScalarUCB.
// ParetoUCB-Div's runs change key (protocol's TestEditOfParetoUCBDivCode),
// and beyond them only what depends on their outputs, which changed; no
// task of ParetoUCB (whose code ParetoUCB-Div's shares) or ScalarUCB, no
// instance or benchmark changes key.
func TestRebuiltParetoUCBDivRerunsItsUsers(t *testing.T) {
	dir := t.TempDir()
	tiny, err := os.ReadFile(tinyParams(t))
	if err != nil {
		t.Fatal(err)
	}
	y := string(tiny)
	i, j := strings.Index(y, "algorithms:\n"), strings.Index(y, "statistics:\n")
	y = y[:i] + "algorithms:\n  - {name: ParetoUCB-Div, eta: [0.1, 1.0]}\n  - {name: ParetoUCB}\n  - {name: ScalarUCB, eta: [0.1, 1.0]}\n" + y[j:]
	params := filepath.Join(dir, "div.yaml")
	if err := os.WriteFile(params, []byte(y), 0o644); err != nil {
		t.Fatal(err)
	}
	lock := filepath.Join(dir, "thv-div.lock")
	reproParams(t, buildThv(t, moduleRoot(t)), dir, params)
	before := lockKeys(t, lock)

	// Its first pick is the layer's last member, not the largest Σ U.
	changed := editedThv(t, "algos/paretodiv/paretodiv.go", "best = f.order.First(layer)", "best = len(layer) - 1")
	reproParams(t, changed, dir, params)
	after := lockKeys(t, lock)
	divDownstream := 0
	for id, key := range after {
		run := strings.HasPrefix(id, "run/")
		div := strings.HasSuffix(id, "/ParetoUCB-Div") || strings.Contains(id, "/ParetoUCB-Div/")
		switch {
		case run && div && key == before[id]:
			t.Errorf("%s: its code changed, its key did not", id)
		case run && div:
		case div && key != before[id]:
			divDownstream++
		case strings.Contains(id, "ScalarUCB") || strings.Contains(id, "/ParetoUCB") || strings.HasPrefix(id, "instance/") || strings.HasPrefix(id, "benchmark/"):
			if key != before[id] {
				t.Errorf("%s: its key changed", id)
			}
		}
	}
	if divDownstream == 0 {
		t.Error("no task downstream of ParetoUCB-Div's runs changed key: the edit changed none of their outputs, and the test shows nothing")
	}
}
