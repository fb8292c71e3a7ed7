package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"thv/algos"
	"thv/artifacts"
	"thv/artifacts/damage"
	"thv/internal/testenv"
	"thv/pipeline"
	"thv/protocol"
	"thv/protocol/config"
)

// execute runs a thv subcommand in-process and returns stdout and the error.
func execute(t *testing.T, cmd *cobra.Command, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(args)
	err := cmd.Execute()
	return out.String(), err
}

func TestRunJSON(t *testing.T) {
	out, err := execute(t, newRunCommand(), "--d", "2", "--geometry", "concave", "--algo", "THV-UCB", "--eta", "0.1", "--seed", "0", "--T", "400", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var r map[string]any
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	for _, f := range []string{"algo", "eta", "d", "n", "k", "T", "sigma", "geometry", "seed", "hv_window", "hv_last", "v_star", "hv_greedy", "regret_alpha", "regret_alpha_pos", "regret_exact"} {
		if _, ok := r[f]; !ok {
			t.Errorf("field %s missing", f)
		}
	}
	num := func(f string) float64 { return r[f].(float64) }
	if num("n") != 36 || num("k") != 3 || num("T") != 400 || num("sigma") != 0.05 {
		t.Errorf("setting not taken from params.yaml: %v", r)
	}
	vs, hg, last := num("v_star"), num("hv_greedy"), num("hv_last")
	if !(hg <= vs+1e-12 && hg >= (1-1/math.E)*vs && last <= vs+1e-12 && last > 0) {
		t.Errorf("inconsistent benchmarks: V*=%v HV(G*)=%v HV_last=%v", vs, hg, last)
	}
	if num("regret_alpha_pos") < num("regret_alpha") || num("regret_exact") < num("regret_alpha") {
		t.Errorf("regrets out of order: %v", r)
	}
	if _, ok := r["trajectory"]; ok {
		t.Error("a trajectory without --trajectory")
	}
	out, err = execute(t, newRunCommand(), "--d", "2", "--geometry", "concave", "--algo", "THV-UCB", "--eta", "0.1", "--seed", "0", "--T", "400", "--json", "--trajectory")
	if err != nil {
		t.Fatal(err)
	}
	var withTraj struct {
		HVLast     float64   `json:"hv_last"`
		Trajectory []float64 `json:"trajectory"`
	}
	if err := json.Unmarshal([]byte(out), &withTraj); err != nil || len(withTraj.Trajectory) != 400 {
		t.Fatalf("--trajectory: %d rounds (%v)", len(withTraj.Trajectory), err)
	}
	var sum float64
	for _, h := range withTraj.Trajectory[300:] {
		sum += h
	}
	if withTraj.HVLast != last || math.Abs(sum/100-last) > 1e-12 {
		t.Errorf("the trajectory's last 100 rounds average %v, HV_last100 %v", sum/100, last)
	}
}

func TestRunErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--d", "2", "--geometry", "concave", "--algo", "THV-UCX", "--eta", "0.1"}, `unknown algorithm "THV-UCX"`},
		{[]string{"--d", "2", "--geometry", "spiral", "--algo", "RandomK"}, `unknown geometry "spiral"`},
		{[]string{"--d", "2", "--geometry", "concave", "--algo", "RandomK", "--k", "40"}, "--k 40"},
		{[]string{"--d", "1", "--geometry", "concave", "--algo", "RandomK"}, "at least 2 objectives"},
		{[]string{"--d", "2", "--geometry", "concave", "--algo", "RandomK", "--T", "10"}, "shorter than the forced initialisation"},
		{[]string{"--d", "2", "--geometry", "concave", "--algo", "THV-UCB", "--eta", "0"}, "η must be finite and > 0"},
		{[]string{"--d", "2", "--geometry", "concave", "--algo", "THV-UCB", "--eta", "-1"}, "η must be finite and > 0"},
		{[]string{"--d", "2", "--geometry", "concave", "--algo", "THV-UCB"}, "give --eta"},
		{[]string{"--geometry", "concave", "--algo", "RandomK"}, "--d is required"},
	} {
		if _, err := execute(t, newRunCommand(), c.args...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("thv run %v: err = %v, want %q", c.args, err, c.want)
		}
	}
}

