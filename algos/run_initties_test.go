package algos_test

import (
	"slices"
	"strings"
	"testing"

	"thv/algos"
	_ "thv/algos/all"
	"thv/envs"
)

// TestRunInitTies: RunSpec.InitTies selects the rule (random ties change
// the run, "" is the lowest index); an unknown rule is an error.
func TestRunInitTies(t *testing.T) {
	in, _ := envs.Generate(envs.Concave, 2, 36, 1)
	spec := algos.RunSpec{Algo: "RandomK", Instance: in, K: 3, T: 40, Sigma: 0.05, Seed: 1, MinPulls: 2, Window: 10}
	bench := algos.ComputeBenchmarks(in, 3, nil)
	hvs := map[string][]float64{}
	for _, rule := range []string{"", algos.InitTiesLowest, algos.InitTiesRandom} {
		spec.InitTies = rule
		tr, _, err := algos.Run(spec, bench)
		if err != nil {
			t.Fatal(err)
		}
		hvs[rule] = tr.HV[:algos.InitRounds(36, 3, 2)]
	}
	if !slices.Equal(hvs[""], hvs[algos.InitTiesLowest]) || slices.Equal(hvs[""], hvs[algos.InitTiesRandom]) {
		t.Fatal("init ties: want \"\" = lowest_index ≠ random over the initial rounds")
	}
	spec.InitTies = "alphabetical"
	if _, _, err := algos.Run(spec, bench); err == nil || !strings.Contains(err.Error(), "lowest_index") {
		t.Fatalf("unknown init ties: %v", err)
	}
}
