package pipeline

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"thv/artifacts"
)

// tiny opens a project on testdata/tiny.yaml with its own store and lock
// directory (dir, created if empty).
func tiny(t *testing.T, dir string, set ...string) *Project {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	p, err := OpenProject(ProjectOptions{
		LoadOptions: LoadOptions{ParamsFile: "testdata/tiny.yaml", Set: set},
		Dir:         dir,
		StoreDir:    filepath.Join(dir, "store"),
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func repro(t *testing.T, p *Project, jobs int) *Report {
	t.Helper()
	rep, err := p.Repro(Options{Jobs: jobs})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Failed > 0 || rep.Blocked > 0 {
		for _, r := range rep.Results {
			if r.Err != nil {
				t.Error(r.Err)
			}
		}
		t.Fatalf("%d failed, %d blocked", rep.Failed, rep.Blocked)
	}
	return rep
}

func executedIDs(rep *Report) []string {
	var ids []string
	for _, r := range rep.Results {
		if r.Status == Executed {
			ids = append(ids, r.Task.ID)
		}
	}
	return ids
}

func TestNoOpRerunExecutesNothing(t *testing.T) {
	dir := t.TempDir()
	first := repro(t, tiny(t, dir), 2)
	if first.Executed != len(first.Results) || first.Executed == 0 {
		t.Fatalf("cold run executed %d of %d", first.Executed, len(first.Results))
	}
	second := repro(t, tiny(t, dir), 2)
	if second.Executed != 0 || second.Cached != len(second.Results) {
		t.Fatalf("no-op rerun executed %v", executedIDs(second))
	}
	// Dropping the lock leaves the store's index: still nothing to run.
	os.Remove(filepath.Join(dir, "thv.lock"))
	third := repro(t, tiny(t, dir), 1)
	if third.Executed != 0 {
		t.Fatalf("rerun without lock executed %v", executedIDs(third))
	}
}

func TestChangingTRerunsOnlyThatSetting(t *testing.T) {
	dir := t.TempDir()
	repro(t, tiny(t, dir), 2)
	p := tiny(t, dir, "settings.d3.T=110")
	st, err := p.Status()
	if err != nil {
		t.Fatal(err)
	}
	sawReason := false
	for _, r := range st.Results {
		if r.Status == Stale && r.Task.Kind == "run" {
			if r.Reason != "params changed: T 120 → 110" {
				t.Fatalf("%s: reason %q", r.Task.ID, r.Reason)
			}
			sawReason = true
		}
	}
	if !sawReason {
		t.Fatal("status found no stale run")
	}
	rep := repro(t, p, 2)
	for _, id := range executedIDs(rep) {
		downstream := id == "summarize/d3" || id == "figures/d3" || id == "tables"
		if !downstream && (!strings.Contains(id, "/d3/") || strings.HasPrefix(id, "instance/") || strings.HasPrefix(id, "benchmark/")) {
			t.Errorf("changing settings.d3.T reran %s", id)
		}
	}
	// d3 runs (2 geometries × (2 algos × 2 η + RandomK) × 2 seeds = 20),
	// selects (4), collects (6), then d3's statistics and figure, and the
	// tables (which gather every setting).
	if rep.Executed != 33 {
		t.Fatalf("executed %d tasks, want 33: %v", rep.Executed, executedIDs(rep))
	}
}

// withSource runs f with the fingerprinted sources overlaid by edits
// (file → new content).
func withSource(t *testing.T, edits map[string]string, f func()) {
	t.Helper()
	overlay := fstest.MapFS{}
	err := fs.WalkDir(sourceFS, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(sourceFS, path)
		overlay[path] = &fstest.MapFile{Data: b}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range edits {
		if _, ok := overlay[name]; !ok {
			t.Fatalf("no source file %s", name)
		}
		overlay[name] = &fstest.MapFile{Data: []byte(content)}
	}
	old := sourceFS
	sourceFS = overlay
	resetUnitCache()
	defer func() { sourceFS = old; resetUnitCache() }()
	f()
}

func resetUnitCache() {
	unitMu.Lock()
	unitCache = map[string]string{}
	unitMu.Unlock()
}

func source(t *testing.T, name string) string {
	b, err := fs.ReadFile(sourceFS, name)
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
	repro(t, tiny(t, dir), 2)
	const file = "algos/randomk/randomk.go"
	src := source(t, file)
	withSource(t, map[string]string{file: src + "\n// A comment changes nothing.\n"}, func() {
		if rep := repro(t, tiny(t, dir), 2); rep.Executed != 0 {
			t.Fatalf("comment-only edit reran %v", executedIDs(rep))
		}
	})
	withSource(t, map[string]string{file: src + "\nfunc unusedHelper() int { return 42 }\n"}, func() {
		st, err := tiny(t, dir).Status()
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range st.Results {
			if r.Status == Stale && r.Reason != "code changed in algos/randomk" {
				t.Fatalf("%s: reason %q", r.Task.ID, r.Reason)
			}
		}
		rep := repro(t, tiny(t, dir), 2)
		for _, id := range executedIDs(rep) {
			if !strings.Contains(id, "/RandomK") {
				t.Errorf("editing randomk reran %s", id)
			}
		}
		// 2 settings × 2 geometries × 2 seeds runs. The edit does not
		// change behaviour, so the runs yield the same bytes and the
		// collect tasks are cut off early.
		if rep.Executed != 8 {
			t.Fatalf("executed %d, want the 8 RandomK runs: %v", rep.Executed, executedIDs(rep))
		}
	})
}

// TestEarlyCutoff: an edit of the instance stage's code reruns every
// instance task, which yields the same bytes, so nothing downstream reruns.
func TestEarlyCutoff(t *testing.T) {
	dir := t.TempDir()
	first := repro(t, tiny(t, dir), 2)
	const file = "stages/instance.go"
	withSource(t, map[string]string{file: source(t, file) + "\nvar unusedCounter = 0\n"}, func() {
		rep := repro(t, tiny(t, dir), 2)
		want := first.CountKind("instance")
		if rep.Executed != want {
			t.Fatalf("executed %v, want only the %d instance tasks", executedIDs(rep), want)
		}
		for _, id := range executedIDs(rep) {
			if !strings.HasPrefix(id, "instance/") {
				t.Fatalf("early cutoff failed: %s reran", id)
			}
		}
	})
}

// CountKind counts the results of one kind.
func (rep *Report) CountKind(kind string) int {
	n := 0
	for _, r := range rep.Results {
		if r.Task.Kind == kind {
			n++
		}
	}
	return n
}

func lockBytes(t *testing.T, dir string) []byte {
	b, err := os.ReadFile(filepath.Join(dir, "thv.lock"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestDeterministicAcrossWorkersAndStores: -j 1 and -j 2 in two separate
// stores give byte-identical lock files, hence identical digests and keys.
func TestDeterministicAcrossWorkersAndStores(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	repro(t, tiny(t, a), 1)
	repro(t, tiny(t, b), 2)
	la, lb := lockBytes(t, a), lockBytes(t, b)
	if string(la) != string(lb) {
		t.Fatal("lock files differ between -j 1 and -j 2")
	}
	if !strings.Contains(string(la), `"id":"collect/d3/linear/THV-UCB"`) {
		t.Fatal("lock does not list the collect tasks")
	}
}

// TestCorruptedObjectIsRecomputed flips a byte of an instance artifact: the
// run that needs it reports it, recomputes it, and the store heals.
func TestCorruptedObjectIsRecomputed(t *testing.T) {
	dir := t.TempDir()
	p := tiny(t, dir)
	repro(t, p, 2)
	rec, ok := p.Lock.Record("instance/d2/concave/seed=0")
	if !ok {
		t.Fatal("no lock record")
	}
	d, _ := artifacts.ParseDigest(rec.Outputs["instance"])
	path := p.Store.ObjectPath(d)
	b, _ := os.ReadFile(path)
	b[len(b)/2] ^= 0xff
	os.Chmod(path, 0o644)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	var warned []string
	oldWarn := warnf
	warnf = func(format string, args ...any) { warned = append(warned, format) }
	defer func() { warnf = oldWarn }()
	// A run downstream of the instance must execute to read it: change its T.
	rep := repro(t, tiny(t, dir, "settings.d2.T=110"), 2)
	if len(warned) == 0 {
		t.Fatal("corruption not reported")
	}
	if rep.Executed == 0 {
		t.Fatal("nothing ran")
	}
	if err := p.Store.Verify(d); err != nil {
		t.Fatalf("corrupted object not restored: %v", err)
	}
}

func TestBadParams(t *testing.T) {
	write := func(content string) string {
		f := filepath.Join(t.TempDir(), "p.yaml")
		os.WriteFile(f, []byte(content), 0o644)
		return f
	}
	base, _ := os.ReadFile("testdata/tiny.yaml")
	for _, c := range []struct {
		name, old, new, want string
	}{
		{"unknown algorithm", "name: RandomK}", "name: RandomQ}", `algorithms[2 (RandomQ)]: unknown algorithm "RandomQ"`},
		{"k > n", "k: 2, T: 120", "k: 20, T: 120", "settings.d2.k = 20: slate size must be between 1 and n = 12"},
		{"empty seeds", "seeds: [0, 1]\ngrid", "seeds: []\ngrid", "seeds: empty list"},
		{"negative sigma", "sigma: 0.05", "sigma: -0.05", "settings.d2.sigma = -0.05"},
		{"eta for an algorithm without eta", "name: RandomK}", "name: RandomK, eta: [0.1]}", "RandomK has no η parameter"},
		{"missing eta grid", "name: ScalarUCB, eta: [0.1, 1.0]}", "name: ScalarUCB}", "ScalarUCB has η: give its grid"},
		{"duplicate algorithm", "name: RandomK}", "name: ScalarUCB, eta: [0.1]}", "ScalarUCB is listed twice"},
		{"typo in a key", "min_pulls: 2", "min_pull: 2", "min_pull"},
		{"typo in an algorithm parameter", "clip: 1", "clipp: 1", `THV-UCB has no parameter "clipp"`},
		{"non-positive eta", "eta: [0.1, 1.0], params", "eta: [0, 1.0], params", "η must be > 0"},
		{"unknown geometry", "[concave, linear]", "[concave, spiral]", `geometries[1]: unknown geometry "spiral"`},
		{"T shorter than init", "T: 120, sigma: 0.05", "T: 5, sigma: 0.05", "shorter than the forced initialisation"},
		{"not YAML", "settings:", "settings: [", "not valid YAML"},
	} {
		content := strings.Replace(string(base), c.old, c.new, 1)
		if content == string(base) {
			t.Fatalf("%s: edit %q not applied", c.name, c.old)
		}
		_, err := LoadConfig(LoadOptions{ParamsFile: write(content)})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.name, err, c.want)
		}
	}
	if _, err := LoadConfig(LoadOptions{ParamsFile: "testdata/tiny.yaml", Profile: "nope"}); err == nil || !strings.Contains(err.Error(), `unknown profile "nope"`) {
		t.Errorf("unknown profile: %v", err)
	}
	if _, err := LoadConfig(LoadOptions{ParamsFile: "testdata/tiny.yaml", Set: []string{"settings.d9.T=3"}}); err == nil || !strings.Contains(err.Error(), "not a key") {
		t.Errorf("--set of an unknown key: %v", err)
	}
}

func TestProfilesAndOverrides(t *testing.T) {
	c, err := LoadConfig(LoadOptions{ParamsFile: "testdata/tiny.yaml", Profile: "short", Set: []string{"settings.d2.T=150"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Seeds) != 1 || c.Settings["d2"].T != 150 || c.Settings["d3"].T != 120 {
		t.Fatalf("profile/override not applied: seeds %v d2.T %d d3.T %d", c.Seeds, c.Settings["d2"].T, c.Settings["d3"].T)
	}
	t.Setenv("THV_SETTINGS_D3_T", "130")
	c, err = LoadConfig(LoadOptions{ParamsFile: "testdata/tiny.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Settings["d3"].T != 130 {
		t.Fatalf("THV_SETTINGS_D3_T not applied: %d", c.Settings["d3"].T)
	}
	// The embedded protocol is the paper's.
	paper, err := LoadConfig(LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := paper.SettingFor(5); s.N != 150 || s.K != 6 || s.T != 5000 || s.Sigma != 0.02 || len(paper.Seeds) != 10 || len(paper.Algorithms) != 14 {
		t.Fatalf("embedded protocol is not the paper's: %+v, %d seeds, %d algorithms", s, len(paper.Seeds), len(paper.Algorithms))
	}
}

// TestFigureOptionRerunsOnlyFigures: the moving-average window is a
// parameter of the figure tasks alone.
func TestFigureOptionRerunsOnlyFigures(t *testing.T) {
	dir := t.TempDir()
	repro(t, tiny(t, dir), 2)
	rep := repro(t, tiny(t, dir, "figures.moving_average=20"), 2)
	ids := executedIDs(rep)
	if len(ids) != 2 || ids[0] != "figures/d2" || ids[1] != "figures/d3" {
		t.Fatalf("changing figures.moving_average reran %v, want only the two figure tasks", ids)
	}
}

// TestGCKeepsCurrentArtifacts: after a parameter change, gc removes the
// superseded artifacts and nothing the current protocol needs.
func TestGCKeepsCurrentArtifacts(t *testing.T) {
	dir := t.TempDir()
	repro(t, tiny(t, dir), 2)
	p := tiny(t, dir, "settings.d3.T=110")
	repro(t, p, 2)
	dry, err := p.GC(true)
	if err != nil {
		t.Fatal(err)
	}
	st, err := p.GC(false)
	if err != nil {
		t.Fatal(err)
	}
	// The old d3 runs' summaries and trajectories, collects, statistics…
	if st.Objects == 0 || st.Entries == 0 || st.Objects != dry.Objects || st.Entries != dry.Entries {
		t.Fatalf("gc removed %+v (dry run said %+v)", st, dry)
	}
	if rep := repro(t, tiny(t, dir, "settings.d3.T=110"), 2); rep.Executed != 0 {
		t.Fatalf("gc removed current artifacts: %v reran", executedIDs(rep))
	}
	again, _ := p.GC(false)
	if again.Objects != 0 || again.Entries != 0 {
		t.Fatalf("second gc removed %+v", again)
	}
}