// TestRunFlagErrors: a flag given with a value out of range is an error
// naming the flag and the value, never a silent fall-back to the setting's
// value (flags not given still take it: TestRunJSON).
func TestRunFlagErrors(t *testing.T) {
	base := []string{"--d", "2", "--geometry", "concave", "--algo", "THV-UCB", "--eta", "0.1", "--json"}
	csv := filepath.Join(t.TempDir(), "arms.csv")
	os.WriteFile(csv, []byte("0.9,0.1\n0.1,0.9\n0.6,0.6\n"), 0o644)
	for _, c := range []struct {
		args []string
		want string // the whole error
	}{
		{[]string{"--k", "0"}, "--k 0: slate size must be between 1 and 8"},
		{[]string{"--k", "-2"}, "--k -2: slate size must be between 1 and 8"},
		{[]string{"--set", "settings.d2.n=5", "--k", "6"}, "--k 6: slate size must be between 1 and n = 5"},
		{[]string{"--n", "0"}, "--n 0: number of arms must be between 1 and 200"},
		{[]string{"--n", "2147483648"}, "--n 2147483648: above the limit of 200 on the number of arms n (the exact benchmark V* searches the front's subsets; docs/reliability.md, \"Protocol limits\"): give at most 200"},
		{[]string{"--n", "3", "--k", "4"}, "--k 4: slate size must be between 1 and n = 3 (--n)"},
		{[]string{"--n", "2"}, "k = 3 (the setting's): slate size must be between 1 and n = 2; give --k"},
		{[]string{"--T", "0"}, "--T 0: horizon must be between 1 and 100000"},
		{[]string{"--T", "-300"}, "--T -300: horizon must be between 1 and 100000"},
		{[]string{"--T", "10"}, "THV-UCB: horizon T = 10 is shorter than the forced initialisation (24 rounds for n = 36, k = 3, m0 = 2)"},
		{[]string{"--sigma", "nan"}, "--sigma NaN: noise level must be finite and ≥ 0"},
		{[]string{"--sigma", "inf"}, "--sigma +Inf: noise level must be finite and ≥ 0"},
		{[]string{"--sigma", "-0.1"}, "--sigma -0.1: noise level must be finite and ≥ 0"},
		{[]string{"--sigma", "-1"}, "--sigma -1: noise level must be finite and ≥ 0"},
		{[]string{"--eta", "nan"}, "--eta NaN: η must be finite and > 0"},
		{[]string{"--eta", "inf"}, "--eta +Inf: η must be finite and > 0"},
		{[]string{"--d", "0"}, "--d 0: need at least 2 objectives"},
		{[]string{"--d", "7"}, "no setting for d = 7 in params.yaml: give --n, --k, --T and --sigma"},
		{[]string{"--d", "7", "--n", "10", "--k", "2", "--T", "100"}, "no setting for d = 7 in params.yaml: give --n, --k, --T and --sigma"},
		{[]string{"--set", "settings.d2.T=true"}, "embedded params.yaml (profile paper): settings.d2.T = true: want an integer, got a boolean (from --set settings.d2.T=true)"},
		{[]string{"--instance", csv}, "--d: cannot be combined with --instance (the instance's file gives d and n)"},
	} {
		args := append(append([]string{}, base...), c.args...)
		if _, err := execute(t, newRunCommand(), args...); err == nil || err.Error() != c.want {
			t.Errorf("thv run %v:\n err  %v\n want %s", c.args, err, c.want)
		}
	}
	csv7 := filepath.Join(t.TempDir(), "d7.csv")
	os.WriteFile(csv7, []byte("0.5,0.5,0.5,0.5,0.5,0.5,0.5\n0.9,0,0,0,0,0,0\n"), 0o644)
	if _, err := execute(t, newRunCommand(), "--instance", csv7, "--algo", "RandomK", "--k", "1", "--T", "100"); err == nil || err.Error() != csv7+": no setting for d = 7 in params.yaml: give --k, --T and --sigma" {
		t.Errorf("CSV instance of d = 7 without --sigma: %v", err)
	}
	// Zero noise given explicitly is a value, not "the default".
	out, err := execute(t, newRunCommand(), append(base, "--sigma", "0", "--T", "100")...)
	if err != nil || !strings.Contains(out, `"sigma":0,`) || !strings.Contains(out, `"T":100,`) {
		t.Errorf("--sigma 0 --T 100: %v %s", err, out)
	}
}

