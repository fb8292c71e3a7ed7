package protocol

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"thv"
	"thv/algos"
	"thv/stages/compare"
	"thv/stages/formats"
)

// TestDescribe: the paper's protocol is named so; another names the
// values that differ (a list of seeds by its length, a missing setting as
// one), the precision fewer seeds give, and the published values it
// cannot reproduce: a setting's d, n, k, T or σ, the reference point, the
// HV window; the readings sweep's keys and the readings of the paper's
// open points leave every value comparable. The paper's protocol is the
// embedded params.yaml whatever the environment says.
func TestDescribe(t *testing.T) {
	describe := func(opt LoadOptions) compare.Protocol {
		t.Helper()
		cfg, err := LoadConfig(opt)
		if err != nil {
			t.Fatal(err)
		}
		d, err := cfg.Describe()
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	if d := describe(LoadOptions{}); !d.IsPaper() || d.Name() != "the paper's protocol" {
		t.Errorf("the paper's: %+v", d)
	}
	quick := describe(LoadOptions{Profile: "quick"})
	want := "a modified protocol: grid_seeds 3 (paper 10), seeds 3 (paper 10), settings.d2.T 300 (paper 2000), settings.d3.T 300 (paper 3000), settings.d4.T 300 (paper 5000), settings.d5.T 300 (paper 5000)"
	if quick.Name() != want || quick.Seeds != 3 || quick.PaperSeeds != 10 {
		t.Errorf("quick: %q (seeds %d of %d)\nwant %q", quick.Name(), quick.Seeds, quick.PaperSeeds, want)
	}
	if got := quick.Incomparability(); got != "T 300 vs 2000 (d2), T 300 vs 3000 (d3), T 300 vs 5000 (d4), T 300 vs 5000 (d5)" {
		t.Errorf("quick's incomparability: %s", got)
	}
	if r := quick.Reason("d3", compare.MetricHV); r != "T 300 vs 3000" {
		t.Errorf("quick, d3: %q", r)
	}
	for _, c := range []struct {
		set                   []string
		name, reason, setting string
	}{
		{[]string{"seeds=[0, 1, 2]"}, "a modified protocol: seeds 3 (paper 10)", "", ""},
		{[]string{"seeds=[10, 11, 12, 13, 14, 15, 16, 17, 18, 19]"}, "a modified protocol: seeds [10 … 19] (10 values) (paper [0 … 9] (10 values))", "", ""},
		{[]string{"init_ties=random", "instances.mode=per_seed", "metrics.final_regret=regret_exact"}, "a modified protocol: init_ties random (paper lowest_index), instances.mode per_seed (paper fixed), metrics.final_regret regret_exact (paper regret_alpha_pos)", "", ""},
		{[]string{"readings.instance_seeds=[0, 1]"}, "the paper's protocol", "", ""},
		{[]string{"reference=0.1"}, "a modified protocol: reference 0.1 (paper 0)", "reference point 0.1 vs 0", "d2"},
		{[]string{"metrics.hv_window=50"}, "a modified protocol: metrics.hv_window 50 (paper 100)", "HV window 50 vs 100", "d2"},
		{[]string{"settings.d2={n: 40, sigma: 0.1}"}, "a modified protocol: settings.d2.n 40 (paper 36), settings.d2.sigma 0.1 (paper 0.05)", "n 40 vs 36, σ 0.1 vs 0.05", "d2"},
	} {
		d := describe(LoadOptions{Set: c.set})
		if d.Name() != c.name || d.Reason(c.setting, compare.MetricHV) != c.reason {
			t.Errorf("--set %v: %q, reason %q\nwant %q, reason %q", c.set, d.Name(), d.Reason(c.setting, compare.MetricHV), c.name, c.reason)
		}
	}
	// A part of the paper's protocol missing whole is one difference.
	path := filepath.Join(t.TempDir(), "two.yaml")
	src := strings.Replace(string(thv.DefaultParams), "  d4: {d: 4, n: 100, k: 5, T: 5000, sigma: 0.025}\n", "", 1)
	src = strings.Replace(src, "  - {name: RandomK, params: {once: 1}}\n", "", 1)
	src = strings.Replace(src, "      d4: {T: 300}\n", "", 2)
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if d := describe(LoadOptions{ParamsFile: path}); d.Name() != "a modified protocol: algorithms.RandomK absent (paper present), settings.d4 absent (paper present)" || len(d.NotComparable) != 0 {
		t.Errorf("a setting and an algorithm removed: %q %+v", d.Name(), d.NotComparable)
	}
	// The environment overrides the protocol, never the paper's.
	t.Setenv("THV_SEEDS", "0")
	if d := describe(LoadOptions{}); d.Name() != "a modified protocol: seeds 1 (paper 10)" {
		t.Errorf("THV_SEEDS=0: %q", d.Name())
	}
}

// TestNamesAreChecked: a protocol's names of settings and profiles, and
// the texts of its readings, are refused at load when they hold control
// characters or markup, and the error quotes them.
func TestNamesAreChecked(t *testing.T) {
	tiny := tinyYAML(t)
	for _, c := range []struct{ yaml, want string }{
		{strings.Replace(tiny, "  d2: {d: 2,", "  \"d2\\e[2K\\rok\": {d: 2,", 1), `x1b[2k`},
		{strings.Replace(tiny, "  d2: {d: 2,", "  \"<b>d2</b>\": {d: 2,", 1), `settings: the name "\"<b>d2</b>\""`},
		{strings.Replace(tiny, "  short:", "  \"sh|ort\":", 1), `profiles: the name "\"sh|ort\""`},
		{tiny + "readings:\n  settings: [d2]\n  variants:\n    - {name: x, why: \"a\\u202eb\"}\n", `u202eb`},
		{tiny + "readings:\n  settings: [d2]\n  variants:\n    - {name: x, set: [\"min_pulls=`1`\"]}\n", "holds a control character or a backtick"},
	} {
		_, err := loadConfig([]byte(c.yaml), "p.yaml", LoadOptions{}, noEnv)
		if err == nil || !strings.Contains(err.Error(), c.want) || hasControl(err.Error()) {
			t.Errorf("got %v\nwant %q, and no control character", err, c.want)
		}
	}
}

// TestUnknownEnvironmentVariable: a THV_* variable that names no key of
// the protocol is refused, as --set refuses an unknown key, with the key
// it may have meant; a mapping's name is refused too; the variables thv
// and its scripts read otherwise, and empty ones, pass.
func TestUnknownEnvironmentVariable(t *testing.T) {
	tiny := []byte(tinyYAML(t))
	for _, c := range []struct {
		env  []string
		want string
	}{
		{[]string{"THV_SETTINGS_D3_TT", "300"}, "environment THV_SETTINGS_D3_TT is not a key of the protocol (did you mean THV_SETTINGS_D3_T?)"},
		{[]string{"THV_SEEED", "1", "THV_BOGUS", "x"}, "environment THV_BOGUS is not a key of the protocol (and 1 more: THV_SEEED)"},
		{[]string{"THV_SETTINGS", "x"}, "environment THV_SETTINGS names a mapping of the protocol"},
		{[]string{"THV_STORE", "/tmp/x", "THV_REMOTE", "s3://b/p", "THV_PAPER", "p.tex", "THV_SETTINGS_D3_TT", ""}, ""},
	} {
		_, err := loadConfig(tiny, "p.yaml", LoadOptions{}, envOf(c.env...))
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%v: %v\nwant %q", c.env, err, c.want)
		}
	}
}

