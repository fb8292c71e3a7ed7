package export

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"thv"
	"thv/pipeline"
	"thv/pipeline/codeid"
	"thv/protocol"
	"thv/protocol/config"
	"time"
)

// failingTables is the paper's kinds with a tables stage that fails.
func failingTables(t *testing.T) *pipeline.Kinds {
	t.Helper()
	code, err := codeid.ForBinary(thv.Sources, thv.ThirdParty, thv.ThirdPartyNames)
	if err != nil {
		t.Fatal(err)
	}
	var list []pipeline.Kind
	all, err := protocol.Kinds()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range all.Names() {
		k, err := all.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		k.Entry = ""
		if k.Name == "tables" {
			k = pipeline.Kind{Name: "tables", Entry: pipeline.EntryOf(k.Run), Reads: k.Reads, Outputs: k.Outputs, Run: func(context.Context, []byte, map[string][]byte) (map[string][]byte, error) {
				return nil, errors.New("tables failed on purpose")
			}}
		}
		list = append(list, k)
	}
	k, err := pipeline.NewKinds(code, list...)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestFailedPassKeepsResultsAndLock: a pass in which a task fails exports
// nothing (results/ stays that of the last complete pass, its README true),
// keeps the lock's records of what did not complete, and does not seal it.
func TestFailedPassKeepsResultsAndLock(t *testing.T) {
	dir := t.TempDir()
	repro(t, tiny(t, dir, nil), pipeline.Options{})
	before := readTree(t, filepath.Join(dir, "results"))
	if len(before) < 3 {
		t.Fatalf("results/ holds %d files", len(before))
	}
	oldLock, _ := pipeline.ReadLock(filepath.Join(dir, tinyLock))
	p := tiny(t, dir, failingTables(t), "statistics.confidence=0.9")
	rep, err := p.Repro(context.Background(), pipeline.Options{Jobs: 2})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Failed != 1 {
		t.Fatalf("%d failed, want the tables task", rep.Failed)
	}
	after := readTree(t, filepath.Join(dir, "results"))
	if !maps.Equal(before, after) {
		t.Fatal("a failed pass changed results/")
	}
	newLock, _ := pipeline.ReadLock(filepath.Join(dir, tinyLock))
	oldRec, _ := oldLock.Record("tables")
	newRec, ok := newLock.Record("tables")
	if !ok || newRec.Key != oldRec.Key {
		t.Fatal("the failed task's previous record was dropped from the lock")
	}
}

func readTree(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(path)
			out[path] = string(b)
		}
		return nil
	})
	return out
}

// TestAbandonedTempFilesRemoved: temporary files of an interrupted lock
// write or export are removed by the next repro; others are left alone.
func TestAbandonedTempFilesRemoved(t *testing.T) {
	dir := t.TempDir()
	repro(t, tiny(t, dir, nil), pipeline.Options{})
	old := time.Now().Add(-time.Hour)
	files := map[string]bool{ // path → should survive
		filepath.Join(dir, "."+tinyLock+".tmp123"):                 false,
		filepath.Join(dir, "results", "tables", ".all.tex.tmp456"): false,
		filepath.Join(dir, "results", "figures", ".d2.png.tmp789"): false,
		filepath.Join(dir, "results", "tables", "notes.txt"):       true,
		filepath.Join(dir, ".thv.lock.tmp1"):                       true, // another protocol's
		filepath.Join(dir, "results", "tables", ".fresh.tex.tmp1"): true, // young: maybe a running export's
	}
	for f := range files {
		os.WriteFile(f, []byte("x"), 0o644)
		if !strings.Contains(f, "fresh") {
			os.Chtimes(f, old, old)
		}
	}
	repro(t, tiny(t, dir, nil), pipeline.Options{})
	for f, survive := range files {
		if _, err := os.Stat(f); (err == nil) != survive {
			t.Errorf("%s: exists = %v, want %v", f, err == nil, survive)
		}
	}
}

// TestSwappedDigestLeavesTablesRight, on
// the real pipeline: a lock whose run summary digest is swapped for another
// existing run's must not change the published tables: the two disputed
// runs are re-executed (neither the lock nor the store wins by rule), the
// computation sides with the store, and the lock is corrected from it.
func TestSwappedDigestLeavesTablesRight(t *testing.T) {
	dir := t.TempDir()
	repro(t, tiny(t, dir, nil), pipeline.Options{})
	good := lockBytes(t, dir)
	tables := readTree(t, filepath.Join(dir, "results"))
	l, err := pipeline.ReadLock(filepath.Join(dir, tinyLock))
	if err != nil {
		t.Fatal(err)
	}
	a, ok1 := l.Record("run/d2/concave/THV-UCB/eta=0.1/seed=0")
	b, ok2 := l.Record("run/d2/concave/THV-UCB/eta=0.1/seed=1")
	if !ok1 || !ok2 {
		t.Fatal("run records not found")
	}
	summary := func(o pipeline.NamedDigest) bool { return o.Name == "summary" }
	i, j := slices.IndexFunc(a.Outputs, summary), slices.IndexFunc(b.Outputs, summary)
	a.Outputs[i].Digest, b.Outputs[j].Digest = b.Outputs[j].Digest, a.Outputs[i].Digest
	if err := l.Write(filepath.Join(dir, tinyLock)); err != nil {
		t.Fatal(err)
	}
	rep := repro(t, tiny(t, dir, nil), pipeline.Options{})
	if got := executedIDs(rep); !slices.Equal(got, []string{"run/d2/concave/THV-UCB/eta=0.1/seed=0", "run/d2/concave/THV-UCB/eta=0.1/seed=1"}) || len(rep.Disputes) != 2 {
		t.Errorf("a swapped digest made %v rerun (%d disputes), want the two disputed runs", got, len(rep.Disputes))
	}
	if !maps.Equal(tables, readTree(t, filepath.Join(dir, "results"))) {
		t.Fatal("a swapped digest in the lock changed the published results")
	}
	if string(lockBytes(t, dir)) != string(good) {
		t.Fatal("the lock was not corrected")
	}
	st, err := tiny(t, dir, nil).Status(context.Background())
	if err != nil || st.Stale != 0 {
		t.Fatalf("status after the repair: %d stale, %v", st.Stale, err)
	}
}

// tinyLock is the lock file a project on testdata/tiny.yaml writes.
const tinyLock = "thv-tiny.lock"

// tiny opens a project on testdata/tiny.yaml with its own store and lock
// directory (dir, created if empty).
func tiny(t *testing.T, dir string, kinds *pipeline.Kinds, set ...string) *Project {
	t.Helper()
	p, err := Open(protocol.Options{
		LoadOptions: config.LoadOptions{ParamsFile: "../testdata/tiny.yaml", Set: set},
		Dir:         dir, StoreDir: filepath.Join(dir, "store"), Kinds: kinds,
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// repro is a complete pass and its export, or the test's end.
func repro(t *testing.T, p *Project, opt pipeline.Options) *pipeline.Report {
	t.Helper()
	opt.Jobs = max(opt.Jobs, 2)
	rep, err := p.Repro(context.Background(), opt)
	if err == nil && (rep.Failed > 0 || rep.Blocked > 0) {
		err = fmt.Errorf("%d failed, %d blocked", rep.Failed, rep.Blocked)
	}
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func lockBytes(t *testing.T, dir string) []byte {
	b, err := os.ReadFile(filepath.Join(dir, tinyLock))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func executedIDs(rep *pipeline.Report) (ids []string) {
	for _, r := range rep.Results {
		if r.Status == pipeline.Executed {
			ids = append(ids, r.Task.ID)
		}
	}
	return ids
}
