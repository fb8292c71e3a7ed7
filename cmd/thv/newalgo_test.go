package main

import (
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"thv/algos"
	"thv/pipeline"
)

// greedySumSource is an algorithm that is not in the paper: the k arms of
// largest empirical mean sum, without exploration. It lives only in this
// test, so the production binary does not carry it.
const greedySumSource = `// Package greedysum is GreedySum, an algorithm outside the paper (a test's).
package greedysum

import "thv/algos"

func init() {
	algos.Register(algos.Spec{
		Name:     "GreedySum",
		Family:   "greedysum",
		Fidelity: algos.Unmarked,
		Cost:     0.2,
		Learns:   true,
		Summary:  "top-k by the sum of the empirical means, no exploration",
		New: func(cfg algos.Config) algos.Policy {
			return &Policy{Stats: algos.NewStats(cfg.N, cfg.D), score: make([]float64, cfg.N)}
		},
	})
}

// Policy is a GreedySum player.
type Policy struct {
	algos.Stats
	score []float64
}

// Select plays the arms of largest Σ_ℓ μ̂_iℓ.
func (p *Policy) Select(t int, slate []int) {
	algos.CoordSums(p.Mean, p.score)
	algos.TopK(p.score, slate)
}
`

// thvWithGreedySum builds thv from a copy of the module with one more
// algorithm: its package and one import line in algos/all, nothing else.
func thvWithGreedySum(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	copyModule(t, moduleRoot(t), dir)
	pkg := filepath.Join(dir, "algos", "greedysum")
	if err := os.MkdirAll(pkg, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(pkg, "greedysum.go"), []byte(greedySumSource), 0o644); err != nil {
		t.Fatal(err)
	}
	all := filepath.Join(dir, "algos", "all", "all.go")
	src, _ := os.ReadFile(all)
	const last = "\t_ \"thv/algos/thvucb\"\n"
	edited := strings.Replace(string(src), last, last+"\t_ \"thv/algos/greedysum\"\n", 1)
	if edited == string(src) {
		t.Fatalf("import line not added: %q not found in %s", last, all)
	}
	if err := os.WriteFile(all, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	return buildThv(t, dir)
}

// TestAlgorithmIsItsPackageAndAnImport: an algorithm that is
// not in the paper, added as its package plus one import line, is listed
// by thv algos after the paper's fourteen, runs through thv run (a real
// run: finite metrics, other than RandomK's, the same for the same seed),
// and a protocol naming it is accepted and reproduced to the end, its run
// tasks among the plan's.
func TestAlgorithmIsItsPackageAndAnImport(t *testing.T) {
	bin := thvWithGreedySum(t)
	run := func(args ...string) []byte {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Dir = t.TempDir()
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("thv %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}

	var rows []struct{ Name, Family string }
	if err := json.Unmarshal(run("algos", "--json"), &rows); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range rows {
		names = append(names, r.Name)
	}
	if want := append(append([]string{}, algos.PaperOrder...), "GreedySum"); strings.Join(names, ",") != strings.Join(want, ",") {
		t.Fatalf("thv algos lists %v, want %v", names, want)
	}

	type result struct {
		Algo           string
		T              int
		HVLast         float64 `json:"hv_last"`
		VStar          float64 `json:"v_star"`
		RegretAlpha    float64 `json:"regret_alpha"`
		RegretAlphaPos float64 `json:"regret_alpha_pos"`
		RegretExact    float64 `json:"regret_exact"`
	}
	simulate := func(algo string) (r result) {
		t.Helper()
		out := run("run", "--d", "2", "--geometry", "concave", "--algo", algo, "--seed", "3", "--T", "400", "--json")
		if err := json.Unmarshal(out, &r); err != nil {
			t.Fatalf("thv run --algo %s: %v\n%s", algo, err, out)
		}
		return r
	}
	greedy, again, random := simulate("GreedySum"), simulate("GreedySum"), simulate("RandomK")
	if greedy.Algo != "GreedySum" || greedy.T != 400 {
		t.Fatalf("thv run --algo GreedySum: %+v", greedy)
	}
	for name, v := range map[string]float64{"hv_last": greedy.HVLast, "v_star": greedy.VStar, "regret_alpha": greedy.RegretAlpha, "regret_alpha_pos": greedy.RegretAlphaPos, "regret_exact": greedy.RegretExact} {
		if math.IsNaN(v) || math.IsInf(v, 0) || v == 0 {
			t.Errorf("GreedySum's %s = %v, want a finite non-zero number", name, v)
		}
	}
	if greedy != again {
		t.Errorf("GreedySum differs between two runs of one seed:\n %+v\n %+v", greedy, again)
	}
	if greedy.VStar != random.VStar {
		t.Errorf("V* %v for GreedySum, %v for RandomK: not the same instance", greedy.VStar, random.VStar)
	}
	if greedy.HVLast == random.HVLast || greedy.RegretExact == random.RegretExact {
		t.Errorf("GreedySum ran as RandomK: %+v, RandomK %+v", greedy, random)
	}

	// A protocol naming it: the tiny one, plus GreedySum.
	tiny, err := os.ReadFile(tinyParams(t))
	if err != nil {
		t.Fatal(err)
	}
	const lastAlgo = "  - {name: RandomK}\n"
	params := strings.Replace(string(tiny), lastAlgo, lastAlgo+"  - {name: GreedySum}\n", 1)
	if params == string(tiny) {
		t.Fatalf("%q not found in %s", lastAlgo, tinyParams(t))
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "greedy.yaml")
	os.WriteFile(file, []byte(params), 0o644)
	cmd := exec.Command(bin, "repro", "--params", file, "--json", "-j", "2")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("thv repro with GreedySum: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	var r reproOut
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &r); err != nil || r.Failed != 0 || r.Executed == 0 {
		t.Fatalf("thv repro with GreedySum: %+v %v\n%s", r, err, out)
	}
	lock, err := pipeline.ReadLock(filepath.Join(dir, "thv-greedy.lock"))
	if err != nil {
		t.Fatal(err)
	}
	var greedyTasks []string
	for _, rec := range lock.Tasks {
		if strings.Contains(rec.ID, "/GreedySum") {
			greedyTasks = append(greedyTasks, rec.ID)
		}
	}
	// 2 settings × 2 geometries × 2 seeds, no η (so no select), plus a
	// collect per setting and geometry; and, the only algorithm of its
	// family, the figures draw its final runs: a run of each that keeps
	// its trajectory (protocol.FigureRunID).
	if len(greedyTasks) != 20 {
		t.Fatalf("the lock has %d GreedySum tasks, want 20: %v", len(greedyTasks), greedyTasks)
	}
	tables, err := os.ReadFile(filepath.Join(dir, "results", "tables", "summary_d2.tex"))
	if err != nil {
		entries, _ := os.ReadDir(filepath.Join(dir, "results"))
		t.Fatalf("%v (results/: %v)", err, entries)
	}
	if !strings.Contains(string(tables), "GreedySum") {
		t.Errorf("the tables do not name GreedySum:\n%s", tables)
	}
}
