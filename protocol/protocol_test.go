package protocol

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"thv"
	"thv/pipeline"
	"thv/protocol/config"
)

// tiny opens a project on testdata/tiny.yaml with its own store and lock
// directory (dir, created if empty).
func tiny(t *testing.T, dir string, kinds *pipeline.Kinds, set ...string) *Project {
	t.Helper()
	p, err := Open(Options{
		LoadOptions: config.LoadOptions{ParamsFile: "testdata/tiny.yaml", Set: set},
		Dir:         dir,
		StoreDir:    filepath.Join(dir, "store"),
		Kinds:       kinds,
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func repro(t *testing.T, p *Project, opt pipeline.Options) *pipeline.Report {
	t.Helper()
	if opt.Jobs == 0 {
		opt.Jobs = 2
	}
	rep, err := p.Repro(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Failed > 0 || rep.Blocked > 0 {
		for _, r := range rep.Results {
			if r.Err != nil {
				t.Errorf("%s: %v", r.Task.ID, r.Err)
			}
		}
		t.Fatalf("%d failed, %d blocked", rep.Failed, rep.Blocked)
	}
	return rep
}

func executedIDs(rep *pipeline.Report) []string {
	var ids []string
	for _, r := range rep.Results {
		if r.Status == pipeline.Executed {
			ids = append(ids, r.Task.ID)
		}
	}
	return ids
}

func countKind(rep *pipeline.Report, kind string) int {
	n := 0
	for _, r := range rep.Results {
		if r.Task.Kind == kind {
			n++
		}
	}
	return n
}

func lockBytes(t *testing.T, dir string) []byte {
	b, err := os.ReadFile(filepath.Join(dir, tinyLock))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestNoOpRerunExecutesNothing(t *testing.T) {
	dir := t.TempDir()
	first := repro(t, tiny(t, dir, nil), pipeline.Options{})
	if first.Executed != len(first.Results) || first.Executed == 0 {
		t.Fatalf("cold run executed %d of %d", first.Executed, len(first.Results))
	}
	second := repro(t, tiny(t, dir, nil), pipeline.Options{})
	if second.Executed != 0 || second.Cached != len(second.Results) {
		t.Fatalf("no-op rerun executed %v", executedIDs(second))
	}
}

// TestLockIdenticalAcrossExecutorsAndWorkers: -j 1 local and -j 2 process
// (workers are this test binary acting as thv exec-task) give
// byte-identical locks from empty stores.
func TestLockIdenticalAcrossExecutorsAndWorkers(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	repro(t, tiny(t, a, nil), pipeline.Options{Jobs: 1})
	pb := tiny(t, b, nil)
	px := &pipeline.Process{Command: []string{os.Args[0]}, Env: append(os.Environ(), workerEnv+"="+pb.Store.Root())}
	defer px.Close()
	repro(t, pb, pipeline.Options{Jobs: 2, Executor: px})
	la, lb := lockBytes(t, a), lockBytes(t, b)
	if string(la) != string(lb) {
		t.Fatal("lock files differ between local -j 1 and process -j 2")
	}
	if !strings.Contains(string(la), `"id":"collect/d3/linear/THV-UCB"`) {
		t.Fatal("lock does not list the collect tasks")
	}
}

func TestChangingTRerunsOnlyThatSetting(t *testing.T) {
	dir := t.TempDir()
	repro(t, tiny(t, dir, nil), pipeline.Options{})
	p := tiny(t, dir, nil, "settings.d3.T=110")
	st, err := p.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	sawReason := false
	for _, r := range st.Results {
		if r.Status == pipeline.Stale && r.Task.Kind == "run" {
			if r.Reason != "params changed: T 120 → 110" {
				t.Fatalf("%s: reason %q", r.Task.ID, r.Reason)
			}
			sawReason = true
		}
	}
	if !sawReason {
		t.Fatal("status found no stale run")
	}
	rep := repro(t, p, pipeline.Options{})
	want := 0
	for _, r := range rep.Results {
		id := r.Task.ID
		switch {
		case strings.Contains(id, "/d3/") && (r.Task.Kind == "run" || r.Task.Kind == "select" || r.Task.Kind == "collect"),
			id == "summarize/d3", id == "figures/d3", id == "tables", id == "compare":
			want++
		}
	}
	for _, id := range executedIDs(rep) {
		downstream := id == "summarize/d3" || id == "figures/d3" || id == "tables" || id == "compare"
		if !downstream && (!strings.Contains(id, "/d3/") || strings.HasPrefix(id, "instance/") || strings.HasPrefix(id, "benchmark/")) {
			t.Errorf("changing settings.d3.T reran %s", id)
		}
	}
	if rep.Executed != want {
		t.Fatalf("executed %d tasks, want the %d d3 runs, selects, collects and their statistics, figure, tables and comparison: %v", rep.Executed, want, executedIDs(rep))
	}
}

// overlay copies the embedded sources with edits (file → new content).
func overlay(t *testing.T, edits map[string]string) fstest.MapFS {
	t.Helper()
	m := fstest.MapFS{}
	err := fs.WalkDir(thv.Sources, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(thv.Sources, path)
		m[path] = &fstest.MapFile{Data: b}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range edits {
		if _, ok := m[name]; !ok {
			t.Fatalf("no source file %s", name)
		}
		m[name] = &fstest.MapFile{Data: []byte(content)}
	}
	return m
}

func kindsFrom(t *testing.T, edits map[string]string) *pipeline.Kinds {
	t.Helper()
	k, err := KindsFrom(overlay(t, edits))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func source(t *testing.T, name string) string {
	b, err := fs.ReadFile(thv.Sources, name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestFigureOptionRerunsOnlyFigures: a figures option reruns the figure
// tasks, and the compare task, whose report names the protocol (every
// value that differs from the paper's), and nothing else.
func TestFigureOptionRerunsOnlyFigures(t *testing.T) {
	dir := t.TempDir()
	repro(t, tiny(t, dir, nil), pipeline.Options{})
	rep := repro(t, tiny(t, dir, nil, "figures.moving_average=20"), pipeline.Options{})
	ids := executedIDs(rep)
	if len(ids) != 3 || ids[0] != "figures/d2" || ids[1] != "figures/d3" || ids[2] != "compare" {
		t.Fatalf("changing figures.moving_average reran %v, want only the two figure tasks and compare", ids)
	}
}

// TestGCKeepsCurrentArtifacts: after a parameter change, gc removes the
// superseded artifacts and nothing the current protocol needs.
func TestGCKeepsCurrentArtifacts(t *testing.T) {
	dir := t.TempDir()
	repro(t, tiny(t, dir, nil), pipeline.Options{})
	p := tiny(t, dir, nil, "settings.d3.T=110")
	repro(t, p, pipeline.Options{})
	dry, err := p.GC(context.Background(), true)
	if err != nil {
		t.Fatal(err)
	}
	st, err := p.GC(context.Background(), false)
	if err != nil {
		t.Fatal(err)
	}
	if st.ObjectsRemoved == 0 || st.EntriesRemoved == 0 || st.ObjectsRemoved != dry.ObjectsRemoved || st.EntriesRemoved != dry.EntriesRemoved {
		t.Fatalf("gc removed %+v (dry run said %+v)", st, dry)
	}
	if rep := repro(t, tiny(t, dir, nil, "settings.d3.T=110"), pipeline.Options{}); rep.Executed != 0 {
		t.Fatalf("gc removed current artifacts: %v reran", executedIDs(rep))
	}
	again, _ := p.GC(context.Background(), false)
	if again.ObjectsRemoved != 0 || again.EntriesRemoved != 0 {
		t.Fatalf("second gc removed %+v", again)
	}
}

// TestRegistryDerived: every kind's entry is derived from its Run function,
// and the plan's kinds are exactly the registered ones.
func TestRegistryDerived(t *testing.T) {
	k, err := Kinds()
	if err != nil {
		t.Fatal(err)
	}
	p := tiny(t, t.TempDir(), nil)
	if err := p.EnsurePlan(); err != nil {
		t.Fatal(err)
	}
	if got := slices.Sorted(slices.Values(p.Plan.KindOrder())); !slices.Equal(got, k.Names()) {
		t.Fatalf("plan kinds %v, registered %v", got, k.Names())
	}
	for _, name := range k.Names() {
		kind, _ := k.Lookup(name)
		if !strings.HasPrefix(kind.Entry, "thv/stages/") || !strings.HasSuffix(kind.Entry, ".Run") {
			t.Errorf("kind %s: entry %q", name, kind.Entry)
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	})
}

// tinyLock is the lock file a project on testdata/tiny.yaml writes.
const tinyLock = "thv-tiny.lock"

// TestLockBelongsToItsProtocol: a params file of one's own writes its own
// lock, never the paper's thv.lock beside it.
func TestLockBelongsToItsProtocol(t *testing.T) {
	for _, c := range []struct{ params, profile, want string }{
		{"", "", "thv.lock"}, {"", "paper", "thv.lock"}, {"", "quick", "thv.quick.lock"},
		{"testdata/tiny.yaml", "", "thv-tiny.lock"}, {"my.yml", "quick", "thv-my.quick.lock"}, {"/x/thv.yaml", "", "thv-thv.lock"},
	} {
		if got := filepath.Base(LockPath("/d", c.params, c.profile)); got != c.want {
			t.Errorf("LockPath(%q, %q) = %s, want %s", c.params, c.profile, got, c.want)
		}
	}
	dir := t.TempDir()
	paper := filepath.Join(dir, "thv.lock")
	os.WriteFile(paper, []byte("the paper's committed lock\n"), 0o644)
	repro(t, tiny(t, dir, nil), pipeline.Options{})
	if b, _ := os.ReadFile(paper); string(b) != "the paper's committed lock\n" {
		t.Fatal("thv repro --params tiny.yaml wrote over thv.lock")
	}
}

// TestTamperedLockCannotEscape: an output
// name "../../victim.txt" in a committed lock must not make thv write
// outside results/. The lock is refused with a clear error and nothing
// outside changes.
func TestTamperedLockCannotEscape(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "project")
	os.MkdirAll(dir, 0o755)
	repro(t, tiny(t, dir, nil), pipeline.Options{})
	victim := filepath.Join(root, "victim.txt")
	os.WriteFile(victim, []byte("precious\n"), 0o444)
	lock := filepath.Join(dir, tinyLock)
	b, _ := os.ReadFile(lock)
	tampered := strings.Replace(string(b), `"outputs":{"all.tex"`, `"outputs":{"../../victim.txt"`, 1)
	if tampered == string(b) {
		t.Fatal("tables record not found in the lock")
	}
	os.WriteFile(lock, []byte(tampered), 0o644)
	_, err := Open(Options{LoadOptions: config.LoadOptions{ParamsFile: "testdata/tiny.yaml"}, Dir: dir, StoreDir: filepath.Join(dir, "store")})
	if err == nil || !strings.Contains(err.Error(), "not a valid lock file") || !strings.Contains(err.Error(), "single path component") {
		t.Fatalf("tampered lock: %v", err)
	}
	if got, _ := os.ReadFile(victim); string(got) != "precious\n" {
		t.Fatal("the victim file changed")
	}
}
