package config

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"thv"
)

// seedList is "[0, 1, …, n−1]".
func seedList(n int) string {
	s := make([]string, n)
	for i := range s {
		s[i] = fmt.Sprint(i)
	}
	return "[" + strings.Join(s, ", ") + "]"
}

// TestProtocolLimits: every quantity that sizes the protocol's work is
// refused above its ceiling at load, with an error naming the key, the
// value, the limit and the fix; every list whose entries name tasks is
// refused with a repeated entry. Each check answers at once.
func TestProtocolLimits(t *testing.T) {
	tiny := tinyYAML(t)
	d3 := "d3: {d: 3, n: 12, k: 3, T: 120, sigma: 0.035}"
	with := func(old, new string) string {
		if !strings.Contains(tiny, old) {
			t.Fatalf("tiny.yaml has no %q", old)
		}
		return strings.Replace(tiny, old, new, 1)
	}
	const doc = `docs/reliability.md, "Protocol limits"`
	cheb := func(divisions string) string {
		return with("  - {name: RandomK}", "  - {name: RandomK}\n  - {name: ChebyshevUCB, eta: [0.1], params: {divisions: "+divisions+"}}")
	}
	etas := make([]string, MaxEtas+1)
	for i := range etas {
		etas[i] = fmt.Sprintf("0.%02d", i+1)
	}
	for _, c := range []struct {
		name string
		yaml string
		set  []string
		want string // the whole error after "p.yaml (profile paper): "
	}{
		{name: "T 2^31-1", yaml: tiny, set: []string{"settings.d3.T=2147483647"},
			want: "settings.d3.T = 2147483647: above the limit of 100000 on the horizon T (a run's time and memory grow with T; " + doc + "): give at most 100000"},
		{name: "T one above", yaml: tiny, set: []string{"settings.d3.T=100001"},
			want: "settings.d3.T = 100001: above the limit of 100000 on the horizon T (a run's time and memory grow with T; " + doc + "): give at most 100000"},
		{name: "d above", yaml: with(d3, "d3: {d: 11, n: 12, k: 3, T: 120, sigma: 0.035}"),
			want: "settings.d3.d = 11: above the limit of 10 on the number of objectives d (the hypervolume's cost grows exponentially with d; " + doc + "): give at most 10"},
		{name: "n above", yaml: with(d3, "d3: {d: 3, n: 201, k: 3, T: 200, sigma: 0.035}"),
			want: "settings.d3.n = 201: above the limit of 200 on the number of arms n (the exact benchmark V* searches the front's subsets; " + doc + "): give at most 200"},
		{name: "k above", yaml: with(d3, "d3: {d: 3, n: 12, k: 9, T: 120, sigma: 0.035}"),
			want: "settings.d3.k = 9: above the limit of 8 on the slate size k (the benchmark's search and each round's slate grow steeply with k; " + doc + "): give at most 8"},
		{name: "sigma above", yaml: tiny, set: []string{"settings.d2.sigma=10.5"},
			want: "settings.d2.sigma = 10.5: above the limit of 10 on the noise level σ (the means lie in [0, 1]; " + doc + "): give at most 10"},
		{name: "seeds repeated", yaml: tiny, set: []string{"seeds=[0, 0]"},
			want: "seeds[1] = 0: given twice (also seeds[0]): remove one"},
		{name: "grid seeds repeated", yaml: with("grid_seeds: [0, 1]", "grid_seeds: [3, 1, 3]"),
			want: "grid_seeds[2] = 3: given twice (also grid_seeds[0]): remove one"},
		{name: "too many seeds", yaml: with("seeds: [0, 1]", "seeds: "+seedList(MaxSeeds+1)),
			want: "seeds: 1001 seeds, above the limit of 1000 (each seed is a run per setting, geometry, algorithm and η; " + doc + "): give at most 1000"},
		{name: "too many grid seeds", yaml: with("grid_seeds: [0, 1]", "grid_seeds: "+seedList(MaxSeeds+1)),
			want: "grid_seeds: 1001 seeds, above the limit of 1000 (each seed is a run per setting, geometry, algorithm and η; " + doc + "): give at most 1000"},
		{name: "too many instance seeds", yaml: tiny + "readings: {instance_seeds: " + seedList(MaxSeeds+1) + "}\n",
			want: "readings.instance_seeds: 1001 seeds, above the limit of 1000 (" + doc + "): give at most 1000"},
		{name: "seeds × T", yaml: tiny, set: []string{"settings.d3.T=100000", "seeds=[0, 1, 2, 3, 4, 5]"},
			want: "settings.d3.T = 100000 with 6 seeds: 600000 seed-rounds, above the limit of 500000 on len(seeds)·T (a figures task holds every drawn run's trajectory; " + doc + "): give fewer seeds or a shorter T"},
		{name: "geometry repeated", yaml: with("geometries: [concave, linear]", "geometries: [concave, linear, concave]"),
			want: "geometries[2] = concave: given twice (also geometries[0]): remove one"},
		{name: "η repeated", yaml: with("{name: ScalarUCB, eta: [0.1, 1.0]}", "{name: ScalarUCB, eta: [0.1, 1.0, 1]}"),
			want: "algorithms[1 (ScalarUCB)].eta[2] = 1: given twice (also eta[1]): remove one"},
		{name: "η grid too long", yaml: with("{name: ScalarUCB, eta: [0.1, 1.0]}", "{name: ScalarUCB, eta: ["+strings.Join(etas, ", ")+"]}"),
			want: "algorithms[1 (ScalarUCB)].eta: 17 values, above the limit of 16 on an η grid (each value is a run per seed; " + doc + "): give at most 16"},
		{name: "algorithm repeated", yaml: with("  - {name: RandomK}", "  - {name: RandomK}\n  - {name: RandomK}"),
			want: "algorithms[3 (RandomK)]: RandomK is listed twice"},
		{name: "lattice too large", yaml: cheb("1000"),
			want: "algorithms[3 (ChebyshevUCB)].params.divisions = 1000: C(H+d−1, d−1) weight vectors with d = 3 (settings.d3) are more than 100000, the limit on ChebyshevUCB's lattice (" + doc + "): give fewer divisions"},
		{name: "lattice 1e300", yaml: cheb("1e300"),
			want: "algorithms[3 (ChebyshevUCB)].params.divisions = 1e+300: C(H+d−1, d−1) weight vectors with d = 2 (settings.d2) are more than 100000, the limit on ChebyshevUCB's lattice (" + doc + "): give fewer divisions"},
		{name: "resamples above", yaml: with("bootstrap_resamples: 1000", "bootstrap_resamples: 2000000"),
			want: "statistics.bootstrap_resamples = 2000000: above the limit of 1000000 (each paired comparison keeps one mean per resample; " + doc + "): give at most 1000000"},
		{name: "resamples × seeds", yaml: with("bootstrap_resamples: 1000", "bootstrap_resamples: 1000000"), set: []string{"seeds=" + seedList(11)},
			want: "statistics.bootstrap_resamples = 1000000 with 11 seeds: 11000000 draws per paired comparison, above the limit of 10000000 on bootstrap_resamples·len(seeds) (" + doc + "): give fewer resamples or seeds"},
		{name: "moving average above", yaml: with("moving_average: 50", "moving_average: 1001"),
			want: "figures.moving_average = 1001: above the limit of 1000 (the moving average costs T·w per curve; " + doc + "): give at most 1000"},
		{name: "plan too large", yaml: with("grid_seeds: [0, 1]", "grid_seeds: "+seedList(MaxSeeds)),
			set: []string{
				"algorithms.0.eta=[" + strings.Join(etas[:MaxEtas], ", ") + "]",
				"algorithms.1.eta=[" + strings.Join(etas[:MaxEtas], ", ") + "]",
				"settings={d4: {d: 4, n: 12, k: 3, T: 120, sigma: 0.1}, d5: {d: 5, n: 12, k: 3, T: 120, sigma: 0.1}}",
			},
			want: "the plan would have up to 272098 tasks (4 settings × 2 geometries × the runs of 3 algorithms over 2 seeds and 1000 grid seeds), above the limit of 250000 (" + doc + "): give fewer settings, geometries, algorithms, η values or seeds"},
	} {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			_, err := loadConfig([]byte(c.yaml), "p.yaml", LoadOptions{Set: c.set}, noEnv)
			if d := time.Since(start); d > 10*time.Second { // generous: the machine may be busy
				t.Errorf("took %v", d)
			}
			if err == nil {
				t.Fatalf("accepted; want %q", c.want)
			}
			if msg := strings.TrimPrefix(err.Error(), "p.yaml (profile paper): "); msg != c.want {
				t.Errorf("error\n %q\nwant\n %q", msg, c.want)
			}
		})
	}
}

