package config

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// Readings is the readings sweep of params.yaml (thv readings,
// docs/compare.md): the paper's open readings, each a protocol of its own
// (the base protocol with some keys set, as --set sets them) run on the
// settings the paper publishes values for. It enters no key: each
// reading's tasks are ordinary tasks, cached like any other, so a reading
// that changes only THV-UCB's δ reruns only THV-UCB's runs.
type Readings struct {
	Settings []string `mapstructure:"settings"`
	// InstanceSeeds: a reading with instances.mode = fixed runs once per
	// instance seed, and each published value is judged among the
	// per-instance cell means (compare.AcrossInstances): the seeds of one
	// fixed instance are the wrong population for a single random draw.
	// Its claims are those of the first.
	InstanceSeeds []uint64  `mapstructure:"instance_seeds"`
	Variants      []Reading `mapstructure:"variants"`
}

// Reading is one named reading: key=value overrides of the protocol.
type Reading struct {
	Name string   `mapstructure:"name"`
	Set  []string `mapstructure:"set"`
	Why  string   `mapstructure:"why"` // the text or evidence the reading rests on
}

// ForInstance is the reading on instance seed s: its overrides and
// instances.seed = s.
func (v Reading) ForInstance(s uint64) Reading {
	v.Set = append(slices.Clone(v.Set), fmt.Sprintf("instances.seed=%d", s))
	return v
}

// readingName is what a reading's name may be: it names its lock file.
// Compiled on first use: its {0,63} expands to some 800 allocations,
// which every thv command would pay at start (thv hv included).
var readingName = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[a-z0-9][a-z0-9._+-]{0,63}$`)
})

// check validates the section against the protocol: names unique and
// usable as file names, settings known, overrides of the form key=value
// (their keys and values are checked when the reading is loaded).
func (r *Readings) check(c *Config) error {
	for i, s := range r.Settings {
		if _, ok := c.Settings[s]; !ok {
			return fmt.Errorf("readings.settings[%d] = %q: not a setting of the protocol", i, s)
		}
	}
	for j, s := range r.InstanceSeeds {
		if slices.Contains(r.InstanceSeeds[:j], s) {
			return fmt.Errorf("readings.instance_seeds[%d] = %d: given twice", j, s)
		}
	}
	seen := map[string]bool{}
	for i, v := range r.Variants {
		switch {
		case !readingName().MatchString(v.Name):
			return fmt.Errorf("readings.variants[%d].name = %q: want lower-case letters, digits, '.', '_', '+', '-' (it names a lock file)", i, v.Name)
		case seen[v.Name]:
			return fmt.Errorf("readings.variants[%d].name = %q: given twice", i, v.Name)
		}
		seen[v.Name] = true
		if hasControl(v.Why) {
			return fmt.Errorf("readings.variants[%d].why = %s: holds a control character; write plain text", i, clipN(v.Why, 80))
		}
		for j, kv := range v.Set {
			if hasControl(kv) || strings.Contains(kv, "`") {
				return fmt.Errorf("readings.variants[%d].set[%d] = %s: holds a control character or a backtick (it is shown as code in readings.md)", i, j, clipN(kv, 80))
			}
			if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
				return fmt.Errorf("readings.variants[%d].set[%d] = %s: want key=value, e.g. instances.mode=fixed", i, j, clipN(kv, 80))
			}
			if strings.HasPrefix(strings.ToLower(kv), "readings.") {
				return fmt.Errorf("readings.variants[%d].set[%d] = %s: a reading cannot change the sweep", i, j, clipN(kv, 80))
			}
		}
	}
	return nil
}

// Lookup returns the named reading.
func (r *Readings) Lookup(name string) (Reading, bool) {
	i := slices.IndexFunc(r.Variants, func(v Reading) bool { return v.Name == name })
	if i < 0 {
		return Reading{}, false
	}
	return r.Variants[i], true
}

// LoadReading loads the protocol of reading v: opt's overrides, then v's,
// and only the sweep's settings.
func LoadReading(opt LoadOptions, sweep *Readings, v Reading) (*Config, error) {
	opt.Set = append(slices.Clone(opt.Set), v.Set...)
	cfg, err := Load(opt)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", v.Name, err)
	}
	if len(sweep.Settings) > 0 {
		for name := range cfg.Settings {
			if !slices.Contains(sweep.Settings, name) {
				delete(cfg.Settings, name)
			}
		}
	}
	return cfg, nil
}
