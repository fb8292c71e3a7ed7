package protocol

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"testing"

	"thv"
)

var fuzzProfiles = []string{"", "quick", "short", "x"}

// viperKeyLimit matches the errors of the limits on viper's keys
// (maxParamsKeys, maxKeyDepth), which the former loader did not have.
var viperKeyLimit = regexp.MustCompile(`: line \d+: (a key more than \d+ levels deep|more than \d+ keys) .*the limit on a params file$`)

// FuzzLoadConfig: on any params file, profile and --set overrides (one or
// more, NUL-separated) the loader
// never panics and returns either an error of bounded length, the same
// twice, or a Config that is valid (every number finite and in range). Its
// verdict is the former loader's (legacyLoad, the decoder of the YAML node
// tree that viper's layering replaced), and a Config it accepts is exactly
// the one the former loader gives. The one exception: the limits on
// viper's keys refuse what the former loader accepted (a file of more than
// 16,384 keys, or keys more than 16 levels deep).
func FuzzLoadConfig(f *testing.F) {
	f.Add(thv.DefaultParams, uint8(0), "")
	f.Add(thv.DefaultParams, uint8(1), "settings.d3.T=300")
	f.Add([]byte(tinyYAML(f)), uint8(2), "")
	f.Add([]byte(tinyYAML(f)), uint8(0), "seeds=[-1]")
	f.Fuzz(func(t *testing.T, src []byte, profile uint8, set string) {
		opt := LoadOptions{Profile: fuzzProfiles[int(profile)%len(fuzzProfiles)]}
		if set != "" {
			opt.Set = strings.Split(set, "\x00") // several --set, NUL-separated
		}
		cfg, err := loadConfig(src, "p.yaml", opt, noEnv)
		if err != nil {
			if n := len(err.Error()); n > 4096 {
				t.Fatalf("error of %d bytes: %.200s…", n, err)
			}
			if _, again := loadConfig(src, "p.yaml", opt, noEnv); again == nil || again.Error() != err.Error() {
				t.Fatalf("second load: %v; first: %v", again, err)
			}
			if _, old := legacyLoad(src, "p.yaml", opt, noEnv.lookup); old == nil && !viperKeyLimit.MatchString(err.Error()) {
				t.Fatalf("refused (%v), but the former loader accepts it", err)
			}
			return
		}
		if err := checkConfig(cfg); err != nil {
			t.Fatalf("accepted an invalid Config: %v", err)
		}
		again, err := loadConfig(src, "p.yaml", opt, noEnv)
		if err != nil || fmt.Sprintf("%#v", *again) != fmt.Sprintf("%#v", *cfg) {
			t.Fatalf("second load differs: %v", err)
		}
		old, err := legacyLoad(src, "p.yaml", opt, noEnv.lookup)
		if err != nil {
			t.Fatalf("accepted, but the former loader says: %v", err)
		}
		if got, want := fmt.Sprintf("%#v", *cfg), fmt.Sprintf("%#v", *old); got != want {
			t.Fatalf("Config differs from the former loader's:\n got %s\nwant %s", got, want)
		}
	})
}

// checkConfig checks what a validated Config promises, independently of
// normalize.
func checkConfig(c *Config) error {
	finite := func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
	if len(c.Settings) == 0 || len(c.Geometries) == 0 || len(c.Seeds) == 0 || len(c.GridSeeds) == 0 || len(c.Algorithms) == 0 {
		return fmt.Errorf("an empty list: %+v", c)
	}
	if !finite(c.Reference) || c.MinPulls < 1 || c.MinPulls > maxInt || c.Metrics.HVWindow < 1 {
		return fmt.Errorf("reference %v, min_pulls %d, hv_window %d", c.Reference, c.MinPulls, c.Metrics.HVWindow)
	}
	for name, s := range c.Settings {
		if s.Name != name || s.D < 2 || s.N < 1 || s.K < 1 || s.K > s.N || !finite(s.Sigma) || s.Sigma < 0 || s.T < c.Metrics.HVWindow || s.T > maxInt || s.N > maxInt || s.D > maxInt {
			return fmt.Errorf("setting %s: %+v", name, s)
		}
		if s.D > MaxD || s.N > MaxN || s.K > MaxK || s.T > MaxT || s.Sigma > MaxSigma || len(c.Seeds)*s.T > MaxSeedRounds {
			return fmt.Errorf("setting %s above the ceilings: %+v", name, s)
		}
	}
	for _, seeds := range [][]uint64{c.Seeds, c.GridSeeds} {
		if len(seeds) > MaxSeeds || len(slices.Compact(slices.Sorted(slices.Values(seeds)))) != len(seeds) {
			return fmt.Errorf("seeds %v: too many or repeated", seeds)
		}
	}
	if len(slices.Compact(slices.Sorted(slices.Values(c.Geometries)))) != len(c.Geometries) {
		return fmt.Errorf("geometries %v: repeated", c.Geometries)
	}
	if c.Statistics.Resamples > MaxResamples || c.Statistics.Resamples*len(c.Seeds) > MaxResampleDraws || c.Figures.MovingAverage > MaxMovingAverage || c.planBound() > MaxTasks {
		return fmt.Errorf("statistics %+v, figures %+v, plan of up to %d tasks: above the ceilings", c.Statistics, c.Figures, c.planBound())
	}
	for _, a := range c.Algorithms {
		if b, ok := c.Algorithm(a.Name); !ok || b.Name != a.Name {
			return fmt.Errorf("algorithm %q not found by name", a.Name)
		}
		if len(a.Eta) > MaxEtas || len(slices.Compact(slices.Sorted(slices.Values(a.Eta)))) != len(a.Eta) {
			return fmt.Errorf("%s: η grid %v: too long or repeated", a.Name, a.Eta)
		}
		for _, e := range a.Eta {
			if !finite(e) || e <= 0 {
				return fmt.Errorf("%s: η %v", a.Name, e)
			}
		}
		for p, x := range a.Params {
			if !finite(x) {
				return fmt.Errorf("%s: %s = %v", a.Name, p, x)
			}
		}
	}
	if !(c.Statistics.Confidence > 0 && c.Statistics.Confidence < 1) || c.Statistics.Resamples < 1 || c.Figures.MovingAverage < 1 || c.Outputs.Results == "" {
		return fmt.Errorf("statistics %+v, figures %+v, outputs %+v", c.Statistics, c.Figures, c.Outputs)
	}
	return nil
}
