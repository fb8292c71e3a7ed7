package pipeline

import (
	"fmt"

	"sort"
	"strconv"
	"thv/algos"

	"thv/stages"
)

// Task is one node of the DAG: a stage kind applied to canonical parameters
// and the outputs of other tasks.
type Task struct {
	ID      string // stable identity, e.g. "run/d3/concave/THV-UCB/eta=0.01/seed=0"
	Kind    string
	Params  any      // a stages.*Params value, JSON-encoded canonically for the key
	Sources []string // code units it runs (fingerprinted)
	Deps    []Dep

	// A task with Expand waits for Trigger, then Expand receives the
	// trigger's output TriggerOutput and adds the remaining dependencies
	// (collect tasks learn η* from their select task this way, figure tasks
	// which algorithms to draw from the statistics).
	Trigger       *Task
	TriggerOutput string
	Expand        func(p *Plan, trigger []byte) error

	// Labels for display and filtering.
	Setting, Geometry, Algo string

	// Cost estimates the work of the task, in arbitrary units: the
	// scheduler starts expensive tasks first and the progress bar's ETA
	// weighs remaining tasks by it. It does not enter the key.
	Cost float64

	order int // creation order: the deterministic iteration order
}

// Dep feeds output Output of task From to this task under role Name.
type Dep struct {
	Name   string
	From   *Task
	Output string
}

// Plan is the DAG of one protocol. Tasks are kept in creation order.
type Plan struct {
	Config *Config
	Tasks  []*Task
	byID   map[string]*Task
}

func (p *Plan) add(t *Task) *Task {
	if old, ok := p.byID[t.ID]; ok {
		return old // the same task reached twice (a final run already in the grid)
	}
	t.order = len(p.Tasks)
	p.Tasks = append(p.Tasks, t)
	p.byID[t.ID] = t
	return t
}

// Task returns the task with the given ID.
func (p *Plan) Task(id string) (*Task, bool) { t, ok := p.byID[id]; return t, ok }

// NewPlan builds the DAG of cfg: instance → benchmark → runs over the η
// grid → select η* → collect the final runs at η*. The final runs are added
// when η* is known; a final run already run in the grid is the same task.
func NewPlan(cfg *Config) (*Plan, error) {
	p := &Plan{Config: cfg, byID: map[string]*Task{}}
	tables := &Task{ID: "tables", Kind: "tables"}
	var tp stages.TablesParams
	for _, s := range cfg.SortedSettings() {
		sum := &Task{ID: "summarize/" + s.Name, Kind: "summarize", Setting: s.Name}
		for _, g := range cfg.Geometries {
			for _, a := range cfg.SortedAlgorithms() {
				c, err := p.addAlgorithm(s, g, a)
				if err != nil {
					return nil, err
				}
				sum.Deps = append(sum.Deps, Dep{Name: stages.CellInputName(g, a.Name), From: c, Output: "final"})
			}
		}
		sum.Params = stages.SummarizeParams{
			Geometries: cfg.Geometries, Algorithms: algoNames(cfg), Confidence: cfg.Statistics.Confidence,
			Resamples: cfg.Statistics.Resamples, Seed: cfg.Statistics.Seed,
		}
		p.add(sum)
		p.addFigure(s, sum)
		tables.Deps = append(tables.Deps,
			Dep{Name: "cells/" + s.Name, From: sum, Output: "cells"},
			Dep{Name: "tests/" + s.Name, From: sum, Output: "tests"})
		tp.Settings = append(tp.Settings, stages.SettingInfo{Name: s.Name, D: s.D, N: s.N, K: s.K, T: s.T, Sigma: s.Sigma, Seeds: len(cfg.Seeds)})
	}
	tp.Geometries, tp.Confidence = cfg.Geometries, cfg.Statistics.Confidence
	for _, a := range cfg.SortedAlgorithms() {
		spec, _ := algos.Lookup(a.Name)
		tp.Algorithms = append(tp.Algorithms, stages.AlgoInfo{Name: spec.Name, Family: spec.Family, Fidelity: string(spec.Fidelity), Cite: spec.Cite, UsesEta: spec.UsesEta})
	}
	tables.Params = tp
	p.add(tables)
	return p, nil
}

func (p *Plan) instance(s Setting, g string, seed uint64) *Task {
	inst := p.add(&Task{
		ID:      fmt.Sprintf("instance/%s/%s/seed=%d", s.Name, g, seed),
		Kind:    "instance",
		Params:  stages.InstanceParams{Geometry: g, D: s.D, N: s.N, Seed: seed},
		Setting: s.Name, Geometry: g,
	})
	return inst
}

func (p *Plan) benchmark(s Setting, g string, seed uint64) *Task {
	inst := p.instance(s, g, seed)
	return p.add(&Task{
		ID:      fmt.Sprintf("benchmark/%s/%s/seed=%d", s.Name, g, seed),
		Kind:    "benchmark",
		Params:  stages.BenchmarkParams{K: s.K, Reference: p.Config.Reference},
		Deps:    []Dep{{Name: "instance", From: inst, Output: "instance"}},
		Setting: s.Name, Geometry: g,
	})
}

