package config

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"unicode"

	"thv/algos"
	_ "thv/algos/all" // the registry the protocol is validated against
	"thv/envs"
	"thv/stages/formats"
)

// normalize restores the paper's algorithm names (the registry's spelling),
// fills in the defaults (instances.mode, init_ties, metrics.final_regret,
// the generator's readings) and validates everything a run needs, before
// anything runs.
func (c *Config) normalize() error {
	if len(c.Settings) == 0 {
		return fmt.Errorf("settings: no setting")
	}
	// In the order of the names, so that the same file always gets the
	// same error (map order is random).
	for _, name := range slices.Sorted(maps.Keys(c.Settings)) {
		if err := checkName("settings", name); err != nil {
			return err
		}
		s := c.Settings[name]
		s.Name = name
		key := "settings." + name
		switch {
		case s.D < 2:
			return fmt.Errorf("%s.d = %d: need at least 2 objectives", key, s.D)
		case s.N < 1:
			return fmt.Errorf("%s.n = %d: need at least one arm", key, s.N)
		case s.K < 1 || s.K > s.N:
			return fmt.Errorf("%s.k = %d: slate size must be between 1 and n = %d", key, s.K, s.N)
		}
		if err := CheckSetting(key+".", s); err != nil {
			return err
		}
		switch {
		case s.T < algos.InitRounds(s.N, s.K, max(1, c.MinPulls)):
			return fmt.Errorf("%s.T = %d: shorter than the forced initialisation (%d rounds)", key, s.T, algos.InitRounds(s.N, s.K, max(1, c.MinPulls)))
		case s.T < c.Metrics.HVWindow:
			return fmt.Errorf("%s.T = %d: shorter than metrics.hv_window = %d", key, s.T, c.Metrics.HVWindow)
		}
		c.Settings[name] = s
	}
	for _, name := range slices.Sorted(maps.Keys(c.Profiles)) {
		if err := checkName("profiles", name); err != nil {
			return err
		}
	}
	if len(c.Geometries) == 0 {
		return fmt.Errorf("geometries: empty list")
	}
	for i, g := range c.Geometries {
		if _, err := envs.ParseGeometry(g); err != nil {
			return fmt.Errorf("geometries[%d]: %w", i, err)
		}
		if j := slices.Index(c.Geometries[:i], g); j >= 0 {
			return fmt.Errorf("geometries[%d] = %s: given twice (also geometries[%d]): remove one", i, g, j)
		}
	}
	if err := checkSeeds("seeds", c.Seeds); err != nil {
		return err
	}
	if err := checkSeeds("grid_seeds", c.GridSeeds); err != nil {
		return err
	}
	if n := len(c.Readings.InstanceSeeds); n > MaxSeeds {
		return fmt.Errorf("readings.instance_seeds: %d seeds, above the limit of %d (docs/reliability.md, \"Protocol limits\"): give at most %d", n, MaxSeeds, MaxSeeds)
	}
	for _, s := range c.SortedSettings() {
		if rounds := len(c.Seeds) * s.T; rounds > MaxSeedRounds {
			return fmt.Errorf("settings.%s.T = %d with %d seeds: %d seed-rounds, above the limit of %d on len(seeds)·T (a figures task holds every drawn run's trajectory; docs/reliability.md, \"Protocol limits\"): give fewer seeds or a shorter T",
				s.Name, s.T, len(c.Seeds), rounds, MaxSeedRounds)
		}
	}
	switch c.Instances.Mode {
	case "":
		c.Instances.Mode = InstancesPerSeed
	case InstancesPerSeed, InstancesFixed:
	default:
		return fmt.Errorf("instances.mode = %q: want %s (one instance per seed) or %s (one per setting and geometry, from instances.seed)", c.Instances.Mode, InstancesPerSeed, InstancesFixed)
	}
	for _, r := range []struct {
		key   string
		value *string
		rules []string
	}{
		{"init_ties", &c.InitTies, algos.InitTieRules},
		{"eta_scale", &c.EtaScale, algos.EtaScales},
		{"metrics.regret_rounds", &c.Metrics.RegretRounds, algos.RegretRoundRules},
		{"metrics.benchmark_d3", &c.Metrics.BenchmarkD3, algos.BenchmarkRules},
		{"outputs.trajectories", &c.Outputs.Trajectories, TrajectoryRules},
	} {
		switch {
		case *r.value == "":
			*r.value = r.rules[0]
		case !slices.Contains(r.rules, *r.value):
			return fmt.Errorf("%s = %q: want one of %v", r.key, *r.value, r.rules)
		}
	}
	switch c.Metrics.FinalRegret {
	case "":
		c.Metrics.FinalRegret = formats.RegretMetrics[0]
	default:
		if !slices.Contains(formats.RegretMetrics, c.Metrics.FinalRegret) {
			return fmt.Errorf("metrics.final_regret = %q: want one of %v", c.Metrics.FinalRegret, formats.RegretMetrics)
		}
	}
	if err := c.Readings.check(c); err != nil {
		return err
	}
	reading, err := envs.Reading{Order: c.Instances.Order, ClusterSplit: c.Instances.ClusterSplit, Distractors: c.Instances.Distractors}.Normalize()
	if err != nil {
		return fmt.Errorf("instances.%w", err)
	}
	c.Instances.Order, c.Instances.ClusterSplit, c.Instances.Distractors = reading.Order, reading.ClusterSplit, reading.Distractors
	if math.IsNaN(c.Reference) || math.IsInf(c.Reference, 0) {
		return fmt.Errorf("reference = %v: must be a finite number", c.Reference)
	}
	if c.MinPulls < 1 {
		return fmt.Errorf("min_pulls = %d: must be ≥ 1", c.MinPulls)
	}
	if c.Metrics.HVWindow < 1 {
		return fmt.Errorf("metrics.hv_window = %d: must be ≥ 1", c.Metrics.HVWindow)
	}
	if len(c.Algorithms) == 0 {
		return fmt.Errorf("algorithms: none listed")
	}
	named := make(map[string]AlgoConfig, len(c.Algorithms))
	for i, a := range c.Algorithms {
		key := fmt.Sprintf("%d (%s)", i, a.Name)
		spec, err := algos.Lookup(a.Name)
		if err != nil {
			return fmt.Errorf("algorithms[%s]: %w", key, err)
		}
		if _, dup := named[spec.Name]; dup {
			return fmt.Errorf("algorithms[%s]: %s is listed twice", key, spec.Name)
		}
		if a.MinPulls < 0 {
			return fmt.Errorf("algorithms[%s].min_pulls = %d: must be ≥ 1 (or 0 for the protocol's min_pulls)", key, a.MinPulls)
		}
		for _, s := range c.SortedSettings() {
			if m0 := c.MinPullsOf(a); s.T < algos.InitRounds(s.N, s.K, m0) {
				return fmt.Errorf("algorithms[%s].min_pulls = %d: settings.%s.T = %d is shorter than its forced initialisation (%d rounds)", key, m0, s.Name, s.T, algos.InitRounds(s.N, s.K, m0))
			}
		}
		switch {
		case a.EtaScale == "":
		case !spec.UsesEta:
			return fmt.Errorf("algorithms[%s].eta_scale: %s has no η parameter; remove eta_scale", key, spec.Name)
		case !slices.Contains(algos.EtaScales, a.EtaScale):
			return fmt.Errorf("algorithms[%s].eta_scale = %q: want one of %v (or none: the protocol's eta_scale)", key, a.EtaScale, algos.EtaScales)
		}
		if spec.UsesEta && len(a.Eta) == 0 {
			return fmt.Errorf("algorithms[%s].eta: %s has η: give its grid, e.g. [0.01, 0.1, 0.3, 1.0]", key, spec.Name)
		}
		if !spec.UsesEta && len(a.Eta) > 0 {
			return fmt.Errorf("algorithms[%s].eta: %s has no η parameter; remove the grid", key, spec.Name)
		}
		if len(a.Eta) > MaxEtas {
			return fmt.Errorf("algorithms[%s].eta: %d values, above the limit of %d on an η grid (each value is a run per seed; docs/reliability.md, \"Protocol limits\"): give at most %d", key, len(a.Eta), MaxEtas, MaxEtas)
		}
		for i, e := range a.Eta {
			if !(e > 0) || math.IsInf(e, 1) {
				return fmt.Errorf("algorithms[%s].eta[%d] = %v: η must be finite and > 0", key, i, e)
			}
			if j := slices.Index(a.Eta[:i], e); j >= 0 {
				return fmt.Errorf("algorithms[%s].eta[%d] = %v: given twice (also eta[%d]): remove one", key, i, e, j)
			}
		}
		for _, p := range slices.Sorted(maps.Keys(a.Params)) { // one error, always the same
			x := a.Params[p]
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return fmt.Errorf("algorithms[%s].params.%s = %v: must be a finite number", key, p, x)
			}
			j := slices.IndexFunc(spec.Params, func(q algos.Param) bool { return q.Name == p })
			if j < 0 {
				return fmt.Errorf("algorithms[%s].params.%s: %s has no parameter %q (see thv algos)", key, p, spec.Name, p)
			}
			if err := spec.Params[j].Check(x); err != nil {
				return fmt.Errorf("algorithms[%s].params.%s: %w", key, p, err)
			}
		}
		for _, s := range c.SortedSettings() {
			if err := CheckParams(spec, a.Params, s.D, fmt.Sprintf("algorithms[%s].params", key), "settings."+s.Name); err != nil {
				return err
			}
		}
		a.Name = spec.Name
		c.Algorithms[i] = a
		named[spec.Name] = a
	}
	c.byName = named
	if !(c.Statistics.Confidence > 0 && c.Statistics.Confidence < 1) {
		return fmt.Errorf("statistics.confidence = %v: must be in (0, 1)", c.Statistics.Confidence)
	}
	switch r := c.Statistics.Resamples; {
	case r < 1:
		return fmt.Errorf("statistics.bootstrap_resamples = %d: must be ≥ 1", r)
	case r > MaxResamples:
		return fmt.Errorf("statistics.bootstrap_resamples = %d: above the limit of %d (each paired comparison keeps one mean per resample; docs/reliability.md, \"Protocol limits\"): give at most %d", r, MaxResamples, MaxResamples)
	case r*len(c.Seeds) > MaxResampleDraws:
		return fmt.Errorf("statistics.bootstrap_resamples = %d with %d seeds: %d draws per paired comparison, above the limit of %d on bootstrap_resamples·len(seeds) (docs/reliability.md, \"Protocol limits\"): give fewer resamples or seeds", r, len(c.Seeds), r*len(c.Seeds), MaxResampleDraws)
	}
	switch w := c.Figures.MovingAverage; {
	case w < 1:
		return fmt.Errorf("figures.moving_average = %d: must be ≥ 1", w)
	case w > MaxMovingAverage:
		return fmt.Errorf("figures.moving_average = %d: above the limit of %d (the moving average costs T·w per curve; docs/reliability.md, \"Protocol limits\"): give at most %d", w, MaxMovingAverage, MaxMovingAverage)
	}
	if n := c.PlanBound(); n > MaxTasks {
		return fmt.Errorf("the plan would have up to %d tasks (%d settings × %d geometries × the runs of %d algorithms over %d seeds and %d grid seeds), above the limit of %d (docs/reliability.md, \"Protocol limits\"): give fewer settings, geometries, algorithms, η values or seeds",
			n, len(c.Settings), len(c.Geometries), len(c.Algorithms), len(c.Seeds), len(c.GridSeeds), MaxTasks)
	}
	if c.Outputs.Results == "" {
		return fmt.Errorf("outputs.results: empty path")
	}
	return c.checkExecutors()
}