// TestProtocolAtTheLimits: a protocol at every ceiling loads, and so do
// the paper's params.yaml and each of its profiles, which stay well below.
func TestProtocolAtTheLimits(t *testing.T) {
	tiny := tinyYAML(t)
	at := strings.Replace(tiny, "d3: {d: 3, n: 12, k: 3, T: 120, sigma: 0.035}",
		fmt.Sprintf("d3: {d: %d, n: %d, k: %d, T: %d, sigma: %g}", MaxD, MaxN, MaxK, MaxT, MaxSigma), 1)
	at = strings.Replace(at, "  - {name: RandomK}", "  - {name: RandomK}\n  - {name: ChebyshevUCB, eta: [0.1], params: {divisions: 10}}", 1)
	set := []string{"seeds=[0, 1, 2, 3, 4]", "figures.moving_average=1000", "statistics.bootstrap_resamples=1000000", "grid_seeds=" + seedList(MaxSeeds)}
	cfg, err := loadConfig([]byte(at), "p.yaml", LoadOptions{Set: set}, noEnv)
	if err != nil {
		t.Fatalf("a protocol at the ceilings: %v", err)
	}
	if s := cfg.Settings["d3"]; s.T*len(cfg.Seeds) != MaxSeedRounds || s.N != MaxN || s.K != MaxK {
		t.Errorf("d3 = %+v with %d seeds", s, len(cfg.Seeds))
	}
	for _, profile := range []string{"paper", "quick", "scale"} {
		cfg, err := loadConfig(thv.DefaultParams, "params.yaml", LoadOptions{Profile: profile}, noEnv)
		if err != nil {
			t.Fatalf("profile %s: %v", profile, err)
		}
		if n := cfg.PlanBound(); n > MaxTasks/2 {
			t.Errorf("profile %s: a plan of up to %d tasks is near the limit of %d", profile, n, MaxTasks)
		}
	}
}