func TestRunCSVInstance(t *testing.T) {
	f := filepath.Join(t.TempDir(), "arms.csv")
	os.WriteFile(f, []byte("a,b\n0.9,0.1\n0.1,0.9\n0.6,0.6\n0.2,0.2\n0.3,0.1\n"), 0o644)
	out, err := execute(t, newRunCommand(), "--instance", f, "--k", "2", "--T", "200", "--sigma", "0", "--algo", "THV-UCB", "--eta", "0.01", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var r map[string]any
	json.Unmarshal([]byte(out), &r)
	// Best pair: (0.9,0.1)+(0.6,0.6)? 0.09+0.36−0.06=0.39; (0.1,0.9)+(0.6,0.6) the same; (0.9,0.1)+(0.1,0.9)=0.17.
	if math.Abs(r["v_star"].(float64)-0.39) > 1e-12 || math.Abs(r["hv_last"].(float64)-0.39) > 1e-12 {
		t.Fatalf("V* %v, HV_last %v, want 0.39 for both (noiseless)", r["v_star"], r["hv_last"])
	}
}

func TestAlgosListsThePapersAlgorithms(t *testing.T) {
	out, err := execute(t, newAlgosCommand(), "--json")
	if err != nil {
		t.Fatal(err)
	}
	var rows []struct{ Name, Fidelity string }
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatal(err)
	}
	if len(rows) < len(algos.PaperOrder) {
		t.Fatalf("%d algorithms listed, want at least the paper's %d", len(rows), len(algos.PaperOrder))
	}
	for i, name := range algos.PaperOrder {
		if rows[i].Name != name {
			t.Errorf("row %d is %s, want %s", i, rows[i].Name, name)
		}
	}
	// Any other registered algorithm follows, by name.
	for i := len(algos.PaperOrder) + 1; i < len(rows); i++ {
		if rows[i-1].Name >= rows[i].Name {
			t.Errorf("rows %d and %d: %s before %s, want the algorithms outside the paper by name", i-1, i, rows[i-1].Name, rows[i].Name)
		}
	}
}

// buildThv builds the thv binary from the module at dir (once per
// directory and test process).
func buildThv(t *testing.T, dir string) string {
	t.Helper()
	builtMu.Lock()
	defer builtMu.Unlock()
	if bin, ok := built[dir]; ok {
		return bin
	}
	out, err := os.MkdirTemp("", "thv-cli-test")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(out, "thv")
	// As make build does: static and path-free, so that the binary can
	// go into the container image (--executor container, thv image).
	cmd := exec.Command("go", "build", "-trimpath", "-o", bin, "./cmd/thv")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	built[dir] = bin
	return bin
}

var (
	builtMu sync.Mutex
	built   = map[string]string{}
)

func TestMain(m *testing.M) {
	code := m.Run()
	for _, bin := range built {
		os.RemoveAll(filepath.Dir(bin))
	}
	if quickDir != "" {
		os.RemoveAll(quickDir)
	}
	os.Exit(code)
}