// checkSeeds refuses an empty list of seeds, more than MaxSeeds, and a seed
// given twice: a seed names its runs, and two inputs of one name would fail
// every task that collects them.
func checkSeeds(key string, seeds []uint64) error {
	switch {
	case len(seeds) == 0:
		return fmt.Errorf("%s: empty list (need at least one seed)", key)
	case len(seeds) > MaxSeeds:
		return fmt.Errorf("%s: %d seeds, above the limit of %d (each seed is a run per setting, geometry, algorithm and η; docs/reliability.md, \"Protocol limits\"): give at most %d", key, len(seeds), MaxSeeds, MaxSeeds)
	}
	at := make(map[uint64]int, len(seeds))
	for i, s := range seeds {
		if j, dup := at[s]; dup {
			return fmt.Errorf("%s[%d] = %d: given twice (also %s[%d]): remove one", key, i, s, key, j)
		}
		at[s] = i
	}
	return nil
}

// A protocol is untrusted input (a bundle's is someone else's): the names
// it gives to settings and profiles become task IDs, file names, Markdown
// headings and table cells and terminal text, so they are checked when it
// is loaded, as reading names are (readingName): letters, digits and
// ". _ + -" only, so that neither a terminal nor a Markdown file ever
// receives a control character or markup from one.

// checkName refuses a name of section that is not of readingName's form.
func checkName(section, name string) error {
	if !readingName().MatchString(name) {
		return fmt.Errorf("%s: the name %s: want lower-case letters, digits, '.', '_', '+', '-', at most 64, starting with a letter or digit (a name becomes a task ID, a file name and text in Markdown and on a terminal)", section, clipN(name, 80))
	}
	return nil
}

// hasControl reports a control character (C0, DEL, C1) or a Unicode
// format character (the bidirectional overrides among them) in s.
func hasControl(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) }) >= 0
}
