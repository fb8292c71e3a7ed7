package config

import (
	"fmt"
	"math"
	"strings"

	"thv/algos"
)

// Limits on what Load reads, checked on the YAML node tree before viper
// sees anything: a params file, a --set value or a THV_* variable larger
// or deeper than this is refused.
const (
	MaxParamsBytes = 1 << 20 // bytes of a params file (1 MiB)
	MaxParamsDepth = 32      // nesting levels: the top-level mapping is level 1
	// maxParamsValues bounds the values once YAML aliases are expanded
	// (an alias bomb fits in a few hundred bytes).
	maxParamsValues = 1 << 18
	// maxKeyBytes bounds a key, so that an error naming a key stays short.
	maxKeyBytes = 100
	// maxParamsKeys and maxKeyDepth bound viper's keys, the paths of
	// mapping keys to a value (settings.d3.T is 3 levels deep): viper's
	// work grows with their number times the square of their depth, to
	// about half a second at these limits (TestViperKeyLimits).
	maxParamsKeys = 1 << 14
	maxKeyDepth   = 16
)

const sizeLimit = "1 MiB (1048576 bytes)"

// maxInt bounds every integer parameter, so that no product of two of
// them (n·min_pulls, …) can overflow.
const maxInt = math.MaxInt32

// The protocol's ceilings: how much work a protocol may ask for. A
// params.yaml, a profile, a THV_* variable or --set is checked against them
// when it is loaded (normalize), and thv run's flags against the same
// values, so that a protocol (or a bundle's) cannot make its verifier
// allocate or compute without end. They are generous beyond the paper
// (d ≤ 5, n ≤ 150, k ≤ 6, T ≤ 5000, 10 seeds, 4 η values) and measured so
// that one task stays far below 2 GiB and within minutes (docs/reliability.md,
// "Protocol limits", has the table and the measurements).
const (
	// MaxD bounds d: the hypervolume's cost grows exponentially with d.
	MaxD = 10
	// MaxN bounds n: the exact benchmark V* is a branch and bound over the
	// front (0.35·n arms); at n = 200, k = 8, d = 2 it takes about a minute.
	MaxN = 200
	// MaxK bounds k: the benchmark's search and every round's slate
	// selection grow steeply with k (k = 10 takes minutes where 8 takes
	// seconds).
	MaxK = 8
	// MaxT bounds T: a run's time and its trajectory grow with T.
	MaxT = 100_000
	// MaxSigma bounds σ: the means lie in [0, 1]; noise ten times their
	// range is no experiment (the paper's largest σ is 0.05).
	MaxSigma = 10.0
	// MaxSeeds bounds seeds, grid_seeds and readings.instance_seeds: each
	// seed is a run per (setting, geometry, algorithm, η).
	MaxSeeds = 1000
	// MaxSeedRounds bounds len(seeds)·T of every setting: a figures task
	// holds the trajectories of its drawn runs, 28 curves of seeds × T
	// values (about 0.9 GB at 10⁶).
	MaxSeedRounds = 500_000
	// MaxEtas bounds the η grid of one algorithm.
	MaxEtas = 16
	// MaxResamples bounds statistics.bootstrap_resamples: each paired
	// comparison keeps one mean per resample.
	MaxResamples = 1_000_000
	// MaxResampleDraws bounds bootstrap_resamples·len(seeds), the draws of
	// one paired comparison (a setting makes one per baseline and geometry).
	MaxResampleDraws = 10_000_000
	// MaxMovingAverage bounds figures.moving_average: the moving average
	// costs T·w per curve.
	MaxMovingAverage = 1000
	// MaxTasks bounds the tasks of the plan (an upper bound counting every
	// final run apart from the grid's): the plan, the lock and the store's
	// index grow with it, about 2 KB of memory per task.
	MaxTasks = 250_000
)

// Ceiling is the largest value of one quantity of the protocol, for its
// errors: what it bounds and why.
type Ceiling struct {
	Max  int
	What string // "the horizon T"
	Why  string // "a run's time and memory grow with T"
}

