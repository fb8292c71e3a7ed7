package protocol

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"thv"
	"thv/algos"
	"thv/envs"
	"thv/protocol/config"
	"thv/stages/compare"
)

// TestIDsNameThePlansTasks: the exported ID constructors name exactly the
// tasks the plan holds before any expansion (computed here from the
// protocol, not from the plan), so a command that finds a task by them
// finds the plan's.
func TestIDsNameThePlansTasks(t *testing.T) {
	cfg, err := config.Load(config.LoadOptions{ParamsFile: "testdata/tiny.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	plan, err := NewPlan(cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{TablesID: true, CompareID: true}
	for _, s := range cfg.SortedSettings() {
		want[SummarizeID(s.Name)], want[FiguresID(s.Name)] = true, true
		for _, g := range cfg.Geometries {
			for _, a := range cfg.SortedAlgorithms() {
				want[CollectID(s.Name, g, a.Name)] = true
				runs := map[float64][]uint64{0: cfg.Seeds} // no η: the final runs are planned at once
				if len(a.Eta) > 0 {
					want[SelectID(s.Name, g, a.Name)] = true
					runs = map[float64][]uint64{}
					for _, eta := range a.Eta {
						runs[eta] = cfg.GridSeeds
					}
				}
				for eta, seeds := range runs {
					for _, seed := range seeds {
						want[RunID(s.Name, g, a.Name, eta, seed)] = true
						want[InstanceID(s.Name, g, cfg.InstanceSeed(seed))] = true
						want[BenchmarkID(s.Name, g, cfg.InstanceSeed(seed))] = true
					}
				}
			}
		}
	}
	got := map[string]bool{}
	for _, task := range plan.Tasks {
		got[task.ID] = true
		if !want[task.ID] {
			t.Errorf("the plan holds %s, which no constructor names", task.ID)
		}
	}
	for id := range want {
		if !got[id] {
			t.Errorf("%s is not in the plan", id)
		}
	}
	if id := RunID("d3", "concave", "THV-UCB", 0.01, 2); id != "run/d3/concave/THV-UCB/eta=0.01/seed=2" {
		t.Errorf("RunID: %s", id)
	}
}

// TestProposed: the proposed method is the protocol's first algorithm in
// the paper's order, whatever order params.yaml lists them in.
func TestProposed(t *testing.T) {
	for _, c := range []struct {
		set  []string
		want string
	}{
		{nil, "THV-UCB"},
		{[]string{"algorithms=[{name: RandomK}, {name: ScalarUCB, eta: [0.1]}]"}, "ScalarUCB"},
		{[]string{"algorithms=[{name: RandomK}, {name: ScalarUCB, eta: [0.1]}, {name: THV-UCB, eta: [0.1]}]"}, "THV-UCB"},
	} {
		cfg, err := config.Load(config.LoadOptions{ParamsFile: "testdata/tiny.yaml", Set: c.set})
		if err != nil {
			t.Fatalf("%v: %v", c.set, err)
		}
		if got := cfg.Proposed(); got != c.want {
			t.Errorf("%v: proposed %q, want %q", c.set, got, c.want)
		}
	}
}

// TestCompareTaskNamesItsVocabulary: the protocol gives the compare task
// every registered algorithm and every geometry (also those the protocol
// does not run: a reference may name them, and they are reported
// missing), and the paper's reference parses with them.
func TestCompareTaskNamesItsVocabulary(t *testing.T) {
	v := Vocabulary()
	var registered []string
	for _, s := range algos.All() {
		registered = append(registered, s.Name)
	}
	if !slices.Equal(v.Algorithms, registered) || len(v.Algorithms) != 14 {
		t.Errorf("algorithms %v, want the %d registered ones %v", v.Algorithms, len(registered), registered)
	}
	if len(v.Geometries) != len(envs.Geometries) {
		t.Fatalf("geometries %v, want envs.Geometries %v", v.Geometries, envs.Geometries)
	}
	for i, g := range envs.Geometries {
		if v.Geometries[i] != string(g) {
			t.Errorf("geometry %d: %s, want %s", i, v.Geometries[i], g)
		}
	}
	if _, err := ParseReference(thv.PaperReference); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(config.LoadOptions{ParamsFile: "testdata/tiny.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	plan, err := NewPlan(cfg)
	if err != nil {
		t.Fatal(err)
	}
	task, ok := plan.Task(CompareID)
	if !ok {
		t.Fatal("no compare task")
	}
	b, err := json.Marshal(task.Params)
	if err != nil {
		t.Fatal(err)
	}
	var p compare.Params
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p.Algorithms, v.Algorithms) || !slices.Equal(p.Geometries, v.Geometries) {
		t.Errorf("the compare task's vocabulary is %+v, want %+v", p.Vocabulary, v)
	}
}

// TestInstancesReading: instances.mode fixed makes every seed's runs face
// the instance of instances.seed (one per setting and geometry), per_seed
// (the default, also when the key is absent) one instance per seed, and
// any other mode is an error naming both readings.
func TestInstancesReading(t *testing.T) {
	count := func(set ...string) (instances, runs int) {
		cfg, err := config.Load(config.LoadOptions{ParamsFile: "testdata/tiny.yaml", Set: set})
		if err != nil {
			t.Fatal(err)
		}
		plan, err := NewPlan(cfg)
		if err != nil {
			t.Fatal(err)
		}
		for _, task := range plan.Tasks {
			switch task.Kind {
			case "instance":
				instances++
				if cfg.Instances.Mode == config.InstancesFixed && !strings.HasSuffix(task.ID, "/seed=7") {
					t.Errorf("fixed instances from seed 7, but the plan has %s", task.ID)
				}
			case "run":
				runs++
			}
		}
		return instances, runs
	}
	perSeed, runs := count()
	fixed, fixedRuns := count("instances.mode=fixed", "instances.seed=7")
	cfg, _ := config.Load(config.LoadOptions{ParamsFile: "testdata/tiny.yaml"})
	settings, geometries := len(cfg.Settings), len(cfg.Geometries)
	if fixed != settings*geometries || perSeed <= fixed || runs != fixedRuns {
		t.Fatalf("instances: %d per seed, %d fixed (want %d = settings × geometries); runs %d and %d (want equal)", perSeed, fixed, settings*geometries, runs, fixedRuns)
	}
	// Without the key: per seed.
	b, _ := os.ReadFile("testdata/tiny.yaml")
	noKey := filepath.Join(t.TempDir(), "tiny.yaml")
	os.WriteFile(noKey, []byte(strings.Replace(string(b), "instances: {mode: per_seed, seed: 0}\n", "", 1)), 0o644)
	if cfg, err := config.Load(config.LoadOptions{ParamsFile: noKey}); err != nil || cfg.Instances.Mode != config.InstancesPerSeed {
		t.Fatalf("without instances: %v, mode %q", err, cfg.Instances.Mode)
	}
	_, err := config.Load(config.LoadOptions{ParamsFile: "testdata/tiny.yaml", Set: []string{"instances.mode=shared"}})
	if err == nil || !strings.Contains(err.Error(), `instances.mode = "shared": want per_seed`) {
		t.Fatalf("bad mode: %v", err)
	}
}

// TestPlanWithinItsBound: the plan of the paper's params.yaml and of each
// of its profiles has no more tasks before η* is known than
// Config.PlanBound, which the protocol's ceiling on tasks checks.
func TestPlanWithinItsBound(t *testing.T) {
	for _, profile := range []string{"paper", "quick", "scale"} {
		cfg, err := config.Load(config.LoadOptions{Profile: profile})
		if err != nil {
			t.Fatalf("profile %s: %v", profile, err)
		}
		plan, err := NewPlan(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if n := len(plan.Tasks); n > cfg.PlanBound() {
			t.Errorf("profile %s: %d tasks before η* is known, above the bound %d", profile, n, cfg.PlanBound())
		}
	}
}
