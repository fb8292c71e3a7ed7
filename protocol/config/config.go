package config

import (
	"sort"

	"thv/algos"
	"thv/envs"
)

// Setting is one of the paper's experimental settings.
type Setting struct {
	Name  string  // the key of its mapping under settings
	D     int     `mapstructure:"d"`
	N     int     `mapstructure:"n"`
	K     int     `mapstructure:"k"`
	T     int     `mapstructure:"T"`
	Sigma float64 `mapstructure:"sigma"`
}

// AlgoConfig is the protocol of one algorithm.
type AlgoConfig struct {
	Name   string             `mapstructure:"name"` // as the paper prints it
	Eta    []float64          `mapstructure:"eta"`
	Params map[string]float64 `mapstructure:"params"`
	// MinPulls is this algorithm's own m0, a reading (docs/fidelity.md);
	// 0: the protocol's min_pulls, shared by all algorithms.
	MinPulls int `mapstructure:"min_pulls"`
	// EtaScale is how η enters this algorithm's confidence radius
	// (algos.EtaScales); "": the protocol's eta_scale.
	EtaScale string `mapstructure:"eta_scale"`
}

// Config is the validated experiment protocol.
type Config struct {
	Profile    string             // the profile it was loaded with
	Settings   map[string]Setting `mapstructure:"settings"`
	Geometries []string           `mapstructure:"geometries"`
	Seeds      []uint64           `mapstructure:"seeds"`
	GridSeeds  []uint64           `mapstructure:"grid_seeds"`
	// Instances is a reading of the paper's protocol (docs/fidelity.md):
	// per_seed draws one instance per (setting, geometry, seed); fixed
	// draws one per (setting, geometry), from Seed, and the run seeds vary
	// only the noise.
	// Order, ClusterSplit and Distractors are the generator's readings
	// (envs.Reading).
	Instances struct {
		Mode         string `mapstructure:"mode"`
		Seed         uint64 `mapstructure:"seed"`
		Order        string `mapstructure:"order"`
		ClusterSplit string `mapstructure:"clusters_split"`
		Distractors  string `mapstructure:"distractors"`
	} `mapstructure:"instances"`
	MinPulls int `mapstructure:"min_pulls"`
	// InitTies is how the forced initialisation breaks ties
	// (algos.InitTieRules): lowest_index, random or numpy_argsort.
	InitTies string `mapstructure:"init_ties"`
	// EtaScale is how η enters the confidence radii (algos.EtaScales):
	// variance (inside the root, as printed) or radius (multiplying it);
	// an algorithm may have its own (AlgoConfig.EtaScale).
	EtaScale  string  `mapstructure:"eta_scale"`
	Reference float64 `mapstructure:"reference"`
	Metrics   struct {
		HVWindow int `mapstructure:"hv_window"`
		// FinalRegret is which of our regrets the paper's "Final Regret"
		// column is compared with (docs/compare.md): regret_alpha_pos,
		// regret_alpha or regret_exact.
		FinalRegret string `mapstructure:"final_regret"`
		// RegretRounds and BenchmarkD3 are readings of how the α-regret
		// is counted (algos.RegretRoundRules, algos.BenchmarkRules).
		RegretRounds string `mapstructure:"regret_rounds"`
		BenchmarkD3  string `mapstructure:"benchmark_d3"`
	} `mapstructure:"metrics"`
	Algorithms []AlgoConfig `mapstructure:"algorithms"`
	Statistics struct {
		Confidence float64 `mapstructure:"confidence"`
		Resamples  int     `mapstructure:"bootstrap_resamples"`
		Seed       uint64  `mapstructure:"bootstrap_seed"`
	} `mapstructure:"statistics"`
	Figures struct {
		MovingAverage int `mapstructure:"moving_average"`
	} `mapstructure:"figures"`
	Outputs struct {
		Results string `mapstructure:"results"`
		// Trajectories is which runs keep their per-round trajectory:
		// TrajectoriesFigures (the default), or TrajectoriesAll.
		Trajectories string `mapstructure:"trajectories"`
	} `mapstructure:"outputs"`
	// Readings is the readings sweep (thv readings): the paper's open
	// readings, each run as its own protocol. It enters no key.
	Readings Readings       `mapstructure:"readings"`
	Profiles map[string]any `mapstructure:"profiles"`
	// Executors holds the settings of the executors that take some
	// (executors.slurm: docs/cluster.md), undecoded: each executor decodes
	// its own section (RegisterExecutor). They say where tasks run, never
	// what they compute, so no plan or task key reads them.
	Executors map[string]map[string]any `mapstructure:"executors"`

	byName map[string]AlgoConfig
}