// The ceilings of a setting's integers, shared by params.yaml and thv run.
var (
	CeilingD = Ceiling{MaxD, "the number of objectives d", "the hypervolume's cost grows exponentially with d"}
	CeilingN = Ceiling{MaxN, "the number of arms n", "the exact benchmark V* searches the front's subsets"}
	CeilingK = Ceiling{MaxK, "the slate size k", "the benchmark's search and each round's slate grow steeply with k"}
	CeilingT = Ceiling{MaxT, "the horizon T", "a run's time and memory grow with T"}
)

// Check refuses v above the ceiling with an error naming key (a params key
// such as settings.d3.T, or a flag such as --T), v, the limit and the fix.
func (c Ceiling) Check(key string, v int) error {
	if v <= c.Max {
		return nil
	}
	return fmt.Errorf("%s: above the limit of %d on %s (%s; docs/reliability.md, \"Protocol limits\"): give at most %d", keyValue(key, v), c.Max, c.What, c.Why, c.Max)
}

// CheckSigma refuses a noise level that is not finite, negative, or above
// MaxSigma, naming key.
func CheckSigma(key string, sigma float64) error {
	switch {
	case !(sigma >= 0) || math.IsInf(sigma, 1):
		return fmt.Errorf("%s: noise level must be finite and ≥ 0", keyValue(key, sigma))
	case sigma > MaxSigma:
		return fmt.Errorf("%s: above the limit of %g on the noise level σ (the means lie in [0, 1]; docs/reliability.md, \"Protocol limits\"): give at most %g", keyValue(key, sigma), MaxSigma, MaxSigma)
	}
	return nil
}

// keyValue is "settings.d3.T = 7" for a params key, "--T 7" for a flag.
func keyValue(key string, v any) string {
	if strings.HasPrefix(key, "--") {
		return fmt.Sprintf("%s %v", key, v)
	}
	return fmt.Sprintf("%s = %v", key, v)
}

// CheckSetting checks a setting against the ceilings; prefix names its
// keys ("settings.d3.").
func CheckSetting(prefix string, s Setting) error {
	for _, c := range []struct {
		key string
		v   int
		c   Ceiling
	}{{"d", s.D, CeilingD}, {"n", s.N, CeilingN}, {"k", s.K, CeilingK}, {"T", s.T, CeilingT}} {
		if err := c.c.Check(prefix+c.key, c.v); err != nil {
			return err
		}
	}
	return CheckSigma(prefix+"sigma", s.Sigma)
}

// CheckParams checks an algorithm's params against what its spec can
// build at d objectives (algos.Spec.Limit: ChebyshevUCB's lattice). key
// names the params ("algorithms[7 (ChebyshevUCB)].params"), at names the
// setting ("settings.d5", or "--d").
func CheckParams(spec algos.Spec, params map[string]float64, d int, key, at string) error {
	if spec.Limit == nil {
		return nil
	}
	if err := spec.Limit(params, d, at); err != nil {
		return fmt.Errorf("%s.%w", key, err)
	}
	return nil
}

// PlanBound is an upper bound on the tasks of cfg's plan (NewPlan): final
// runs are counted apart from the grid's even where they are the same
// task, since η* is not known before the grid has run.
func (c *Config) PlanBound() int {
	instances := 1
	if c.Instances.Mode != InstancesFixed {
		seen := map[uint64]bool{}
		for _, s := range append(append([]uint64(nil), c.Seeds...), c.GridSeeds...) {
			seen[s] = true
		}
		instances = len(seen)
	}
	perCell := 2 * instances // instance and benchmark tasks
	for _, a := range c.Algorithms {
		perCell += len(a.Eta)*len(c.GridSeeds) + len(c.Seeds) + 1 // grid runs, final runs, collect
		if len(a.Eta) > 0 {
			perCell++ // select
		}
	}
	cells := len(c.Settings) * len(c.Geometries)
	return cells*perCell + 2*len(c.Settings) + 2 // summarize and figures per setting; tables, compare
}
