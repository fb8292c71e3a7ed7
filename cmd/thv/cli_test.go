package main

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"thv/algos"
	"thv/artifacts"
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
	for _, f := range []string{"algo", "eta", "d", "n", "k", "T", "sigma", "geometry", "seed", "hv_last100", "v_star", "hv_greedy", "regret_alpha", "regret_alpha_pos", "regret_exact"} {
		if _, ok := r[f]; !ok {
			t.Errorf("field %s missing", f)
		}
	}
	num := func(f string) float64 { return r[f].(float64) }
	if num("n") != 36 || num("k") != 3 || num("T") != 400 || num("sigma") != 0.05 {
		t.Errorf("setting not taken from params.yaml: %v", r)
	}
	vs, hg, last := num("v_star"), num("hv_greedy"), num("hv_last100")
	if !(hg <= vs+1e-12 && hg >= (1-1/math.E)*vs && last <= vs+1e-12 && last > 0) {
		t.Errorf("inconsistent benchmarks: V*=%v HV(G*)=%v HV_last=%v", vs, hg, last)
	}
	if num("regret_alpha_pos") < num("regret_alpha") || num("regret_exact") < num("regret_alpha") {
		t.Errorf("regrets out of order: %v", r)
	}
}

func TestRunErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--d", "2", "--geometry", "concave", "--algo", "THV-UCX", "--eta", "0.1"}, `unknown algorithm "THV-UCX"`},
		{[]string{"--d", "2", "--geometry", "spiral", "--algo", "RandomK"}, `unknown geometry "spiral"`},
		{[]string{"--d", "2", "--geometry", "concave", "--algo", "RandomK", "--k", "40"}, "k = 40"},
		{[]string{"--d", "1", "--geometry", "concave", "--algo", "RandomK"}, "at least 2 objectives"},
		{[]string{"--d", "2", "--geometry", "concave", "--algo", "RandomK", "--T", "10"}, "shorter than the forced initialisation"},
		{[]string{"--d", "2", "--geometry", "concave", "--algo", "THV-UCB", "--eta", "0"}, "η must be > 0"},
		{[]string{"--d", "2", "--geometry", "concave", "--algo", "THV-UCB", "--eta", "-1"}, "η must be > 0"},
		{[]string{"--d", "2", "--geometry", "concave", "--algo", "THV-UCB"}, "give --eta"},
		{[]string{"--geometry", "concave", "--algo", "RandomK"}, "--d is required"},
	} {
		if _, err := execute(t, newRunCommand(), c.args...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("thv run %v: err = %v, want %q", c.args, err, c.want)
		}
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
	if math.Abs(r["v_star"].(float64)-0.39) > 1e-12 || math.Abs(r["hv_last100"].(float64)-0.39) > 1e-12 {
		t.Fatalf("V* %v, HV_last %v, want 0.39 for both (noiseless)", r["v_star"], r["hv_last100"])
	}
}

func TestAlgosLists14(t *testing.T) {
	out, err := execute(t, newAlgosCommand(), "--json")
	if err != nil {
		t.Fatal(err)
	}
	var rows []struct{ Name, Fidelity string }
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatal(err)
	}
	if len(rows) != 14 {
		t.Fatalf("%d algorithms listed, want 14", len(rows))
	}
	for i, r := range rows {
		if r.Name != algos.PaperOrder[i] {
			t.Errorf("row %d is %s, want %s", i, r.Name, algos.PaperOrder[i])
		}
	}
}

// buildThv builds the thv binary from the module at dir into a temp dir.
func buildThv(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "thv")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/thv")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
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
	params := filepath.Join(moduleRoot(t), "pipeline", "testdata", "tiny.yaml")
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

// TestKilledReproLeavesNoPartialArtifact SIGKILLs thv repro mid-run: every
// object in the store verifies, and a rerun completes with the same lock as
// an uninterrupted run.
func TestKilledReproLeavesNoPartialArtifact(t *testing.T) {
	bin := buildThv(t, moduleRoot(t))
	clean := t.TempDir()
	thvRepro(t, bin, clean)

	dir := t.TempDir()
	params := filepath.Join(moduleRoot(t), "pipeline", "testdata", "tiny.yaml")
	for attempt := 0; attempt < 3; attempt++ {
		cmd := exec.Command(bin, "repro", "--params", params, "-j", "2")
		cmd.Dir = dir
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Kill once some objects exist, i.e. mid-run.
		deadline := time.Now().Add(20 * time.Second)
		for countFiles(filepath.Join(dir, ".thv", "objects")) < 20*(attempt+1) && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		store, err := artifacts.Open(filepath.Join(dir, ".thv"))
		if err != nil {
			t.Fatal(err)
		}
		filepath.WalkDir(filepath.Join(dir, ".thv", "objects"), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			dig, err := artifacts.ParseDigest("sha256:" + d.Name())
			if err != nil {
				t.Fatalf("stray file in objects/: %s", path)
			}
			if err := store.Verify(dig); err != nil {
				t.Fatalf("after SIGKILL: %v", err)
			}
			return nil
		})
	}
	r := thvRepro(t, bin, dir)
	if r.Failed != 0 || r.Executed == 0 {
		t.Fatalf("rerun after kills: %+v", r)
	}
	a, _ := os.ReadFile(filepath.Join(clean, "thv.lock"))
	b, _ := os.ReadFile(filepath.Join(dir, "thv.lock"))
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Fatal("lock after killed runs differs from an uninterrupted run's")
	}
}

func countFiles(dir string) int {
	n := 0
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			n++
		}
		return nil
	})
	return n
}

// TestRebuiltFamilyRerunsOnlyItsTasks builds thv from a copy of the module
// whose RandomK draws one extra random number per round: only RandomK's runs
// and what depends on them rerun; every other task is cached.
func TestRebuiltFamilyRerunsOnlyItsTasks(t *testing.T) {
	root := moduleRoot(t)
	orig := buildThv(t, root)
	dir := t.TempDir()
	first := thvRepro(t, orig, dir)

	copyDir := t.TempDir()
	copyModule(t, root, copyDir)
	file := filepath.Join(copyDir, "algos", "randomk", "randomk.go")
	src, _ := os.ReadFile(file)
	edited := strings.Replace(string(src), "\tn := len(p.perm)\n", "\tn := len(p.perm)\n\tp.rng.Uint64() // behaviour change\n", 1)
	if edited == string(src) {
		t.Fatal("edit not applied")
	}
	os.WriteFile(file, []byte(edited), 0o644)
	changed := buildThv(t, copyDir)

	r := thvRepro(t, changed, dir)
	// tiny.yaml: 2 settings × 2 geometries × 2 seeds = 8 RandomK runs,
	// 4 collects, then the 2 settings' statistics and the tables. The
	// figures do not draw RandomK: their inputs are unchanged, they stay
	// cached.
	if r.Executed != 15 || r.Failed != 0 {
		t.Fatalf("after editing randomk: %+v, want 15 executed (8 runs, 4 collects, 2 summarize, tables) of %d", r, first.Executed)
	}
	if again := thvRepro(t, changed, dir); again.Executed != 0 {
		t.Fatalf("no-op rerun executed %d", again.Executed)
	}
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
			case ".git", "bin", ".thv", "results":
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
