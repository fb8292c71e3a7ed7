package protocol

import (
	"fmt"

	"thv"
	"thv/algos"
	"thv/pipeline"
	"thv/protocol/config"
	"thv/stages/benchmark"
	"thv/stages/collect"
	"thv/stages/compare"
	"thv/stages/etaselect"
	"thv/stages/formats"
	"thv/stages/instance"
	"thv/stages/run"
	"thv/stages/stage"
	"thv/stages/summarize"
	"thv/stages/tables"
)

// planner builds the paper's DAG: instance → benchmark → runs over the η
// grid → select η* → collect the final runs at η* → summarize per setting
// → figures per setting, and the tables over all settings.
type planner struct {
	cfg   *config.Config
	plan  *pipeline.Plan
	algos map[string]algoCode // per algorithm, looked up once
}

// algoCode is what a run task needs of the algorithm registry: its cost
// per round and the declaration of its registered constructor, the code
// root beyond the run kind's.
type algoCode struct {
	cost float64
	root string
}

// NewPlan returns the DAG of cfg. The final runs are added when η* is
// known; a final run already run in the grid is the same task.
func NewPlan(cfg *config.Config) (*pipeline.Plan, error) {
	p := &planner{cfg: cfg, plan: pipeline.NewPlan(), algos: map[string]algoCode{}}
	for _, a := range cfg.SortedAlgorithms() {
		spec, err := algos.Lookup(a.Name)
		if err != nil {
			return nil, err
		}
		p.algos[a.Name] = algoCode{cost: spec.Cost, root: pipeline.EntryOf(spec.New)}
	}
	tablesTask := &pipeline.Task{ID: TablesID, Kind: tables.Kind}
	var tp tables.Params
	summaries := map[string]*pipeline.Task{}
	for _, s := range cfg.SortedSettings() {
		sum := &pipeline.Task{ID: SummarizeID(s.Name), Kind: summarize.Kind}
		for _, g := range cfg.Geometries {
			for _, a := range cfg.SortedAlgorithms() {
				c, err := p.addAlgorithm(s, g, a)
				if err != nil {
					return nil, err
				}
				sum.Deps = append(sum.Deps, dep(summarize.CellInputName(g, a.Name), c, collect.Final))
			}
		}
		sum.Params = summarize.Params{
			Geometries: cfg.Geometries, Algorithms: algoNames(cfg), Confidence: cfg.Statistics.Confidence,
			Resamples: cfg.Statistics.Resamples, Seed: cfg.Statistics.Seed,
		}
		p.plan.Add(sum)
		summaries[s.Name] = sum
		p.addFigure(s, sum)
		tablesTask.Deps = append(tablesTask.Deps,
			dep(tables.CellsInputName(s.Name), sum, summarize.Cells),
			dep(tables.TestsInputName(s.Name), sum, summarize.Tests))
		tp.Settings = append(tp.Settings, settingInfo(s, cfg))
	}
	tp.Geometries, tp.Confidence, tp.HVWindow = cfg.Geometries, cfg.Statistics.Confidence, cfg.Metrics.HVWindow
	for _, a := range cfg.SortedAlgorithms() {
		spec, _ := algos.Lookup(a.Name)
		tp.Algorithms = append(tp.Algorithms, tables.AlgoInfo{Name: spec.Name, Family: spec.Family, Fidelity: string(spec.Fidelity), Cite: spec.Cite, UsesEta: spec.UsesEta})
	}
	tablesTask.Params = tp
	p.plan.Add(tablesTask)
	if err := p.addCompare(thv.PaperReference, summaries); err != nil {
		return nil, err
	}
	return p.plan, nil
}