// TestOverridesNameTheLock: overrides that change the protocol's values
// name its lock after it (thv.set-<digits>.lock), by --set or THV_*
// alike; the same overrides name the same lock; overrides of where things
// go keep the protocol's lock.
func TestOverridesNameTheLock(t *testing.T) {
	dir := t.TempDir()
	lock := func(opt LoadOptions) string {
		t.Helper()
		p, err := Open(Options{LoadOptions: opt, Dir: dir, StoreDir: filepath.Join(dir, ".thv"), ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		return filepath.Base(p.LockPath)
	}
	if got := lock(LoadOptions{}); got != "thv.lock" {
		t.Errorf("no override: %s", got)
	}
	for _, set := range []string{"outputs.results=elsewhere", "readings.instance_seeds=[0, 1]"} {
		if got := lock(LoadOptions{Set: []string{set}}); got != "thv.lock" {
			t.Errorf("--set %s: %s", set, got)
		}
	}
	set := lock(LoadOptions{Set: []string{"seeds=[0]"}})
	if !strings.HasPrefix(set, "thv.set-") || len(set) != len("thv.set-12345678.lock") {
		t.Errorf("--set seeds=[0]: %s", set)
	}
	quick := lock(LoadOptions{Profile: "quick", Set: []string{"seeds=[0]"}})
	if !strings.HasPrefix(quick, "thv.quick.set-") || quick == "thv.quick.lock" {
		t.Errorf("--profile quick --set seeds=[0]: %s", quick)
	}
	t.Setenv("THV_SEEDS", "[0]")
	if got := lock(LoadOptions{}); got != set {
		t.Errorf("THV_SEEDS=[0]: %s, --set seeds=[0] gave %s", got, set)
	}
	t.Setenv("THV_SEEDS", "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]") // the paper's own
	if got := lock(LoadOptions{}); got != "thv.lock" {
		t.Errorf("THV_SEEDS as the paper's: %s", got)
	}
}

// TestRegretCurveEndsAtFinalRegret: the cumulative regret the page draws
// ends, bit for bit, at the regret algos.SummarizeWith computes, for each
// of the three regrets, on random trajectories.
func TestRegretCurveEndsAtFinalRegret(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 50 {
		hv := make([]float64, 1+rng.IntN(3000))
		for j := range hv {
			hv[j] = rng.Float64() * 0.9
		}
		vStar, greedy := 0.7+rng.Float64()*0.2, 0.6+rng.Float64()*0.1
		d := 2 + i%3
		s := algos.SummarizeWith(hv, d, vStar, greedy, 100, algos.RegretReading{GreedyBenchmark: i%2 == 0})
		sum := summaryOf(s)
		target := regretTarget(sum, d, i%2 == 0)
		for kind, want := range map[string]float64{"regret_alpha_pos": s.RegretPos, "regret_alpha": s.RegretAlpha, "regret_exact": s.RegretExact} {
			curve := CumulativeRegret(hv, kind, target, vStar)
			if got := curve[len(curve)-1]; got != want {
				t.Fatalf("run %d, %s: the curve ends at %v, the summary says %v", i, kind, got, want)
			}
		}
		if slices.IsSorted(CumulativeRegret(hv, "regret_alpha_pos", target, vStar)) == false {
			t.Fatalf("run %d: the positive part's cumulative sum decreases", i)
		}
	}
}

// summaryOf is a run's summary as the run stage stores it.
func summaryOf(s algos.Summary) formats.Summary {
	return formats.Summary{HVLast: s.HVLast, VStar: s.VStar, HVGreedy: s.HVGreedy, VAlpha: s.VAlpha, RegretAlpha: s.RegretAlpha, RegretPos: s.RegretPos, RegretExact: s.RegretExact}
}