func moduleRoot(t *testing.T) string {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

type reproOut struct {
	Executed, Cached, Failed int
}

// thvRepro runs the binary's repro in dir on the tiny protocol.
func thvRepro(t *testing.T, bin, dir string, extra ...string) reproOut {
	t.Helper()
	params := tinyParams(t)
	cmd := exec.Command(bin, append([]string{"repro", "--params", params, "--json", "-j", "2"}, extra...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("thv repro: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	var r reproOut
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &r); err != nil {
		t.Fatalf("last line is not JSON: %q", lines[len(lines)-1])
	}
	return r
}

// TestKilledReproLeavesNoPartialArtifact SIGKILLs thv repro at random
// moments of a run (20 times; 6 in CI, where time is short): every object in
// the store verifies after each kill, and a rerun completes with the lock
// of an uninterrupted run.
func TestKilledReproLeavesNoPartialArtifact(t *testing.T) {
	bin := buildThv(t, moduleRoot(t))
	clean := t.TempDir()
	thvRepro(t, bin, clean)
	total := objectCount(filepath.Join(clean, ".thv"))

	kills := 20
	if testenv.CI() {
		kills = 6
	}
	dir := t.TempDir()
	params := tinyParams(t)
	rng := rand.New(rand.NewPCG(12, 34))
	for attempt := 0; attempt < kills; attempt++ {
		// Each attempt starts from where the last was killed; kill it
		// after a random number of further objects, or at once.
		have := objectCount(filepath.Join(dir, ".thv"))
		target := have + rng.IntN(max(1, (total-have)/2+1))
		cmd := exec.Command(bin, "repro", "--params", params, "-j", "2")
		cmd.Dir = dir
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(20 * time.Second)
		for objectCount(filepath.Join(dir, ".thv")) < target && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		store, err := artifacts.Open(filepath.Join(dir, ".thv"), artifacts.Create)
		if err != nil {
			t.Fatal(err)
		}
		objs, err := store.Objects()
		if err != nil {
			t.Fatal(err)
		}
		for dig := range objs {
			if err := store.Verify(dig); err != nil {
				t.Fatalf("after SIGKILL %d: %v", attempt, err)
			}
		}
		if corrupt, _ := os.ReadDir(filepath.Join(dir, ".thv", "corrupt")); len(corrupt) > 0 {
			// Only torn pack tails, set aside: no object was ever bad.
			for _, e := range corrupt {
				if !strings.HasPrefix(e.Name(), "pack-tail-") {
					t.Fatalf("after SIGKILL %d: corrupt/%s", attempt, e.Name())
				}
			}
		}
		if _, err := os.Stat(filepath.Join(dir, tinyLock)); err == nil {
			if _, err := pipeline.ReadLock(filepath.Join(dir, tinyLock)); err != nil {
				t.Fatalf("after SIGKILL %d the lock does not read: %v", attempt, err)
			}
		}
	}
	r := thvRepro(t, bin, dir)
	if r.Failed != 0 {
		t.Fatalf("rerun after kills: %+v", r)
	}
	requireSameLock(t, clean, dir, "after killed runs and a rerun")
}

// objectCount is the number of objects in the store at dir, as a reader
// finds them (packed or loose), or 0.
func objectCount(dir string) int {
	st, err := artifacts.Open(dir, artifacts.Existing)
	if err != nil {
		return 0
	}
	objs, _ := st.Objects()
	return len(objs)
}

// thvWithEditedRandomK builds thv from a copy of the module whose RandomK
// draws one more random number per round: other code, other outputs.
func thvWithEditedRandomK(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	copyModule(t, moduleRoot(t), dir)
	file := filepath.Join(dir, "algos", "randomk", "randomk.go")
	src, _ := os.ReadFile(file)
	edited := strings.Replace(string(src), "\tn := len(p.perm)\n", "\tn := len(p.perm)\n\tp.rng.Uint64() // behaviour change\n", 1)
	if edited == string(src) {
		t.Fatal("edit not applied")
	}
	os.WriteFile(file, []byte(edited), 0o644)
	return buildThv(t, dir)
}

// TestRebuiltFamilyRerunsOnlyItsTasks builds thv from a copy of the module
// whose RandomK draws one extra random number per round: only RandomK's runs
// and what depends on them rerun; every other task is cached.
func TestRebuiltFamilyRerunsOnlyItsTasks(t *testing.T) {
	root := moduleRoot(t)
	orig := buildThv(t, root)
	dir := t.TempDir()
	first := thvRepro(t, orig, dir)

	changed := thvWithEditedRandomK(t)

	r := thvRepro(t, changed, dir)
	// RandomK's runs and collects, then every setting's statistics, the
	// tables and the comparison. The figures do not draw RandomK: their
	// inputs are unchanged, they stay cached.
	want := 2 // tables, compare
	for _, task := range tinyPlan(t).Tasks {
		if strings.Contains(task.ID, "/RandomK") || task.Kind == "summarize" {
			want++
		}
	}
	if r.Executed != want || r.Failed != 0 {
		t.Fatalf("after editing randomk: %+v, want %d executed (RandomK's runs and collects, the statistics, the tables, the comparison) of %d", r, want, first.Executed)
	}
	if again := thvRepro(t, changed, dir); again.Executed != 0 {
		t.Fatalf("no-op rerun executed %d", again.Executed)
	}
}

// TestProcessExecutorSameLock: thv repro --executor process (thv exec-task
// worker processes of the same binary) writes the local executor's lock
// byte for byte, and reports a worker that cannot start.
func TestProcessExecutorSameLock(t *testing.T) {
	bin := buildThv(t, moduleRoot(t))
	local, process := t.TempDir(), t.TempDir()
	thvRepro(t, bin, local)
	thvRepro(t, bin, process, "--executor", "process")
	a, _ := os.ReadFile(filepath.Join(local, tinyLock))
	b, _ := os.ReadFile(filepath.Join(process, tinyLock))
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Fatal("--executor process wrote another lock than --executor local")
	}
	out, err := exec.Command(bin, "repro", "--params", tinyParams(t), "--executor", "slurm-please").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "want local, process") {
		t.Fatalf("unknown executor: %v %s", err, out)
	}
}

func tinyParams(t *testing.T) string {
	return filepath.Join(moduleRoot(t), "protocol", "testdata", "tiny.yaml")
}

func tinyPlan(t *testing.T) *pipeline.Plan {
	t.Helper()
	cfg, err := config.Load(config.LoadOptions{ParamsFile: tinyParams(t)})
	if err != nil {
		t.Fatal(err)
	}
	plan, err := protocol.NewPlan(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return plan
}

// copyModule copies the module's sources (no .git, bin or stores).
func copyModule(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, path)
		if d.IsDir() {
			switch d.Name() {
			case ".git", "bin", ".thv", "results", "node_modules":
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// thv runs the built binary in dir on the tiny protocol and returns its
// combined output.
func thv(t *testing.T, bin, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, append(args, "--params", tinyParams(t))...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("thv %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// showTrajectories checks thv show runs --trajectory on a run a figure
// draws (its trajectory kept in the store, by its figure's run) and on one
// no figure draws (computed again): each has T rounds, and the mean of its
// last hv_window rounds is the HV_last its summary, which the store keeps,
// records.
func showTrajectories(t *testing.T, bin, dir string, cfg *config.Config) {
	t.Helper()
	lock, err := pipeline.ReadLock(filepath.Join(dir, tinyLock))
	if err != nil {
		t.Fatal(err)
	}
	var drawn, notDrawn string
	for _, rec := range lock.Tasks {
		switch id := rec.ID; {
		case strings.HasSuffix(id, "/trajectory") && drawn == "" && strings.HasPrefix(id, "run/d2/"):
			drawn = strings.TrimSuffix(id, "/trajectory")
		case strings.HasPrefix(id, "run/d2/") && strings.Contains(id, "/RandomK/") && notDrawn == "":
			notDrawn = id
		}
	}
	if drawn == "" || notDrawn == "" {
		t.Fatal("no d2 run drawn by a figure, or no RandomK run, in the lock")
	}
	set, _ := cfg.SettingFor(2)
	for _, id := range []string{drawn, notDrawn} {
		summary := strings.Split(strings.Split(thv(t, bin, dir, "show", "runs", id), "\n")[1], "\t")
		hvLast, _ := strconv.ParseFloat(summary[1], 64)
		out := thv(t, bin, dir, "show", "runs", id, "--trajectory")
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if lines[0] != "# "+id || lines[1] != "round\thv" || len(lines) != set.T+2 {
			t.Fatalf("show runs %s --trajectory: %d lines, starting %q", id, len(lines), lines[:2])
		}
		var sum float64
		for _, l := range lines[len(lines)-cfg.Metrics.HVWindow:] {
			v, err := strconv.ParseFloat(strings.Split(l, "\t")[1], 64)
			if err != nil {
				t.Fatal(err)
			}
			sum += v
		}
		if mean := sum / float64(cfg.Metrics.HVWindow); math.Abs(mean-hvLast) > 1e-6 {
			t.Errorf("%s: the mean of the trajectory's last %d rounds is %v, its summary's HV_last %v", id, cfg.Metrics.HVWindow, mean, hvLast)
		}
	}
}

// TestProjectCommands covers status, show, dag and gc on a finished tiny
// project; every count comes from the plan.
func TestProjectCommands(t *testing.T) {
	bin := buildThv(t, moduleRoot(t))
	dir := t.TempDir()
	thvRepro(t, bin, dir)
	plan := tinyPlan(t)
	cfg, _ := config.Load(config.LoadOptions{ParamsFile: tinyParams(t)})

	var st struct {
		Total int `json:"total"`
		Stale []struct{ Task, Kind, Reason string }
	}
	if err := json.Unmarshal([]byte(thv(t, bin, dir, "status", "--json")), &st); err != nil {
		t.Fatal(err)
	}
	if len(st.Stale) != 0 || st.Total < len(plan.Tasks) {
		t.Fatalf("status after repro: %d total (plan has %d before expansion), stale %v", st.Total, len(plan.Tasks), st.Stale)
	}
	out := thv(t, bin, dir, "status", "--set", "settings.d3.T=110")
	if !strings.Contains(out, "params changed: T 120 → 110") || !strings.Contains(out, "input will be recomputed") {
		t.Fatalf("status after a change:\n%s", out)
	}

	out = thv(t, bin, dir, "show")
	for _, a := range cfg.SortedAlgorithms() {
		if !strings.Contains(out, a.Name) {
			t.Errorf("show lacks %s", a.Name)
		}
	}
	for _, g := range cfg.Geometries {
		if !strings.Contains(out, g) {
			t.Errorf("show lacks %s", g)
		}
	}
	if strings.Contains(out, "not run") {
		t.Errorf("show after a full repro says something did not run:\n%s", out)
	}
	runs := 0
	for _, task := range plan.Tasks {
		if strings.HasPrefix(task.ID, "run/d2/concave/THV-UCB/") {
			runs++
		}
	}
	if lines := strings.Count(thv(t, bin, dir, "show", "runs", "d2/concave/THV-UCB/"), "\n"); lines != runs+1 {
		t.Errorf("show runs: %d lines, want a header and %d runs", lines, runs)
	}
	showTrajectories(t, bin, dir, cfg)
	if out := thv(t, bin, dir, "show", "eta"); !strings.Contains(out, "THV-UCB") {
		t.Errorf("show eta:\n%s", out)
	}
	if out := thv(t, bin, dir, "show", "tests"); !strings.Contains(out, "THV-UCB") && !strings.Contains(out, "Wilcoxon") {
		t.Errorf("show tests:\n%s", out)
	}

	out = thv(t, bin, dir, "dag")
	for kind, n := range plan.CountByKind() {
		if !strings.Contains(out, fmt.Sprintf("%s (%d)", kind, n)) {
			t.Errorf("dag lacks %q:\n%s", fmt.Sprintf("%s (%d)", kind, n), out)
		}
	}
	if out := thv(t, bin, dir, "dag", "--format", "dot"); !strings.HasPrefix(out, "digraph") {
		t.Errorf("dag --format dot:\n%s", out)
	}
	if out := thv(t, bin, dir, "dag", "--format", "mermaid", "--tasks", "--filter", "d2/concave/RandomK"); !strings.HasPrefix(out, "graph LR") || !strings.Contains(out, "instance/d2/concave") {
		t.Errorf("dag --tasks mermaid:\n%s", out)
	}

	if out := thv(t, bin, dir, "gc", "--dry-run"); !strings.HasPrefix(out, "would have removed 0 objects, 0 index entries") {
		t.Errorf("gc --dry-run on a current store: %s", out)
	}
	thv(t, bin, dir, "gc", "--set", "settings.d3.T=110")
	if r := thvRepro(t, bin, dir); r.Executed == 0 {
		t.Error("gc under another protocol removed nothing")
	}
}

// TestInterruptStopsCleanly sends SIGINT to a running repro: it exits with
// an error saying it was interrupted, leaves a valid lock of what
// completed, and a rerun ends with the lock of an uninterrupted run.
func TestInterruptStopsCleanly(t *testing.T) {
	bin := buildThv(t, moduleRoot(t))
	clean := t.TempDir()
	thvRepro(t, bin, clean)
	dir := t.TempDir()
	cmd, out := startRepro(t, bin, dir)
	deadline := time.Now().Add(20 * time.Second)
	for objectCount(filepath.Join(dir, ".thv")) < 30 && time.Now().Before(deadline) {
		time.Sleep(2 * time.Millisecond)
	}
	cmd.Process.Signal(os.Interrupt)
	err := cmd.Wait()
	if err == nil {
		t.Fatalf("the run finished before the interrupt arrived (the test must interrupt it mid-run):\n%s", out.String())
	}
	if code := exitCode(err); code != 130 {
		t.Errorf("an interrupted repro exits %d, want 130 (128 + SIGINT)", code)
	}
	if !strings.Contains(out.String(), "interrupted") || !strings.Contains(out.String(), "context canceled") {
		t.Fatalf("interrupted repro said:\n%s", out.String())
	}
	if _, err := os.Stat(filepath.Join(dir, tinyLock)); err != nil {
		t.Fatalf("no lock after the interrupt: %v", err)
	}
	entries, _ := os.ReadDir(filepath.Join(dir, ".thv", "tmp"))
	if len(entries) != 0 {
		t.Fatalf("the interrupt left %d temporary files in the store", len(entries))
	}
	if r := thvRepro(t, bin, dir); r.Failed != 0 || r.Executed == 0 {
		t.Fatalf("rerun after the interrupt: %+v", r)
	}
	requireSameLock(t, clean, dir, "after an interrupted run and a rerun")
}

// startRepro starts thv repro on the tiny protocol in dir, its output
// collected in the returned buffer.
func startRepro(t *testing.T, bin, dir string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(bin, "repro", "--params", tinyParams(t), "-j", "2")
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, &out
}

// requireSameLock fails unless the tiny lock in dir equals the one in clean.
func requireSameLock(t *testing.T, clean, dir, what string) {
	t.Helper()
	a, _ := os.ReadFile(filepath.Join(clean, tinyLock))
	b, _ := os.ReadFile(filepath.Join(dir, tinyLock))
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Fatalf("the lock %s differs from an uninterrupted run's", what)
	}
}

// tinyLock is the lock file thv repro --params …/tiny.yaml writes.
const tinyLock = "thv-tiny.lock"

// TestStatusVerifyFindsAFlippedByte: a corrupt object that a no-op pass
// would not read is found by thv status --verify (exit 1, naming the task),
// and the next repro recomputes it.
func TestStatusVerifyFindsAFlippedByte(t *testing.T) {
	bin := buildThv(t, moduleRoot(t))
	dir := t.TempDir()
	thvRepro(t, bin, dir)
	if out := thv(t, bin, dir, "status", "--verify"); !strings.Contains(out, "every output of the up-to-date tasks verified") {
		t.Fatalf("status --verify on a clean store:\n%s", out)
	}
	lockBytes, _ := os.ReadFile(filepath.Join(dir, tinyLock))
	var rec struct {
		ID      string            `json:"id"`
		Outputs map[string]string `json:"outputs"`
	}
	for _, line := range strings.Split(string(lockBytes), "\n") {
		if strings.Contains(line, `"id":"run/d2/concave/RandomK/eta=0/seed=1"`) {
			json.Unmarshal([]byte(strings.TrimSuffix(line, ",")), &rec)
		}
	}
	d, err := artifacts.ParseDigest(rec.Outputs["summary"])
	if err != nil {
		t.Fatalf("run record not found: %v", err)
	}
	st, _ := artifacts.Open(filepath.Join(dir, ".thv"), artifacts.Existing)
	damage.Flip(t, st, d)

	cmd := exec.Command(bin, "status", "--verify", "--params", tinyParams(t))
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "DAMAGED run/d2/concave/RandomK/eta=0/seed=1: output summary") {
		t.Fatalf("status --verify with a flipped byte: %v\n%s", err, out)
	}
	if r := thvRepro(t, bin, dir); r.Executed == 0 || r.Failed != 0 {
		t.Fatalf("repro after the damage: %+v", r)
	}
	if out := thv(t, bin, dir, "status", "--verify"); !strings.Contains(out, "verified") {
		t.Fatalf("status --verify after the repair:\n%s", out)
	}
}

// TestReadOnlyCommandsCreateNothing: status, show, dag, gc --dry-run and
// repro --dry-run in a fresh directory leave it empty.
func TestReadOnlyCommandsCreateNothing(t *testing.T) {
	bin := buildThv(t, moduleRoot(t))
	dir := t.TempDir()
	for _, args := range [][]string{{"status"}, {"show"}, {"dag"}, {"gc", "--dry-run"}, {"repro", "--dry-run"}} {
		thv(t, bin, dir, args...)
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Fatalf("thv %s created %s", strings.Join(args, " "), entries[0].Name())
		}
	}
}

// TestGCDuringRepro is issue #12's fourth reproduction: gc started while a
// repro runs must not delete what the run needs. Every gc during the run is
// refused; the run completes with the lock of an undisturbed run; a gc
// afterwards works.
func TestGCDuringRepro(t *testing.T) {
	bin := buildThv(t, moduleRoot(t))
	clean := t.TempDir()
	thvRepro(t, bin, clean)
	dir := t.TempDir()
	run, out := startRepro(t, bin, dir)
	done := make(chan error, 1)
	go func() { done <- run.Wait() }()
	refused := 0
	for finished := false; !finished; {
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("repro with gc attempts alongside: %v\n%s", err, out.String())
			}
			finished = true
		default:
			if objectCount(filepath.Join(dir, ".thv")) == 0 {
				time.Sleep(time.Millisecond)
				continue
			}
			gc := exec.Command(bin, "gc", "--params", tinyParams(t))
			gc.Dir = dir
			if msg, err := gc.CombinedOutput(); err != nil {
				if !strings.Contains(string(msg), "in use") && !strings.Contains(string(msg), "locked") {
					t.Fatalf("gc during repro failed without saying the store is in use: %s", msg)
				}
				refused++
			}
		}
	}
	if refused == 0 {
		t.Fatal("no gc ran during the repro (the run was too quick to test)")
	}
	requireSameLock(t, clean, dir, "of a repro disturbed by gc attempts")
	if out := thv(t, bin, dir, "gc"); !strings.HasPrefix(out, "removed 0 objects") {
		t.Fatalf("gc after the run: %s", out)
	}
	if r := thvRepro(t, bin, dir); r.Executed != 0 {
		t.Fatalf("gc after the run removed live artifacts: %+v", r)
	}
}
