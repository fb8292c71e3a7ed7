package config

import (
	"strings"
	"testing"

	"thv"
)

// TestReadingsSection: the embedded sweep loads, every reading of it loads
// as a protocol (its overrides name existing keys with valid values), and
// a reading keeps only the sweep's settings.
func TestReadingsSection(t *testing.T) {
	base, err := Load(LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sweep := base.Readings
	if len(sweep.Variants) < 2 || sweep.Variants[0].Name != "default" || len(sweep.Variants[0].Set) != 0 {
		t.Fatalf("embedded readings: %+v", sweep)
	}
	for _, v := range sweep.Variants {
		cfg, err := LoadReading(LoadOptions{}, &sweep, v)
		if err != nil {
			t.Fatalf("reading %s: %v", v.Name, err)
		}
		if len(cfg.Settings) != len(sweep.Settings) {
			t.Fatalf("reading %s has settings %v, want %v", v.Name, cfg.Settings, sweep.Settings)
		}
	}
	perSeed, _ := sweep.Lookup("per-seed")
	cfg, _ := LoadReading(LoadOptions{}, &sweep, perSeed)
	if cfg.Instances.Mode != InstancesPerSeed || base.Instances.Mode != InstancesFixed {
		t.Fatalf("reading per-seed: instances.mode %q (base %q)", cfg.Instances.Mode, base.Instances.Mode)
	}
	// A reading on one instance seed of the sweep.
	cfg, _ = LoadReading(LoadOptions{}, &sweep, perSeed.ForInstance(7))
	if cfg.Instances.Seed != 7 {
		t.Fatalf("ForInstance(7): instances.seed %d", cfg.Instances.Seed)
	}
	delta, _ := sweep.Lookup("delta-0.05")
	cfg, _ = LoadReading(LoadOptions{}, &sweep, delta)
	if a, _ := cfg.Algorithm("THV-UCB"); a.Params["delta"] != 0.05 {
		t.Fatalf("reading delta-0.05: THV-UCB params %v", a.Params)
	}
}

// TestSetByAlgorithmName: --set reaches a list item by its name, case
// insensitively, as well as by its index.
func TestSetByAlgorithmName(t *testing.T) {
	for _, kv := range []string{"algorithms.THV-UCB.params.delta=0.2", "algorithms.thv-ucb.params.delta=0.2", "algorithms.0.params.delta=0.2"} {
		cfg, err := Load(LoadOptions{Set: []string{kv}})
		if err != nil {
			t.Fatalf("--set %s: %v", kv, err)
		}
		if a, _ := cfg.Algorithm("THV-UCB"); a.Params["delta"] != 0.2 {
			t.Fatalf("--set %s: THV-UCB params %v", kv, a.Params)
		}
	}
	if _, err := Load(LoadOptions{Set: []string{"algorithms.NoSuch.params.delta=1"}}); err == nil || !strings.Contains(err.Error(), "not a key") {
		t.Fatalf("unknown algorithm name: %v", err)
	}
}

// TestReadingsErrors: a bad sweep or a bad reading value is an error naming
// the key.
func TestReadingsErrors(t *testing.T) {
	src := string(thv.DefaultParams)
	for _, c := range []struct {
		set  []string
		want string
	}{
		{[]string{"readings.settings=[d9]"}, `readings.settings[0] = "d9": not a setting`},
		{[]string{"readings.instance_seeds=[1, 2, 1]"}, "readings.instance_seeds[2] = 1: given twice"},
		{[]string{"readings.variants.0.name=Bad Name"}, "readings.variants[0].name"},
		{[]string{"readings.variants.1.name=default"}, `"default": given twice`},
		{[]string{"readings.variants.1.set=[instances.mode]"}, "want key=value"},
		{[]string{`readings.variants.1.set=["readings.settings=d2"]`}, "cannot change the sweep"},
		{[]string{"instances.order=sorted"}, `instances.order = "sorted"`},
		{[]string{"instances.clusters_split=thirds"}, `instances.clusters_split = "thirds"`},
		{[]string{"instances.distractors=none"}, `instances.distractors = "none"`},
		{[]string{"init_ties=first"}, `init_ties = "first"`},
		{[]string{"metrics.final_regret=regret"}, `metrics.final_regret = "regret"`},
		{[]string{"algorithms.RandomK.params.once=2"}, "want one of [0 1]"},
	} {
		_, err := loadConfig([]byte(src), "params.yaml", LoadOptions{Set: c.set}, noEnv)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("--set %v: error %v, want %q", c.set, err, c.want)
		}
	}
	// A reading whose override is not a key fails when it is loaded, naming
	// the reading.
	base, _ := Load(LoadOptions{})
	_, err := LoadReading(LoadOptions{}, &base.Readings, Reading{Name: "typo", Set: []string{"instances.moed=fixed"}})
	if err == nil || !strings.Contains(err.Error(), "reading typo") || !strings.Contains(err.Error(), "instances.moed") {
		t.Fatalf("reading with an unknown key: %v", err)
	}
}