// addCompare adds the comparison with a paper's published values: the
// cells of every setting (the claims are about all of them) and the
// per-seed summaries of every reference cell the protocol has; the others
// are reported missing.
func (p *planner) addCompare(reference []byte, summaries map[string]*pipeline.Task) error {
	vocabulary := Vocabulary()
	ref, err := compare.ParseReference(reference, vocabulary)
	if err != nil {
		return err
	}
	t := &pipeline.Task{ID: CompareID, Kind: compare.Kind}
	proto, err := p.cfg.Describe()
	if err != nil {
		return err
	}
	params := compare.Params{Reference: *ref, Vocabulary: vocabulary, FinalRegret: p.cfg.Metrics.FinalRegret, OneInstance: p.cfg.Instances.Mode == config.InstancesFixed, Protocol: proto}
	for _, s := range p.cfg.SortedSettings() {
		params.Settings = append(params.Settings, s.Name)
		t.Deps = append(t.Deps, dep(compare.CellsInputName(s.Name), summaries[s.Name], summarize.Cells))
	}
	for _, c := range ref.Rows {
		if from, ok := p.plan.Task(CollectID(c.Setting, c.Geometry, c.Algorithm)); ok {
			t.Deps = append(t.Deps, dep(compare.FinalInputName(c.Setting, c.Geometry, c.Algorithm), from, collect.Final))
		}
	}
	t.Params = params
	p.plan.Add(t)
	return nil
}

// dep is the input of role (a member of a role a kind declares) from
// output out of task from, typed so that a role cannot stand for an
// output: CheckPlan checks both against the kinds' declarations.
func dep(role string, from *pipeline.Task, out stage.OutputName) pipeline.Dep {
	return pipeline.Dep{Name: role, From: from, Output: string(out)}
}

func settingInfo(s config.Setting, cfg *config.Config) formats.Setting {
	return formats.Setting{Name: s.Name, D: s.D, N: s.N, K: s.K, T: s.T, Sigma: s.Sigma, Seeds: len(cfg.Seeds)}
}

func (p *planner) instance(s config.Setting, g string, seed uint64) *pipeline.Task {
	id := InstanceID(s.Name, g, seed)
	if t, ok := p.plan.Task(id); ok {
		return t
	}
	return p.plan.Add(&pipeline.Task{
		ID:     id,
		Kind:   instance.Kind,
		Params: instance.Params{Geometry: g, D: s.D, N: s.N, Seed: seed, Reading: p.cfg.InstanceReading(g)},
	})
}

func (p *planner) benchmark(s config.Setting, g string, seed uint64) *pipeline.Task {
	id := BenchmarkID(s.Name, g, seed)
	if t, ok := p.plan.Task(id); ok {
		return t
	}
	inst := p.instance(s, g, seed)
	return p.plan.Add(&pipeline.Task{
		ID:     id,
		Kind:   benchmark.Kind,
		Params: benchmark.Params{K: s.K, Reference: p.cfg.Reference},
		Deps:   []pipeline.Dep{dep(string(benchmark.InstanceRole), inst, instance.Instance)},
	})
}

// run returns the task of one bandit run, creating it (and its instance and
// benchmark) if needed. Its code is what the run kind's and its
// algorithm's registered constructor can reach. It keeps its trajectory
// only with outputs.trajectories = all.
func (p *planner) run(s config.Setting, g string, a config.AlgoConfig, eta float64, seed uint64) (*pipeline.Task, error) {
	return p.runTask(RunID(s.Name, g, a.Name, eta, seed), s, g, a, eta, seed, p.cfg.Outputs.Trajectories == config.TrajectoriesAll)
}

// figureRun returns the run whose trajectory a figure draws: with
// outputs.trajectories = figures, a task of its own beside the run, the
// same run keeping its trajectory (FigureRunID: its parameters say so, so
// its key is another); with all, the run itself.
func (p *planner) figureRun(s config.Setting, g string, a config.AlgoConfig, eta float64, seed uint64) (*pipeline.Task, error) {
	if p.cfg.Outputs.Trajectories == config.TrajectoriesAll {
		return p.run(s, g, a, eta, seed)
	}
	return p.runTask(FigureRunID(s.Name, g, a.Name, eta, seed), s, g, a, eta, seed, true)
}