// The values of outputs.trajectories: which runs keep their per-round
// trajectory (HV(S_t) for t = 1..T), which only figures read.
const (
	// TrajectoriesFigures: only the runs a figure draws, each a task of its
	// own (FigureRunID) beside the run whose summary the statistics read.
	TrajectoriesFigures = "figures"
	// TrajectoriesAll: every run, as it runs (the figures read those).
	TrajectoriesAll = "all"
)

// TrajectoryRules lists the values of outputs.trajectories, the default
// first.
var TrajectoryRules = []string{TrajectoriesFigures, TrajectoriesAll}

// The readings of instances.mode.
const (
	InstancesPerSeed = "per_seed"
	InstancesFixed   = "fixed"
)

// EtaScaleOf is how η enters algorithm a's radius: its own reading, else
// the protocol's.
func (c *Config) EtaScaleOf(a AlgoConfig) string {
	if a.EtaScale != "" {
		return a.EtaScale
	}
	return c.EtaScale
}

// MinPullsOf is the m0 of algorithm a: its own, else the protocol's.
func (c *Config) MinPullsOf(a AlgoConfig) int {
	if a.MinPulls > 0 {
		return a.MinPulls
	}
	return c.MinPulls
}

// InstanceSeed is the seed of the instance a run of seed faces.
func (c *Config) InstanceSeed(seed uint64) uint64 {
	if c.Instances.Mode == InstancesFixed {
		return c.Instances.Seed
	}
	return seed
}

// InstanceReading is the generator's reading for geometry g: the fields
// that matter for g, so that a reading of another geometry's generator
// enters no key of g's instances.
func (c *Config) InstanceReading(g string) envs.Reading {
	r := envs.Reading{Order: c.Instances.Order, Distractors: c.Instances.Distractors}
	if g == string(envs.Clusters) {
		r.ClusterSplit = c.Instances.ClusterSplit
	}
	return r
}

// Algorithm returns the protocol of the named algorithm.
func (c *Config) Algorithm(name string) (AlgoConfig, bool) {
	a, ok := c.byName[name]
	return a, ok
}

// SettingFor returns the setting with d objectives.
func (c *Config) SettingFor(d int) (Setting, bool) {
	for _, s := range c.SortedSettings() {
		if s.D == d {
			return s, true
		}
	}
	return Setting{}, false
}

// SortedSettings returns the settings by increasing d, then name.
func (c *Config) SortedSettings() []Setting {
	out := make([]Setting, 0, len(c.Settings))
	for _, s := range c.Settings {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].D != out[j].D {
			return out[i].D < out[j].D
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// SortedAlgorithms returns the configured algorithms in the registry's
// order (algos.All): the paper's in the order of its tables, then any
// other by name.
func (c *Config) SortedAlgorithms() []AlgoConfig {
	var out []AlgoConfig
	for _, s := range algos.All() {
		if a, ok := c.byName[s.Name]; ok {
			out = append(out, a)
		}
	}
	return out
}

// Proposed is the name of the proposed method: the first of the
// protocol's algorithms in SortedAlgorithms' order, the paper's first (the
// statistics, tables and figures compare it with the others); "" if there
// is none.
func (c *Config) Proposed() string {
	if a := c.SortedAlgorithms(); len(a) > 0 {
		return a[0].Name
	}
	return ""
}
