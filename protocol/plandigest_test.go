package protocol

import (
	"testing"
	"thv/protocol/config"
)

// TestPlanDigest: the no-op certificate's plan digest (pipeline/noop.go)
// is the same for the same configuration and differs whenever a key
// changes, from --set or a profile.
func TestPlanDigest(t *testing.T) {
	load := func(profile string, set ...string) string {
		t.Helper()
		cfg, err := config.Load(config.LoadOptions{Profile: profile, Set: set})
		if err != nil {
			t.Fatal(err)
		}
		d := planDigest(cfg)
		if d == "" {
			t.Fatal("no plan digest")
		}
		return d
	}
	base := load("quick")
	if again := load("quick"); again != base {
		t.Fatal("the same configuration gave another digest")
	}
	seen := map[string]string{base: "quick"}
	for _, c := range []struct {
		profile string
		set     []string
	}{
		{"paper", nil},
		{"quick", []string{"settings.d2.T=301"}},
		{"quick", []string{"instances.seed=7"}},
		{"quick", []string{"statistics.confidence=0.9"}},
		{"quick", []string{"metrics.final_regret=regret_exact"}},
	} {
		d := load(c.profile, c.set...)
		name := c.profile + " " + fmtSet(c.set)
		if prev, dup := seen[d]; dup {
			t.Errorf("%s: the same digest as %s", name, prev)
		}
		seen[d] = name
	}
}

func fmtSet(set []string) string {
	out := ""
	for _, s := range set {
		out += "--set " + s + " "
	}
	return out
}
