package protocol

import (
	"encoding/json"
	"slices"
	"testing"

	"thv"
	"thv/algos"
	"thv/envs"
	"thv/stages/compare"
)

// TestIDsNameThePlansTasks: the exported ID constructors name exactly the
// tasks the plan holds before any expansion (computed here from the
// protocol, not from the plan), so a command that finds a task by them
// finds the plan's.
func TestIDsNameThePlansTasks(t *testing.T) {
	cfg, err := LoadConfig(LoadOptions{ParamsFile: "testdata/tiny.yaml"})
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
		cfg, err := LoadConfig(LoadOptions{ParamsFile: "testdata/tiny.yaml", Set: c.set})
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
	cfg, err := LoadConfig(LoadOptions{ParamsFile: "testdata/tiny.yaml"})
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
