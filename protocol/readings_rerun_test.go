package protocol

import (
	"context"
	"strings"
	"testing"

	"thv/pipeline"
)

// TestReadingsRerunOnlyTheirRuns: each reading of the paper's open points makes
// stale exactly the runs it changes, says why, and naming a default
// explicitly makes nothing stale (the defaults enter no key).
func TestReadingsRerunOnlyTheirRuns(t *testing.T) {
	dir := t.TempDir()
	repro(t, tiny(t, dir, nil), pipeline.Options{})
	for _, c := range []struct {
		set    string               // --set values, separated by "; "
		stale  func(id string) bool // which runs must be stale
		reason string
	}{
		{"eta_scale=variance", func(string) bool { return false }, ""},
		{"metrics.regret_rounds=all", func(string) bool { return false }, ""},
		{"metrics.benchmark_d3=alpha_hv_greedy", func(string) bool { return false }, ""},
		{"init_ties=lowest_index", func(string) bool { return false }, ""},
		{"algorithms.THV-UCB={min_pulls: 2}", func(string) bool { return false }, ""},
		{"algorithms.THV-UCB={min_pulls: 1}", func(id string) bool { return strings.Contains(id, "/THV-UCB/") }, "params changed: min_pulls 2 → 1"},
		{"eta_scale=radius", func(id string) bool { return !strings.Contains(id, "/RandomK/") }, "params changed: eta_scale"},
		{"algorithms.THV-UCB={eta_scale: variance}", func(string) bool { return false }, ""},
		{"algorithms.THV-UCB={eta_scale: radius}", func(id string) bool { return strings.Contains(id, "/THV-UCB/") }, "params changed: eta_scale"},
		{"algorithms.ScalarUCB={eta_scale: radius}", func(id string) bool { return strings.Contains(id, "/ScalarUCB/") }, "params changed: eta_scale"},
		{"eta_scale=radius; algorithms.THV-UCB={eta_scale: variance}", func(id string) bool { return strings.Contains(id, "/ScalarUCB/") }, "params changed: eta_scale"},
		{"metrics.benchmark_d3=hv_greedy", func(id string) bool { return strings.Contains(id, "/d3/") }, "params changed: benchmark_d3"},
		{"metrics.regret_rounds=after_init", func(string) bool { return true }, "params changed: regret_rounds"},
		{"init_ties=numpy_argsort", func(string) bool { return true }, "params changed: init_ties lowest_index → numpy_argsort"},
	} {
		st, err := tiny(t, dir, nil, strings.Split(c.set, "; ")...).Status(context.Background())
		if err != nil {
			t.Fatalf("%s: %v", c.set, err)
		}
		runs := 0
		for _, r := range st.Results {
			if r.Task.Kind != "run" {
				continue
			}
			runs++
			stale := r.Status == pipeline.Stale
			if stale != c.stale(r.Task.ID) {
				t.Errorf("--set %s: %s stale = %v (%s)", c.set, r.Task.ID, stale, r.Reason)
			}
			if stale && !strings.HasPrefix(r.Reason, c.reason) {
				t.Errorf("--set %s: %s stale because %q, want %q", c.set, r.Task.ID, r.Reason, c.reason)
			}
		}
		if runs == 0 {
			t.Fatalf("--set %s: no run in the plan", c.set)
		}
	}
}
