package config

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"thv"
	"thv/pipeline/slurm"
)

func tinyYAML(t testing.TB) string {
	b, err := os.ReadFile("../testdata/tiny.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// loadConfig is load with the THV_* variables of env only.
func loadConfig(src []byte, name string, opt LoadOptions, env []string) (*Config, error) {
	opt.Environ = append([]string{}, env...) // not nil: not the process's
	return load(src, name, opt)
}

// noEnv is an environment without THV_* variables.
var noEnv []string

func envOf(kv ...string) []string {
	var e []string
	for i := 0; i+1 < len(kv); i += 2 {
		e = append(e, kv[i]+"="+kv[i+1])
	}
	return e
}

// oracleEnviron is the process's THV_* variables by name, for oracleLoad.
func oracleEnviron() map[string]string {
	env := map[string]string{}
	for _, kv := range os.Environ() {
		if k, v, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "THV_") {
			env[k] = v
		}
	}
	return env
}

// TestLoadConfigAsBefore: every params file, profile and override loads,
// and decodes to exactly the Config of the tests' second opinion
// (oracleLoad, sharing no code with the loader), and the paper's values
// are there.
func TestLoadConfigAsBefore(t *testing.T) {
	withExecutors := filepath.Join(t.TempDir(), "tiny.yaml")
	if err := os.WriteFile(withExecutors, []byte(tinyYAML(t)+"executors:\n  slurm: {partition: short, time: \"30\", cpus_per_task: 2.0}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		file, profile string
		set           []string
		env           []string
	}{
		{file: "", profile: ""},
		{file: "", profile: "paper"},
		{file: "", profile: "quick"},
		{file: "", profile: "QUICK"},
		{file: "", profile: "scale"},
		{file: "../../params.yaml", profile: "quick"},
		{file: "../testdata/tiny.yaml"},
		{file: "../testdata/tiny.yaml", profile: "short"},
		{file: "../testdata/tiny.yaml", set: []string{"settings.d3.T=110"}},
		{file: "../testdata/tiny.yaml", set: []string{"Settings.D3.t=110", "figures.moving_average=20"}},
		{file: "../testdata/tiny.yaml", set: []string{"seeds=[0, 1, 5]", "reference=-0.5", "statistics.confidence=0.9"}},
		{file: "../testdata/tiny.yaml", set: []string{"settings.d3={T: 300, sigma: 0}"}},
		{file: "../testdata/tiny.yaml", set: []string{"settings.d3.T=3e2", "min_pulls=1.0"}},
		{file: "../testdata/tiny.yaml", set: []string{"statistics.bootstrap_seed=18446744073709551615"}},
		{file: "../testdata/tiny.yaml", set: []string{"algorithms=[{name: RandomK}, {name: THV-UCB, ETA: [0.5], params: {clip: 0}}]"}},
		{file: "../testdata/tiny.yaml", env: []string{"THV_SETTINGS_D3_T", "300"}},
		{file: "../testdata/tiny.yaml", env: []string{"THV_SEEDS", "0,1,2", "THV_REFERENCE", "0.25", "THV_SETTINGS_D2_SIGMA", "0"}},
		{file: "../testdata/tiny.yaml", env: []string{"THV_SEEDS", "3", "THV_SETTINGS_D3_T", "300"}, set: []string{"settings.d3.T=200"}},
		{file: "", profile: "quick", env: []string{"THV_GRID_SEEDS", "7"}},
		{file: "", profile: "scale", set: []string{"settings.d2.T=2500", "algorithms.THV-UCB.params.delta=0.1"}, env: []string{"THV_SEEDS", "0,1,2,3"}},
		{file: "", profile: "quick", set: []string{"algorithms.ScalarUCB.eta=[0.2]", "statistics={confidence: 0.9}", "readings.settings=[d3]"}},
		{file: "", set: []string{"instances.mode=fixed", "instances.seed=4", "metrics.final_regret=regret_exact", "init_ties=random"}},
		{file: "", set: []string{"settings={d3: {T: 400}}", "geometries=[linear]"}, env: []string{"THV_SETTINGS_D2_SIGMA", "0.1", "THV_REFERENCE", "-0.25"}},
		{file: "../testdata/tiny.yaml", set: []string{"algorithms.1={eta: [0.3]}", "algorithms.thv-ucb.params={clip: 0}"}},
		{file: "../testdata/tiny.yaml", set: []string{"settings.d3={d: 3, n: 12, k: 3, T: 150, sigma: 0.01}"}},
		{file: "../testdata/tiny.yaml", set: []string{"metrics=5", "metrics={hv_window: 50, final_regret: regret_exact}", "metrics={hv_window: 60}"}},
		{file: "../testdata/tiny.yaml", set: []string{"settings.d3=[1]", "settings.d3={d: 3, n: 10, k: 2, T: 150, sigma: 0.01}", "settings.d2={}"}},
		{file: "../testdata/tiny.yaml", set: []string{"profiles.short.seeds=[5]"}, profile: "short"},
		{file: "../testdata/tiny.yaml", env: []string{"THV_PROFILES_SHORT_SEEDS", "[4]", "THV_INSTANCES_MODE", "fixed"}, profile: "short"},
		{file: "../testdata/tiny.yaml", env: []string{"THV_REFERENCE", " ", "THV_MIN_PULLS", "# nothing"}},
		{file: withExecutors},
		{file: withExecutors, set: []string{"executors={slurm: {partition: gpu, time: '2:00:00', sbatch_args: [--qos=short]}}"}},
		{file: withExecutors, set: []string{"executors.slurm={mem: 4G}", "executors.slurm.cpus_per_task=4"}, env: []string{"THV_EXECUTORS_SLURM_PARTITION", "debug"}},
	} {
		t.Run(fmt.Sprintf("%s %s %v %v", c.file, c.profile, c.set, c.env), func(t *testing.T) {
			for i := 0; i+1 < len(c.env); i += 2 {
				t.Setenv(c.env[i], c.env[i+1])
			}
			opt := LoadOptions{ParamsFile: c.file, Profile: c.profile, Set: c.set}
			if _, err := Load(opt); err != nil {
				t.Fatal(err)
			}
			src, name := thv.DefaultParams, "embedded"
			if c.file != "" {
				src, _ = os.ReadFile(c.file)
				name = c.file
			}
			got, err := layered(src, name, opt)
			if err != nil {
				t.Fatal(err)
			}
			want, err := oracleLoad(src, opt, oracleEnviron())
			if err != nil {
				t.Fatal("the oracle refuses it")
			}
			if g, w := fmt.Sprintf("%#v", *got), fmt.Sprintf("%#v", *want); g != w {
				t.Errorf("Config differs from the oracle's:\n got %s\nwant %s", g, w)
			}
		})
	}
	cfg, err := Load(LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if s := cfg.Settings["d3"]; s.T != 3000 || s.Sigma != 0.035 || len(cfg.Seeds) != 10 || len(cfg.Algorithms) != 14 || cfg.Profiles["quick"] == nil {
		t.Errorf("embedded params: %+v", cfg)
	}
}

// The real executor's check of executors.slurm, as thv registers it.
func init() {
	RegisterExecutor("slurm", func(section map[string]any) error {
		_, err := slurm.DecodeParams(section)
		return err
	})
}

// TestExecutorsSection: the executors section is kept undecoded, as plain
// values, and checked by the executor registered under its name: its
// errors name the key under executors, an unknown executor names the
// known ones, and the file, a THV_* variable or --set reach it alike.
func TestExecutorsSection(t *testing.T) {
	tiny := tinyYAML(t)
	load := func(section string, set []string, env ...string) (*Config, error) {
		return loadConfig([]byte(tiny+section), "p.yaml", LoadOptions{Set: set}, envOf(env...))
	}
	cfg, err := load("executors:\n  slurm: {partition: gpu, time: \"2:00:00\", cpus_per_task: 2, sbatch_args: [--qos=short]}\n",
		[]string{"executors.slurm={mem: 4G}"}, "THV_EXECUTORS_SLURM_PARTITION", "debug")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]map[string]any{"slurm": {"partition": "debug", "time": "2:00:00", "cpus_per_task": 2, "sbatch_args": []any{"--qos=short"}, "mem": "4G"}}
	if !reflect.DeepEqual(cfg.Executors, want) {
		t.Errorf("executors: %#v\nwant %#v", cfg.Executors, want)
	}
	if p, err := slurm.DecodeParams(cfg.Executors["slurm"]); err != nil || p.Partition != "debug" || p.CPUsPerTask != 2 || p.Mem != "4G" {
		t.Errorf("slurm.DecodeParams: %+v, %v", p, err)
	}
	if cfg, err := load("", nil); err != nil || cfg.Executors != nil {
		t.Errorf("no section: %v, %#v", err, cfg)
	}
	for _, c := range []struct {
		section string
		set     []string
		env     []string
		want    string // the whole error after "p.yaml (profile paper): "
	}{
		{section: "executors: {slrum: {partition: gpu}}\n", want: "executors.slrum: no executor of that name takes settings (known: slurm)"},
		{section: "executors: {slurm: 5}\n", want: "executors.slurm = 5: want a mapping, got a number"},
		{section: "executors: [slurm]\n", want: "executors: want a mapping, got a list"},
		{section: "executors: {slurm: {partion: gpu}}\n", want: "executors.slurm.partion: unknown key (known: partition, account, time, mem, cpus_per_task, sbatch_args, tasks_per_element, max_elements, thv, deadline)"},
		{section: "executors: {slurm: {time: 1h}}\n", want: `executors.slurm.time = "1h": want a Slurm time limit: minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS`},
		{section: "executors: {slurm: {time: 30}}\n", want: "executors.slurm.time = 30: want a string, got a number"},
		{section: "executors: {slurm: {time: ~}}\n", want: "executors.slurm.time: no value (null): give one, or remove the key"},
		{section: "executors: {slurm: {sbatch_args: [~]}}\n", want: "executors.slurm.sbatch_args[0]: no value (null): give one, or remove the key"},
		{section: "executors: {slurm: {cpus_per_task: 2.5}}\n", want: "executors.slurm.cpus_per_task = 2.5: want an integer"},
		{section: "executors: {slurm: {max_elements: many}}\n", want: `executors.slurm.max_elements = "many": want an integer, got a string`},
		{section: "executors: {slurm: {sbatch_args: [--array=0-9]}}\n", want: `executors.slurm.sbatch_args[0] = "--array=0-9": thv sets --array itself (use the slurm keys partition, account, time, mem, cpus_per_task instead where they exist)`},
		{section: "executors: {slurm: {time: \"30\"}}\n", env: []string{"THV_EXECUTORS_SLURM_TIME", "1h"}, want: `executors.slurm.time = "1h": want a Slurm time limit: minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS`},
		{section: "executors: {slurm: {time: \"30\"}}\n", set: []string{"executors.slurm={mem: 4 GB}"}, want: `executors.slurm.mem = "4 GB": want a size as sbatch --mem takes it, e.g. 2000 (MB) or 4G`},
	} {
		_, err := load(c.section, c.set, c.env...)
		if got := strings.TrimPrefix(fmt.Sprint(err), "p.yaml (profile paper): "); got != c.want {
			t.Errorf("%s%v %v:\n got %s\nwant %s", c.section, c.set, c.env, got, c.want)
		}
	}
}

// TestSetListIndex: --set reaches into lists by index, and a list in a
// THV_* variable may be written in YAML (viper could do neither).
func TestSetListIndex(t *testing.T) {
	t.Setenv("THV_GRID_SEEDS", "[4, 5]")
	cfg, err := Load(LoadOptions{ParamsFile: "../testdata/tiny.yaml", Set: []string{"algorithms.1.eta=[0.5]", "geometries.0=convex"}})
	if err != nil {
		t.Fatal(err)
	}
	if a, _ := cfg.Algorithm("ScalarUCB"); !reflect.DeepEqual(a.Eta, []float64{0.5}) || cfg.Geometries[0] != "convex" || !reflect.DeepEqual(cfg.GridSeeds, []uint64{4, 5}) {
		t.Errorf("eta %v, geometries %v, grid seeds %v", a.Eta, cfg.Geometries, cfg.GridSeeds)
	}
}

// nested returns a mapping nested depth levels deep: {a: {a: … 1}}.
func nested(depth int, block bool) string {
	var b strings.Builder
	for i := range depth - 1 {
		if block {
			b.WriteString(strings.Repeat(" ", i) + "a:\n")
		} else {
			b.WriteString("{a: ")
		}
	}
	if block {
		b.WriteString(strings.Repeat(" ", depth-1) + "1\n")
	} else {
		b.WriteString("1" + strings.Repeat("}", depth-1) + "\n")
	}
	return b.String()
}

// TestLoadConfigBadInput: every bad params file, --set or THV_* value is
// refused with an error naming the key, the value and what is wrong.
func TestLoadConfigBadInput(t *testing.T) {
	tiny := tinyYAML(t)
	d3 := "d3: {d: 3, n: 12, k: 3, T: 120, sigma: 0.035}"
	with := func(old, new string) string {
		if !strings.Contains(tiny, old) {
			t.Fatalf("tiny.yaml has no %q", old)
		}
		return strings.Replace(tiny, old, new, 1)
	}
	withD3 := func(field string) string { return with(d3, "d3: {d: 3, n: 12, k: 3, "+field+"}") }
	bomb := "a: &a [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]\n"
	for i, prev := 'b', 'a'; i <= 'h'; i, prev = i+1, i {
		bomb += fmt.Sprintf("%c: &%c [*%c, *%c, *%c, *%c, *%c, *%c, *%c, *%c, *%c, *%c]\n", i, i, prev, prev, prev, prev, prev, prev, prev, prev, prev, prev)
	}
	for _, c := range []struct {
		name    string
		yaml    string
		set     []string
		env     []string
		profile string
		want    string // the whole error after "p.yaml: " or "p.yaml (profile paper): "
	}{
		// Size and shape, checked on the YAML node tree before decoding.
		{name: "deep flow mapping", yaml: nested(33, false), want: "line 1: nested deeper than 32 levels, the limit on a params file"},
		{name: "deep block mapping", yaml: nested(40, true), want: "line 33: nested deeper than 32 levels, the limit on a params file"},
		{name: "deep list", yaml: "a: " + strings.Repeat("[", 40) + strings.Repeat("]", 40), want: "line 1: nested deeper than 32 levels, the limit on a params file"},
		{name: "alias bomb", yaml: bomb, want: "line 1: more than 262144 values (aliases expanded), the limit on a params file"},
		{name: "not YAML", yaml: "settings: [", want: "not valid YAML: yaml: line 1: did not find expected node content"},
		{name: "empty", yaml: "", want: "not a mapping of keys to values (see the embedded params.yaml)"},
		{name: "a list", yaml: "- 1\n", want: "not a mapping of keys to values (see the embedded params.yaml)"},
		{name: "duplicate key", yaml: with("min_pulls: 2", "min_pulls: 2\nMin_Pulls: 3"), want: `line 9: key "Min_Pulls" is given twice (also as "min_pulls"; keys are case-insensitive)`},
		{name: "key not a string", yaml: with("min_pulls: 2", "3: 2"), want: `line 8: a key must be a plain string, not "3"`},
		{name: "long key", yaml: with("min_pulls: 2", strings.Repeat("k", 101)+": 2"), want: `line 8: key "kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk"… is longer than 100 bytes`},
		{name: "dotted key", yaml: with("min_pulls: 2", "min.pulls: 2"), want: `line 8: key "min.pulls" contains a dot (dots separate the levels of a key)`},
		{name: "merge key", yaml: with("metrics:\n", "base: &b {hv_window: 100}\nmetrics:\n  <<: *b\n"), want: "line 14: merge keys (<<) are not supported: write the keys out"},
		{name: "timestamp", yaml: with("results: results", "results: 2026-01-01"), want: `line 27: !!timestamp values are not supported (quote "2026-01-01" to make it a string)`},
		{name: "unknown key", yaml: with("min_pulls: 2", "min_pull: 2"), want: "min_pull: unknown key (known: settings, geometries, seeds, grid_seeds, instances, min_pulls, init_ties, eta_scale, reference, metrics, algorithms, statistics, figures, outputs, readings, profiles, executors)"},
		{name: "slurm section at the top", yaml: tiny + "slurm:\n  partition: gpu\n", want: "slurm: the Slurm executor's settings moved to executors.slurm (docs/cluster.md): write `executors: {slurm: {...}}` with the same keys"},
		{name: "unknown key with no value", yaml: tiny + "profiles_x: {}\n", want: "profiles_x: unknown key (known: settings, geometries, seeds, grid_seeds, instances, min_pulls, init_ties, eta_scale, reference, metrics, algorithms, statistics, figures, outputs, readings, profiles, executors)"},
		{name: "unknown setting key", yaml: withD3("T: 120, sigma: 0.035, tau: 1"), want: "settings.d3.tau: unknown key (known: d, n, k, T, sigma)"},
		{name: "null", yaml: with("reference: 0.0", "reference:"), want: "reference: no value (null): give one, or remove the key"},
		{name: "first error by key", yaml: with("seeds: [0, 1]\n", "seeds: 1\n"), set: []string{"reference=[1]", "metrics=5"}, want: "metrics = 5: want a mapping, got a number (from --set metrics=5)"},
		{name: "null in a profile", yaml: with("seeds: [0]", "seeds: ~"), want: "profiles.short.seeds: no value (null): give one, or remove the key"},
		// Integers: never truncated, wrapped or made from booleans or strings.
		{name: "negative seed", yaml: with("seeds: [0, 1]", "seeds: [-1]"), want: "seeds[0] = -1: want an integer ≥ 0"},
		{name: "fractional seed", yaml: with("seeds: [0, 1]", "seeds: [0, 1.5]"), want: "seeds[1] = 1.5: want an integer ≥ 0"},
		{name: "seed above 2^64", yaml: with("seeds: [0, 1]", "seeds: [18446744073709551616]"), want: "seeds[0] = 18446744073709551616: out of range: write an integer of at most 18446744073709551615, without exponent or fraction"},
		{name: "seed 1e20", yaml: with("seeds: [0, 1]", "seeds: [1e20]"), want: "seeds[0] = 1e20: out of range: write an integer of at most 18446744073709551615, without exponent or fraction"},
		{name: "seed 1e19", yaml: with("seeds: [0, 1]", "seeds: [1e19]"), want: "seeds[0] = 1e19: out of range: write an integer of at most 18446744073709551615, without exponent or fraction"},
		{name: "seed 2^53+2", yaml: with("seeds: [0, 1]", "seeds: [9007199254740994.0]"), want: "seeds[0] = 9007199254740994.0: out of range: write an integer of at most 18446744073709551615, without exponent or fraction"},
		{name: "seed string", yaml: with("seeds: [0, 1]", `seeds: ["0"]`), want: `seeds[0] = "0": want an integer ≥ 0, got a string`},
		{name: "seeds not a list", yaml: with("seeds: [0, 1]", "seeds: 3"), want: "seeds = 3: want a list, got a number"},
		{name: "T fraction", yaml: withD3("T: 3000.5, sigma: 0.035"), want: "settings.d3.T = 3000.5: want an integer"},
		{name: "T boolean", yaml: withD3("T: true, sigma: 0.035"), want: "settings.d3.T = true: want an integer, got a boolean"},
		{name: "T 1e20", yaml: withD3("T: 1e20, sigma: 0.035"), want: "settings.d3.T = 1e20: out of range: an integer of at most 2147483647 in absolute value"},
		{name: "T 2^63", yaml: withD3("T: 9223372036854775808, sigma: 0.035"), want: "settings.d3.T = 9223372036854775808: out of range: an integer of at most 2147483647 in absolute value"},
		{name: "T 2^31", yaml: withD3("T: 2147483648, sigma: 0.035"), want: "settings.d3.T = 2147483648: out of range: an integer of at most 2147483647 in absolute value"},
		{name: "T .inf", yaml: withD3("T: .inf, sigma: 0.035"), want: "settings.d3.T = .inf: want an integer"},
		{name: "T string", yaml: withD3(`T: "300", sigma: 0.035`), want: `settings.d3.T = "300": want an integer, got a string`},
		{name: "T list", yaml: withD3("T: [300], sigma: 0.035"), want: "settings.d3.T: want an integer, got a list"},
		{name: "T zero", yaml: withD3("T: 0, sigma: 0.035"), want: "settings.d3.T = 0: shorter than the forced initialisation (8 rounds)"},
		{name: "k above n", yaml: with(d3, "d3: {d: 3, n: 12, k: 13, T: 120, sigma: 0.035}"), want: "settings.d3.k = 13: slate size must be between 1 and n = 12"},
		{name: "n 2^62 k 1", yaml: with(d3, "d3: {d: 3, n: 4611686018427387904, k: 1, T: 120, sigma: 0.035}"), want: "settings.d3.n = 4611686018427387904: out of range: an integer of at most 2147483647 in absolute value"},
		{name: "n 2^31-1 k 1", yaml: with(d3, "d3: {d: 3, n: 2147483647, k: 1, T: 120, sigma: 0.035}"), want: "settings.d3.n = 2147483647: above the limit of 200 on the number of arms n (the exact benchmark V* searches the front's subsets; docs/reliability.md, \"Protocol limits\"): give at most 200"},
		{name: "hv_window float", yaml: with("hv_window: 100", "hv_window: 99.9"), want: "metrics.hv_window = 99.9: want an integer"},
		{name: "bootstrap_seed negative", yaml: with("bootstrap_seed: 1", "bootstrap_seed: -1"), want: "statistics.bootstrap_seed = -1: want an integer ≥ 0"},
		// Floats: finite, and in range.
		{name: "reference nan", yaml: with("reference: 0.0", "reference: .nan"), want: "reference = .nan: want a finite number"},
		{name: "reference inf", yaml: with("reference: 0.0", "reference: .inf"), want: "reference = .inf: want a finite number"},
		{name: "reference -inf", yaml: with("reference: 0.0", "reference: -.Inf"), want: "reference = -.Inf: want a finite number"},
		{name: "reference string", yaml: with("reference: 0.0", "reference: zero"), want: `reference = "zero": want a number, got a string`},
		{name: "reference bool", yaml: with("reference: 0.0", "reference: false"), want: "reference = false: want a number, got a boolean"},
		{name: "sigma inf", yaml: withD3("T: 120, sigma: .inf"), want: "settings.d3.sigma = .inf: want a finite number"},
		{name: "sigma negative", yaml: withD3("T: 120, sigma: -0.1"), want: "settings.d3.sigma = -0.1: noise level must be finite and ≥ 0"},
		{name: "eta zero", yaml: with("eta: [0.1, 1.0], params", "eta: [0.1, 0], params"), want: "algorithms[0 (THV-UCB)].eta[1] = 0: η must be finite and > 0"},
		{name: "eta negative", yaml: with("{name: ScalarUCB, eta: [0.1, 1.0]}", "{name: ScalarUCB, eta: [-1]}"), want: "algorithms[1 (ScalarUCB)].eta[0] = -1: η must be finite and > 0"},
		{name: "eta inf", yaml: with("{name: ScalarUCB, eta: [0.1, 1.0]}", "{name: ScalarUCB, eta: [.inf]}"), want: "algorithms[1].eta[0] = .inf: want a finite number"},
		{name: "eta nan", yaml: with("{name: ScalarUCB, eta: [0.1, 1.0]}", "{name: ScalarUCB, eta: [.nan]}"), want: "algorithms[1].eta[0] = .nan: want a finite number"},
		{name: "param nan", yaml: with("params: {delta: 0, clip: 1}", "params: {delta: .nan, clip: 1}"), want: "algorithms[0].params.delta = .nan: want a finite number"},
		{name: "param string", yaml: with("params: {delta: 0, clip: 1}", "params: {delta: 0, clip: yes}"), want: `algorithms[0].params.clip = "yes": want a number, got a string`},
		{name: "confidence 1", yaml: with("confidence: 0.95", "confidence: 1"), want: "statistics.confidence = 1: must be in (0, 1)"},
		{name: "eta_scale unknown", yaml: with("{name: ScalarUCB, eta: [0.1, 1.0]}", "{name: ScalarUCB, eta: [0.1, 1.0], eta_scale: root}"), want: `algorithms[1 (ScalarUCB)].eta_scale = "root": want one of [variance radius] (or none: the protocol's eta_scale)`},
		{name: "eta_scale without eta", yaml: with("{name: RandomK}", "{name: RandomK, eta_scale: radius}"), want: "algorithms[2 (RandomK)].eta_scale: RandomK has no η parameter; remove eta_scale"},
		{name: "eta_scale number", yaml: with("{name: ScalarUCB, eta: [0.1, 1.0]}", "{name: ScalarUCB, eta: [0.1, 1.0], eta_scale: 2}"), want: "algorithms[1].eta_scale = 2: want a string, got a number"},
		{name: "set eta_scale", yaml: tiny, set: []string{"algorithms.THV-UCB={eta_scale: radii}"}, want: `algorithms[0 (THV-UCB)].eta_scale = "radii": want one of [variance radius] (or none: the protocol's eta_scale)`},
		{name: "name not a string", yaml: with("{name: RandomK}", "{name: 7}"), want: "algorithms[2].name = 7: want a string, got a number"},
		{name: "long token clipped", yaml: with("reference: 0.0", "reference: "+strings.Repeat("9", 100000)+".5e999"), want: `reference = "9999999999999999999999999999999999999999"…: want a number, got a string`},
		// Profiles.
		{name: "unknown profile", yaml: tiny, profile: "long", want: `unknown profile "long" (known: paper, short)`},
		{name: "profile replaces a mapping", yaml: with("seeds: [0]\n", "seeds: [0]\n    metrics: 5\n"), profile: "short", want: `profile "short": metrics: want a mapping, as in the protocol; got a number`},
		{name: "profile bad value", yaml: with("seeds: [0]\n", "seeds: [-3]\n"), profile: "short", want: "seeds[0] = -3: want an integer ≥ 0"},
		// --set: the same checks, naming the override.
		{name: "set T fraction", yaml: tiny, set: []string{"settings.d3.T=3000.5"}, want: "settings.d3.T = 3000.5: want an integer (from --set settings.d3.T=3000.5)"},
		{name: "set T true", yaml: tiny, set: []string{"settings.d3.T=true"}, want: "settings.d3.T = true: want an integer, got a boolean (from --set settings.d3.T=true)"},
		{name: "set T 1e20", yaml: tiny, set: []string{"settings.d3.T=1e20"}, want: "settings.d3.T = 1e20: out of range: an integer of at most 2147483647 in absolute value (from --set settings.d3.T=1e20)"},
		{name: "set seed -1", yaml: tiny, set: []string{"seeds=[-1]"}, want: "seeds[0] = -1: want an integer ≥ 0 (from --set seeds=[-1])"},
		{name: "set reference nan", yaml: tiny, set: []string{"reference=.nan"}, want: "reference = .nan: want a finite number (from --set reference=.nan)"},
		{name: "set sigma inf", yaml: tiny, set: []string{"settings.d2.sigma=.inf"}, want: "settings.d2.sigma = .inf: want a finite number (from --set settings.d2.sigma=.inf)"},
		{name: "set eta", yaml: tiny, set: []string{"algorithms.0.eta=[.nan]"}, want: "algorithms[0].eta[0] = .nan: want a finite number (from --set algorithms.0.eta=[.nan])"},
		{name: "set unknown key", yaml: tiny, set: []string{"settings.d3.tau=1"}, want: `--set "settings.d3.tau=1": "settings.d3.tau" is not a key of p.yaml`},
		{name: "set index out of range", yaml: tiny, set: []string{"seeds.5=1"}, want: `--set "seeds.5=1": "seeds.5" is not a key of p.yaml`},
		{name: "set replaces a mapping", yaml: tiny, set: []string{"metrics=5", "metrics={final_regret: regret_exact}"}, want: "metrics.hv_window = 0: must be ≥ 1"},
		{name: "set replaced key", yaml: tiny, set: []string{"settings.d3=7", "settings.d3={T: 150}", "settings.d3.sigma=0"}, want: `--set "settings.d3.sigma=0": "settings.d3.sigma" is not a key of p.yaml`},
		{name: "set no =", yaml: tiny, set: []string{"seeds"}, want: `--set "seeds": want key=value, e.g. --set settings.d3.T=300`},
		{name: "set no value", yaml: tiny, set: []string{"seeds="}, want: `--set "seeds=": no value after =`},
		{name: "set not YAML", yaml: tiny, set: []string{"seeds=[0"}, want: `--set "seeds=[0": not valid YAML: yaml: line 1: did not find expected ',' or ']'`},
		{name: "set too deep", yaml: tiny, set: []string{"settings.d3=" + nested(31, false)}, want: `--set "settings.d3={a: {a: {a: {a: {a: {a: {a: {a: {a: {a: {a: {a: {a: {a: {a: {a: {a: "…: line 1: nested deeper than 32 levels, the limit on a params file`},
		{name: "set too large", yaml: tiny, set: []string{"outputs.results=" + strings.Repeat("x", 1<<20+1)}, want: `--set "outputs.results=xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"…: larger than 1 MiB (1048576 bytes), the limit on a params file`},
		{name: "set long value echoed cut", yaml: tiny, set: []string{"settings.d3.T=" + strings.Repeat("7", 300)}, want: `settings.d3.T = 7777777777777777777777777777777777777777…: out of range: an integer of at most 2147483647 in absolute value (from --set settings.d3.T=777777777777777777777777777777777777777777777777777777777777777777…)`},
		// THV_* environment variables: the same checks, naming the variable.
		{name: "env T fraction", yaml: tiny, env: []string{"THV_SETTINGS_D3_T", "3000.5"}, want: "settings.d3.T = 3000.5: want an integer (from THV_SETTINGS_D3_T)"},
		{name: "env T true", yaml: tiny, env: []string{"THV_SETTINGS_D3_T", "true"}, want: "settings.d3.T = true: want an integer, got a boolean (from THV_SETTINGS_D3_T)"},
		{name: "env seeds", yaml: tiny, env: []string{"THV_SEEDS", "0,-1"}, want: "seeds[1] = -1: want an integer ≥ 0 (from THV_SEEDS)"},
		{name: "env reference", yaml: tiny, env: []string{"THV_REFERENCE", ".inf"}, want: "reference = .inf: want a finite number (from THV_REFERENCE)"},
		{name: "env not YAML", yaml: tiny, env: []string{"THV_REFERENCE", "[1"}, want: "environment THV_REFERENCE: not valid YAML: yaml: line 1: did not find expected ',' or ']'"},
	} {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			_, err := loadConfig([]byte(c.yaml), "p.yaml", LoadOptions{Profile: c.profile, Set: c.set}, envOf(c.env...))
			if d := time.Since(start); d > 10*time.Second { // generous: the machine may be busy
				t.Errorf("took %v", d)
			}
			if err == nil {
				t.Fatalf("accepted; want %q", c.want)
			}
			msg := err.Error()
			for _, prefix := range []string{"p.yaml (profile " + cmpOr(c.profile, "paper") + "): ", "p.yaml: "} {
				msg = strings.TrimPrefix(msg, prefix)
			}
			if msg != c.want {
				t.Errorf("error\n %q\nwant\n %q", msg, c.want)
			}
		})
	}
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// TestParamsFileLimits: a file over 1 MiB is refused before it is read
// whole, and the 35 KB file of nested mappings that kept viper busy for
// minutes is refused at once.
func TestParamsFileLimits(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, append([]byte(tinyYAML(t)), make([]byte, MaxParamsBytes)...), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(LoadOptions{ParamsFile: big}); err == nil || err.Error() != big+": larger than 1 MiB (1048576 bytes), the limit on a params file" {
		t.Errorf("1 MiB + tiny.yaml: %v", err)
	}
	exact := filepath.Join(dir, "exact.yaml")
	pad := MaxParamsBytes - len(tinyYAML(t))
	if err := os.WriteFile(exact, []byte(tinyYAML(t)+strings.Repeat("#", pad-1)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(LoadOptions{ParamsFile: exact}); err != nil {
		t.Errorf("exactly 1 MiB: %v", err)
	}
	deep := filepath.Join(dir, "deep.yaml")
	src := nested(180, true) // 35 KB
	if err := os.WriteFile(deep, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err := Load(LoadOptions{ParamsFile: deep})
	if err == nil || !strings.Contains(err.Error(), "nested deeper than 32 levels") || time.Since(start) > 10*time.Second {
		t.Errorf("%d bytes nested 180 deep: %v after %v", len(src), err, time.Since(start))
	}
	if _, err := Load(LoadOptions{ParamsFile: filepath.Join(dir, "missing.yaml")}); err == nil || !strings.Contains(err.Error(), "missing.yaml") {
		t.Errorf("missing file: %v", err)
	}
}

// TestDepthOfTheProtocol: the paper's params.yaml is far from the limits:
// its nesting 6 levels below MaxParamsDepth (inside a list, where only
// that limit applies), its keys 10 levels below maxKeyDepth, and its
// number of keys a sixteenth of maxParamsKeys.
func TestDepthOfTheProtocol(t *testing.T) {
	if len(thv.DefaultParams) > MaxParamsBytes/16 {
		t.Errorf("params.yaml is %d bytes", len(thv.DefaultParams))
	}
	if _, err := parseTree(thv.DefaultParams, MaxParamsDepth-6, "", false); err != nil {
		t.Errorf("params.yaml nested 6 levels below the limit: %v", err)
	}
	if _, err := parseTree(thv.DefaultParams, maxKeyDepth-10, "", true); err != nil {
		t.Errorf("params.yaml's keys 10 levels below the limit: %v", err)
	}
	p := treeParser{}
	var doc yaml.Node
	if err := yaml.Unmarshal(thv.DefaultParams, &doc); err != nil {
		t.Fatal(err)
	}
	if _, err := p.node(doc.Content[0], 1, true); err != nil || p.keys > maxParamsKeys/16 || p.keys < 40 {
		t.Errorf("params.yaml: %d keys, %v", p.keys, err)
	}
}

// TestViperKeyLimits: a file with more keys than maxParamsKeys, or keys
// deeper than maxKeyDepth, is refused before viper sees it, and the
// largest file within the limits loads in well under the time the values
// limit allows the former decoder (viper's work grows with the keys times
// the square of their depth).
func TestViperKeyLimits(t *testing.T) {
	// n keys, each d levels deep, under profiles (whose content is free):
	// a mapping of 100 leaves aliased n/100 times.
	keys := func(n, d int) string {
		var b strings.Builder
		b.WriteString("settings: {d2: {d: 2, n: 12, k: 2, T: 120, sigma: 0.05}}\nprofiles:\n  x: ")
		for range d - 4 {
			b.WriteString("{x: ")
		}
		b.WriteString("{")
		for i := range n / 100 {
			if i == 0 {
				b.WriteString("n0: &a {")
				for j := range 100 {
					fmt.Fprintf(&b, "k%d: %d, ", j, j)
				}
				b.WriteString("}, ")
				continue
			}
			fmt.Fprintf(&b, "n%d: *a, ", i)
		}
		b.WriteString("}" + strings.Repeat("}", max(0, d-4)) + "\n")
		return b.String()
	}
	for _, c := range []struct {
		name string
		src  string
		want string // "" for a file within the limits
	}{
		{"deep", keys(100, maxKeyDepth+1), "line 3: a key more than 16 levels deep (settings.d3.T is 3), the limit on a params file"},
		{"many", keys(maxParamsKeys+100, 4), "line 3: more than 16384 keys (paths of mapping keys to a value, as settings.d3.T), the limit on a params file"},
		{"deep list", "a: [" + strings.Repeat("{a: ", 25) + "1" + strings.Repeat("}", 25) + "]\n", "unknown key"},
		{"most", keys(maxParamsKeys-200, maxKeyDepth), ""},
	} {
		start := time.Now()
		_, err := loadConfig([]byte(c.src), "p.yaml", LoadOptions{}, noEnv)
		d := time.Since(start)
		if d > 10*time.Second { // about 0.5 s; generous: the machine may be busy
			t.Errorf("%s: took %v", c.name, d)
		}
		switch {
		case c.want == "" && err != nil && !strings.Contains(err.Error(), "geometries"):
			t.Errorf("%s: %v", c.name, err) // the file is no protocol, but passes the limits
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
		t.Logf("%s: %v", c.name, d)
	}
}

// BenchmarkLoadConfig: the paper's protocol, as every thv command loads
// it.
func BenchmarkLoadConfig(b *testing.B) {
	for b.Loop() {
		if _, err := Load(LoadOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}
