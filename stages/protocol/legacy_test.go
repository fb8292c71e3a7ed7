package protocol

import (
	"bytes"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/viper"
	"go.yaml.in/yaml/v3"

	"thv"
)

// legacyLoadConfig is LoadConfig as it was before the strict decoder
// (viper's weakly typed decoding), kept as the tests' oracle: every params
// file the strict loader accepts must give exactly the Config this gives.
// It is slow on deep files and coerces bad values; never use it elsewhere.
func legacyLoadConfig(opt LoadOptions) (*Config, error) {
	src, name := thv.DefaultParams, "embedded params.yaml"
	if opt.ParamsFile != "" {
		b, err := os.ReadFile(opt.ParamsFile)
		if err != nil {
			return nil, fmt.Errorf("reading params: %w", err)
		}
		src, name = b, opt.ParamsFile
	}
	return legacyLoadBytes(src, name, opt)
}

func legacyLoadBytes(src []byte, name string, opt LoadOptions) (*Config, error) {
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
			return nil, fmt.Errorf("%s: unknown profile %q", name, profile)
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
			return nil, fmt.Errorf("--set %q: want key=value", kv)
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