// run returns the task of one bandit run, creating it (and its instance and
// benchmark) if needed.
func (p *Plan) run(s Setting, g string, a AlgoConfig, eta float64, seed uint64) (*Task, error) {
	id := fmt.Sprintf("run/%s/%s/%s/eta=%s/seed=%d", s.Name, g, a.Name, fmtEta(eta), seed)
	if t, ok := p.byID[id]; ok {
		return t, nil
	}
	fam, err := stages.RunSources(a.Name)
	if err != nil {
		return nil, err
	}
	bench := p.benchmark(s, g, seed)
	inst := p.instance(s, g, seed)
	return p.add(&Task{
		ID:   id,
		Kind: "run",
		Params: stages.RunParams{
			Algo: a.Name, Eta: eta, Params: a.Params, K: s.K, T: s.T, Sigma: s.Sigma, Seed: seed,
			MinPulls: p.Config.MinPulls, Reference: p.Config.Reference, Window: p.Config.Metrics.HVWindow,
		},
		Sources: fam,
		Cost:    float64(s.T) * float64(s.N) * float64(s.D) * relativeCost(a.Name),
		Deps: []Dep{
			{Name: "instance", From: inst, Output: "instance"},
			{Name: "benchmark", From: bench, Output: "benchmark"},
		},
		Setting: s.Name, Geometry: g, Algo: a.Name,
	}), nil
}

func algoNames(cfg *Config) []string {
	var names []string
	for _, a := range cfg.SortedAlgorithms() {
		names = append(names, a.Name)
	}
	return names
}

// addAlgorithm adds the grid runs, the η* selection and the collect task of
// one algorithm on one (setting, geometry), and returns the collect task.
func (p *Plan) addAlgorithm(s Setting, g string, a AlgoConfig) (*Task, error) {
	collectID := fmt.Sprintf("collect/%s/%s/%s", s.Name, g, a.Name)
	if len(a.Eta) == 0 { // no η: the final runs are known now
		c := &Task{ID: collectID, Kind: "collect", Setting: s.Name, Geometry: g, Algo: a.Name}
		if err := p.fillCollect(c, s, g, a, 0); err != nil {
			return nil, err
		}
		return p.add(c), nil
	}
	sel := &Task{
		ID:      fmt.Sprintf("select/%s/%s/%s", s.Name, g, a.Name),
		Kind:    "select",
		Params:  stages.SelectParams{Algo: a.Name, Etas: a.Eta, Seeds: p.Config.GridSeeds},
		Setting: s.Name, Geometry: g, Algo: a.Name,
	}
	for _, eta := range a.Eta {
		for _, seed := range p.Config.GridSeeds {
			r, err := p.run(s, g, a, eta, seed)
			if err != nil {
				return nil, err
			}
			sel.Deps = append(sel.Deps, Dep{Name: stages.RunInputName(eta, seed), From: r, Output: "summary"})
		}
	}
	p.add(sel)
	c := &Task{ID: collectID, Kind: "collect", Trigger: sel, TriggerOutput: "selection", Setting: s.Name, Geometry: g, Algo: a.Name}
	c.Expand = func(p *Plan, selection []byte) error {
		eta, err := stages.SelectedEta(selection)
		if err != nil {
			return fmt.Errorf("%s: %w", sel.ID, err)
		}
		return p.fillCollect(c, s, g, a, eta)
	}
	return p.add(c), nil
}

// fillCollect sets the parameters and run dependencies of a collect task.
func (p *Plan) fillCollect(c *Task, s Setting, g string, a AlgoConfig, eta float64) error {
	c.Params = stages.CollectParams{Algo: a.Name, Eta: eta, Seeds: p.Config.Seeds}
	c.Deps = c.Deps[:0]
	for _, seed := range p.Config.Seeds {
		r, err := p.run(s, g, a, eta, seed)
		if err != nil {
			return err
		}
		c.Deps = append(c.Deps, Dep{Name: stages.SeedInputName(seed), From: r, Output: "summary"})
	}
	c.Expand = nil
	return nil
}

// algoCost is the relative cost of one round of each algorithm (measured
// with go test -bench PaperRun ./algos/all/); unknown names cost 1.
var algoCost = map[string]float64{
	"THV-UCB": 8, "ParetoUCB": 4, "ParetoUCB+": 2, "ParetoUCB-Div": 7, "ParetoUCB-Crowd": 4,
	"ParetoTS": 2, "ParetoTS+": 2, "ChebyshevUCB": 1, "ChebyshevUCB+": 1,
	"HVScalarUCB": 0.5, "HVScalarUCB+": 1, "ScalarUCB": 0.3, "ScalarUCB-RandW": 0.3, "RandomK": 0.2,
}

func relativeCost(algo string) float64 {
	if c, ok := algoCost[algo]; ok {
		return c
	}
	return 1
}

func fmtEta(e float64) string { return strconv.FormatFloat(e, 'g', -1, 64) }

// KindOrder is the order of stage kinds along the DAG.
var KindOrder = []string{"instance", "benchmark", "run", "select", "collect", "summarize", "figures", "tables"}

// CountByKind returns how many tasks of each kind the plan has now.
func (p *Plan) CountByKind() map[string]int {
	m := map[string]int{}
	for _, t := range p.Tasks {
		m[t.Kind]++
	}
	return m
}

// sortedDeps returns deps ordered by role name (the key's input order).
func sortedDeps(deps []Dep) []Dep {
	out := append([]Dep(nil), deps...)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