// runTask returns the run task id, keeping its trajectory or not.
func (p *planner) runTask(id string, s config.Setting, g string, a config.AlgoConfig, eta float64, seed uint64, trajectory bool) (*pipeline.Task, error) {
	if t, ok := p.plan.Task(id); ok {
		return t, nil
	}
	code, ok := p.algos[a.Name]
	if !ok {
		return nil, fmt.Errorf("algorithm %q is not in the protocol", a.Name)
	}
	bench := p.benchmark(s, g, p.cfg.InstanceSeed(seed))
	inst := p.instance(s, g, p.cfg.InstanceSeed(seed))
	return p.plan.Add(&pipeline.Task{
		ID:   id,
		Kind: run.Kind,
		Params: run.Params{
			Algo: a.Name, Eta: eta, Params: a.Params, K: s.K, T: s.T, Sigma: s.Sigma, Seed: seed,
			MinPulls: p.cfg.MinPullsOf(a), InitTies: p.cfg.InitTies, Reference: p.cfg.Reference, Window: p.cfg.Metrics.HVWindow,
			RegretRounds: nonDefault(p.cfg.Metrics.RegretRounds, algos.RegretRoundRules),
			BenchmarkD3:  benchmarkD3(s, p.cfg.Metrics.BenchmarkD3),
			EtaScale:     etaScale(a, p.cfg.EtaScaleOf(a)),
			Trajectory:   trajectory,
		},
		Roots: []string{code.root},
		Cost:  float64(s.T) * float64(s.N) * float64(s.D) * code.cost,
		Deps: []pipeline.Dep{
			dep(string(run.InstanceRole), inst, instance.Instance),
			dep(string(run.BenchmarkRole), bench, benchmark.Benchmarks),
		},
	}), nil
}

// nonDefault is value, or "" if it is the default reading (rules[0]): a
// reading added later enters no key of the runs that do not take it.
func nonDefault(value string, rules []string) string {
	if value == rules[0] {
		return ""
	}
	return value
}

// benchmarkD3 is the d ≥ 3 benchmark reading of a run of setting s: none
// at d = 2, where V* is the benchmark, so that the reading reruns no d = 2
// run.
func benchmarkD3(s config.Setting, value string) string {
	if s.D < 3 {
		return ""
	}
	return nonDefault(value, algos.BenchmarkRules)
}

// etaScale is the η reading of a run of algorithm a: none for an
// algorithm without η, whose runs it cannot change.
func etaScale(a config.AlgoConfig, value string) string {
	if len(a.Eta) == 0 {
		return ""
	}
	return nonDefault(value, algos.EtaScales)
}

func algoNames(cfg *config.Config) []string {
	var names []string
	for _, a := range cfg.SortedAlgorithms() {
		names = append(names, a.Name)
	}
	return names
}

// addAlgorithm adds the grid runs, the η* selection and the collect task of
// one algorithm on one (setting, geometry), and returns the collect task.
func (p *planner) addAlgorithm(s config.Setting, g string, a config.AlgoConfig) (*pipeline.Task, error) {
	collectID := CollectID(s.Name, g, a.Name)
	if len(a.Eta) == 0 { // no η: the final runs are known now
		c := &pipeline.Task{ID: collectID, Kind: collect.Kind}
		if err := p.fillCollect(c, s, g, a, 0); err != nil {
			return nil, err
		}
		return p.plan.Add(c), nil
	}
	sel := &pipeline.Task{
		ID:     SelectID(s.Name, g, a.Name),
		Kind:   etaselect.Kind,
		Params: etaselect.Params{Algo: a.Name, Etas: a.Eta, Seeds: p.cfg.GridSeeds},
	}
	for _, eta := range a.Eta {
		for _, seed := range p.cfg.GridSeeds {
			r, err := p.run(s, g, a, eta, seed)
			if err != nil {
				return nil, err
			}
			sel.Deps = append(sel.Deps, dep(etaselect.RunInputName(eta, seed), r, run.Summary))
		}
	}
	p.plan.Add(sel)
	c := &pipeline.Task{ID: collectID, Kind: collect.Kind, Trigger: sel, TriggerOutput: string(etaselect.Selection)}
	c.Expand = func(_ *pipeline.Plan, selection []byte) error {
		eta, err := etaselect.SelectedEta(selection)
		if err != nil {
			return fmt.Errorf("reading η* from %s: %w", sel.ID, err)
		}
		return p.fillCollect(c, s, g, a, eta)
	}
	return p.plan.Add(c), nil
}

// fillCollect sets the parameters and run dependencies of a collect task.
func (p *planner) fillCollect(c *pipeline.Task, s config.Setting, g string, a config.AlgoConfig, eta float64) error {
	c.Params = collect.Params{Algo: a.Name, Eta: eta, Seeds: p.cfg.Seeds}
	c.Deps = c.Deps[:0]
	for _, seed := range p.cfg.Seeds {
		r, err := p.run(s, g, a, eta, seed)
		if err != nil {
			return err
		}
		c.Deps = append(c.Deps, dep(collect.SeedInputName(seed), r, run.Summary))
	}
	return nil
}
