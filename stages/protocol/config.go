package protocol

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/viper"
	"go.yaml.in/yaml/v3"

	"thv"
	"thv/algos"
	_ "thv/algos/all" // the registry the protocol is validated against
	"thv/envs"
)

// Setting is one of the paper's experimental settings.
type Setting struct {
	Name  string  `mapstructure:"-"`
	D     int     `mapstructure:"d"`
	N     int     `mapstructure:"n"`
	K     int     `mapstructure:"k"`
	T     int     `mapstructure:"t"`
	Sigma float64 `mapstructure:"sigma"`
}

// AlgoConfig is the protocol of one algorithm.
type AlgoConfig struct {
	Name   string             `mapstructure:"name"` // as the paper prints it
	Eta    []float64          `mapstructure:"eta"`
	Params map[string]float64 `mapstructure:"params"`
}

// Config is the validated experiment protocol.
type Config struct {
	Profile    string             `mapstructure:"-"`
	Settings   map[string]Setting `mapstructure:"settings"`
	Geometries []string           `mapstructure:"geometries"`
	Seeds      []uint64           `mapstructure:"seeds"`
	GridSeeds  []uint64           `mapstructure:"grid_seeds"`
	MinPulls   int                `mapstructure:"min_pulls"`
	Reference  float64            `mapstructure:"reference"`
	Metrics    struct {
		HVWindow int `mapstructure:"hv_window"`
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
	} `mapstructure:"outputs"`
	Profiles map[string]any `mapstructure:"profiles"`

	byName map[string]AlgoConfig
}

// Algorithm returns the protocol of the named algorithm.
func (c *Config) Algorithm(name string) (AlgoConfig, bool) {
	a, ok := c.byName[name]
	return a, ok
}

// LoadOptions says where the protocol comes from.
type LoadOptions struct {
	ParamsFile string   // "" means the embedded params.yaml
	Profile    string   // "" or "paper" means no profile
	Set        []string // key=value overrides, applied last
}

// LoadConfig reads params.yaml (embedded or a file), applies the profile,
// THV_* environment variables and --set overrides, and validates the result.
// Every error names the offending key.
func LoadConfig(opt LoadOptions) (*Config, error) {
	src, name := thv.DefaultParams, "embedded params.yaml"
	if opt.ParamsFile != "" {
		b, err := os.ReadFile(opt.ParamsFile)
		if err != nil {
			return nil, fmt.Errorf("reading params: %w", err)
		}
		src, name = b, opt.ParamsFile
	}
	v := viper.New()
	v.SetConfigType("yaml")
	if err := v.ReadConfig(bytes.NewReader(src)); err != nil {
		return nil, fmt.Errorf("%s: not valid YAML: %w", name, err)
	}
	profile := opt.Profile
	if profile == "" {
		profile = "paper"
	}
	if profile != "paper" {
		sub, ok := v.Get("profiles." + profile).(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s: unknown profile %q (known: %s)", name, profile, strings.Join(profileNames(v), ", "))
		}
		if err := v.MergeConfigMap(sub); err != nil {
			return nil, fmt.Errorf("profile %q: %w", profile, err)
		}
	}
	v.SetEnvPrefix("THV")
	v.SetEnvKeyReplacer(strings.NewReplacer(".", "_", "-", "_", "+", "PLUS"))
	v.AutomaticEnv()
	for _, kv := range opt.Set {
		key, val, ok := strings.Cut(kv, "=")
		if !ok || key == "" {
			return nil, fmt.Errorf("--set %q: want key=value, e.g. --set settings.d3.T=300", kv)
		}
		if !v.IsSet(key) {
			return nil, fmt.Errorf("--set %q: %q is not a key of %s", kv, key, name)
		}
		var parsed any
		if err := yaml.Unmarshal([]byte(val), &parsed); err != nil {
			return nil, fmt.Errorf("--set %q: value is not valid YAML: %v", kv, err)
		}
		v.Set(key, parsed)
	}
	var c Config
	if err := v.UnmarshalExact(&c); err != nil {
		return nil, fmt.Errorf("%s: %v", name, strings.ReplaceAll(err.Error(), "\n", "; "))
	}
	c.Profile = profile
	if err := c.normalize(); err != nil {
		return nil, fmt.Errorf("%s (profile %s): %w", name, profile, err)
	}
	return &c, nil
}

