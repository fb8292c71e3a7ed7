package protocol

import (
	"context"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"thv"
	"thv/pipeline"
	"thv/pipeline/codeid"
)

// tiny opens a project on testdata/tiny.yaml with its own store and lock
// directory (dir, created if empty).
func tiny(t *testing.T, dir string, kinds *pipeline.Kinds, set ...string) *Project {
	t.Helper()
	p, err := Open(Options{
		LoadOptions: LoadOptions{ParamsFile: "testdata/tiny.yaml", Set: set},
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

// TestCodeChangeRerunsOnlyThatFamily edits the randomk family's source: only
// RandomK runs rerun (their collect tasks would too if the runs' bytes
// changed). A comment-only edit reruns nothing.
func TestCodeChangeRerunsOnlyThatFamily(t *testing.T) {
	dir := t.TempDir()
	repro(t, tiny(t, dir, nil), pipeline.Options{})
	const file = "algos/randomk/randomk.go"
	src := source(t, file)
	if rep := repro(t, tiny(t, dir, kindsFrom(t, map[string]string{file: src + "\n// A comment changes nothing.\n"})), pipeline.Options{}); rep.Executed != 0 {
		t.Fatalf("comment-only edit reran %v", executedIDs(rep))
	}
	edited := kindsFrom(t, map[string]string{file: src + "\nfunc unusedHelper() int { return 42 }\n"})
	st, err := tiny(t, dir, edited).Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range st.Results {
		if r.Status == pipeline.Stale && r.Reason != "code changed in thv/algos/randomk" {
			t.Fatalf("%s: reason %q", r.Task.ID, r.Reason)
		}
	}
	rep := repro(t, tiny(t, dir, edited), pipeline.Options{})
	for _, id := range executedIDs(rep) {
		if !strings.Contains(id, "/RandomK") {
			t.Errorf("editing randomk reran %s", id)
		}
	}
	// The edit does not change behaviour, so the runs yield the same bytes
	// and the collect tasks are cut off early: exactly the RandomK runs.
	want := 0
	for _, task := range st.Results {
		if task.Task.Kind == "run" && strings.Contains(task.Task.ID, "/RandomK/") {
			want++
		}
	}
	if want == 0 || rep.Executed != want {
		t.Fatalf("executed %d, want the %d RandomK runs: %v", rep.Executed, want, executedIDs(rep))
	}
}

// TestEditedHelperRerunsItsUsers is the scenario of the engine redesign: a
// helper that several kinds run (the benchmark decoder, which run tasks
// call) is edited; every task that runs it must rerun, none may be cut off
// by early cutoff upstream, and the incremental store must end with the
// lock a fresh store gives.
func TestEditedHelperRerunsItsUsers(t *testing.T) {
	dir := t.TempDir()
	repro(t, tiny(t, dir, nil), pipeline.Options{})
	const file = "stages/formats/benchmark.go"
	edited := kindsFrom(t, map[string]string{file: source(t, file) + "\nfunc unusedDecoderHelper() int { return 7 }\n"})
	st, err := tiny(t, dir, edited).Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range st.Results {
		if r.Task.Kind == "run" && !(r.Status == pipeline.Waiting || r.Status == pipeline.Stale && strings.Contains(r.Reason, "code changed in thv/stages/formats")) {
			t.Errorf("%s: %v %q", r.Task.ID, r.Status, r.Reason)
		}
	}
	rep := repro(t, tiny(t, dir, edited), pipeline.Options{})
	if rep.Executed != len(rep.Results) {
		t.Errorf("editing %s (reached by every kind) executed %d of %d tasks", file, rep.Executed, len(rep.Results))
	}
	fresh := t.TempDir()
	repro(t, tiny(t, fresh, edited), pipeline.Options{})
	if string(lockBytes(t, dir)) != string(lockBytes(t, fresh)) {
		t.Fatal("after the edit, the incremental store's lock differs from a fresh store's")
	}
}

// TestEveryEditChangesExactlyItsUsers: for EVERY fingerprinted package, a
// token edit changes the code identity of exactly the tasks whose kind (and
// algorithm family) reaches it according to the go command's own import
// graph (go list -deps), which is independent of codeid's parsing.
func TestEveryEditChangesExactlyItsUsers(t *testing.T) {
	users := goListUsers(t) // package → "kind family" labels whose closure holds it
	base, err := Kinds()
	if err != nil {
		t.Fatal(err)
	}
	tp := tiny(t, t.TempDir(), nil)
	if err := tp.EnsurePlan(); err != nil {
		t.Fatal(err)
	}
	plan := tp.Plan
	labels := map[string]*pipeline.Task{}
	for _, task := range plan.Tasks {
		labels[task.Kind+" "+runFamily(task)] = task
	}
	files := map[string]string{} // package → one of its files
	fs.WalkDir(thv.Sources, ".", func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
			if pkg := "thv/" + filepath.Dir(path); files[pkg] == "" {
				files[pkg] = path
			}
		}
		return nil
	})
	checked := 0
	for _, pkg := range sortedKeys(files) {
		file := files[pkg]
		edited := kindsFrom(t, map[string]string{file: source(t, file) + "\nvar _ = 1\n"})
		for _, label := range sortedKeys(labels) {
			task := labels[label]
			before, err1 := base.Identity(task.Kind, task.Roots)
			after, err2 := edited.Identity(task.Kind, task.Roots)
			if err1 != nil || err2 != nil {
				t.Fatal(err1, err2)
			}
			changed := before.Digest != after.Digest
			if changed != slices.Contains(users[pkg], label) {
				t.Errorf("edit of %s: identity of %q tasks changed = %v, go list says reached = %v", file, label, changed, !changed)
			}
			checked++
		}
	}
	if checked < 100 {
		t.Fatalf("only %d (package, kind) pairs checked", checked)
	}
}

// runFamily is the family package of a run task ("" for other kinds).
func runFamily(t *pipeline.Task) string {
	if len(t.Roots) == 0 {
		return ""
	}
	return strings.Join(t.Roots, ",")
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

// TestRegistryDerived: every kind's package is derived from its Run
// function, and the plan's kinds are exactly the registered ones.
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
		if !strings.HasPrefix(kind.Package, "thv/stages/") {
			t.Errorf("kind %s: package %q", name, kind.Package)
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

// TestTamperedLockCannotEscape is issue #12's first reproduction: an output
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
	_, err := Open(Options{LoadOptions: LoadOptions{ParamsFile: "testdata/tiny.yaml"}, Dir: dir, StoreDir: filepath.Join(dir, "store")})
	if err == nil || !strings.Contains(err.Error(), "not a valid lock file") || !strings.Contains(err.Error(), "single path component") {
		t.Fatalf("tampered lock: %v", err)
	}
	if got, _ := os.ReadFile(victim); string(got) != "precious\n" {
		t.Fatal("the victim file changed")
	}
}

// failingTables is the paper's kinds with a tables stage that fails.
func failingTables(t *testing.T) *pipeline.Kinds {
	t.Helper()
	code, err := codeid.ForBinary(thv.Sources, thv.ThirdParty)
	if err != nil {
		t.Fatal(err)
	}
	var list []pipeline.Kind
	for _, k := range kindList {
		if k.Name == "tables" {
			k = pipeline.Kind{Name: "tables", Package: pipeline.PackageOf(k.Run), Run: func(context.Context, []byte, map[string][]byte) (map[string][]byte, error) {
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

// TestSwappedDigestLeavesTablesRight is issue #12's second reproduction on
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