func profileNames(v *viper.Viper) []string {
	m, _ := v.Get("profiles").(map[string]any)
	names := []string{"paper"}
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names[1:])
	return names
}

// normalize restores the paper's algorithm names (viper lowercases keys) and
// validates everything a run needs, before anything runs.
func (c *Config) normalize() error {
	if len(c.Settings) == 0 {
		return fmt.Errorf("settings: no setting")
	}
	for name, s := range c.Settings {
		s.Name = name
		key := "settings." + name
		switch {
		case s.D < 2:
			return fmt.Errorf("%s.d = %d: need at least 2 objectives", key, s.D)
		case s.N < 1:
			return fmt.Errorf("%s.n = %d: need at least one arm", key, s.N)
		case s.K < 1 || s.K > s.N:
			return fmt.Errorf("%s.k = %d: slate size must be between 1 and n = %d", key, s.K, s.N)
		case !(s.Sigma >= 0):
			return fmt.Errorf("%s.sigma = %v: noise level must be ≥ 0", key, s.Sigma)
		case s.T < algos.InitRounds(s.N, s.K, max(1, c.MinPulls)):
			return fmt.Errorf("%s.T = %d: shorter than the forced initialisation (%d rounds)", key, s.T, algos.InitRounds(s.N, s.K, max(1, c.MinPulls)))
		case s.T < c.Metrics.HVWindow:
			return fmt.Errorf("%s.T = %d: shorter than metrics.hv_window = %d", key, s.T, c.Metrics.HVWindow)
		}
		c.Settings[name] = s
	}
	if len(c.Geometries) == 0 {
		return fmt.Errorf("geometries: empty list")
	}
	for i, g := range c.Geometries {
		if _, err := envs.ParseGeometry(g); err != nil {
			return fmt.Errorf("geometries[%d]: %w", i, err)
		}
	}
	if len(c.Seeds) == 0 {
		return fmt.Errorf("seeds: empty list (need at least one seed)")
	}
	if len(c.GridSeeds) == 0 {
		return fmt.Errorf("grid_seeds: empty list (need at least one seed)")
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
		if spec.UsesEta && len(a.Eta) == 0 {
			return fmt.Errorf("algorithms[%s].eta: %s has η: give its grid, e.g. [0.01, 0.1, 0.3, 1.0]", key, spec.Name)
		}
		if !spec.UsesEta && len(a.Eta) > 0 {
			return fmt.Errorf("algorithms[%s].eta: %s has no η parameter; remove the grid", key, spec.Name)
		}
		for i, e := range a.Eta {
			if !(e > 0) {
				return fmt.Errorf("algorithms[%s].eta[%d] = %v: η must be > 0", key, i, e)
			}
		}
		for p := range a.Params {
			if !slices.ContainsFunc(spec.Params, func(q algos.Param) bool { return q.Name == p }) {
				return fmt.Errorf("algorithms[%s].params.%s: %s has no parameter %q (see thv algos)", key, p, spec.Name, p)
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
	if c.Statistics.Resamples < 1 {
		return fmt.Errorf("statistics.bootstrap_resamples = %d: must be ≥ 1", c.Statistics.Resamples)
	}
	if c.Figures.MovingAverage < 1 {
		return fmt.Errorf("figures.moving_average = %d: must be ≥ 1", c.Figures.MovingAverage)
	}
	if c.Outputs.Results == "" {
		return fmt.Errorf("outputs.results: empty path")
	}
	return nil
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

// SortedAlgorithms returns the configured algorithms in paper order.
func (c *Config) SortedAlgorithms() []AlgoConfig {
	var out []AlgoConfig
	for _, name := range algos.PaperOrder {
		if a, ok := c.byName[name]; ok {
			out = append(out, a)
		}
	}
	return out
}
