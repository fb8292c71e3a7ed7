package algos_test

import (
	"encoding/json"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"thv/algos"
	_ "thv/algos/all"
	"thv/envs"
)

// The readings of the paper's open points (docs/fidelity.md), each checked against an
// independent computation of what it says.

func runSpec(t *testing.T, d, n, k int) (algos.RunSpec, algos.Benchmarks) {
	t.Helper()
	in, err := envs.Generate(envs.Concave, d, n, 3)
	if err != nil {
		t.Fatal(err)
	}
	return algos.RunSpec{Algo: "THV-UCB", Eta: 0.1, Params: map[string]float64{"delta": 0, "clip": 1},
		Instance: in, K: k, T: 200, Sigma: 0.05, Seed: 2, MinPulls: 2, Window: 50}, algos.ComputeBenchmarks(in, k, nil)
}

// TestRegretAfterInit: after_init sums the regrets over t > t₀ only, t₀ =
// ⌈n·m0/k⌉; HV_last100 and the trajectory do not change.
func TestRegretAfterInit(t *testing.T) {
	spec, bench := runSpec(t, 3, 60, 4)
	trAll, all, err := algos.Run(spec, bench)
	if err != nil {
		t.Fatal(err)
	}
	spec.RegretRounds = algos.RegretAfterInit
	tr, after, err := algos.Run(spec, bench)
	if err != nil {
		t.Fatal(err)
	}
	if t0 := algos.InitRounds(60, 4, 2); tr.InitRounds != t0 {
		t.Fatalf("InitRounds = %d, want %d", tr.InitRounds, t0)
	}
	if !slices.Equal(tr.HV, trAll.HV) || after.HVLast != all.HVLast {
		t.Fatal("after_init changed the run, not only its regret")
	}
	target := algos.Alpha * bench.HVGreedy
	var pos, signed float64
	for _, h := range tr.HV[tr.InitRounds:] {
		pos += math.Max(0, target-h)
		signed += target - h
	}
	if math.Abs(after.RegretPos-pos) > 1e-12 || math.Abs(after.RegretAlpha-signed) > 1e-12 {
		t.Fatalf("after_init regret %v / %v, summed by hand %v / %v", after.RegretPos, after.RegretAlpha, pos, signed)
	}
	if !(after.RegretPos < all.RegretPos) {
		t.Fatalf("after_init regret %v not below the whole run's %v (the initialisation costs regret here)", after.RegretPos, all.RegretPos)
	}
	spec.RegretRounds = "later"
	if _, _, err := algos.Run(spec, bench); err == nil || !strings.Contains(err.Error(), "after_init") {
		t.Fatalf("unknown regret rounds: %v", err)
	}
}

// TestBenchmarkGreedy: hv_greedy puts HV(G*) where α·HV(G*) stands at
// d ≥ 3 and changes nothing at d = 2.
func TestBenchmarkGreedy(t *testing.T) {
	for _, d := range []int{2, 3} {
		n, k := 36, 3
		if d == 3 {
			n, k = 60, 4
		}
		spec, bench := runSpec(t, d, n, k)
		tr, def, err := algos.Run(spec, bench)
		if err != nil {
			t.Fatal(err)
		}
		spec.BenchmarkD3 = algos.BenchmarkGreedy
		_, g, err := algos.Run(spec, bench)
		if err != nil {
			t.Fatal(err)
		}
		if d == 2 {
			if g != def {
				t.Fatalf("d = 2: hv_greedy changed the summary: %+v, want %+v", g, def)
			}
			continue
		}
		var pos float64
		for _, h := range tr.HV {
			pos += math.Max(0, bench.HVGreedy-h)
		}
		if math.Abs(g.RegretPos-pos) > 1e-12 || !(g.RegretPos > def.RegretPos) {
			t.Fatalf("d = 3: hv_greedy regret %v, by hand %v (α·HV(G*): %v)", g.RegretPos, pos, def.RegretPos)
		}
	}
}

// TestEtaRadius: eta_scale radius with η is the run of eta_scale variance
// with η², for every algorithm that has η, and changes nothing for one
// that has none.
func TestEtaRadius(t *testing.T) {
	spec, bench := runSpec(t, 2, 36, 3)
	for _, a := range algos.All() {
		spec.Algo, spec.Params = a.Name, nil
		spec.Eta, spec.EtaScale = 0.3, algos.EtaRadius
		trR, r, err := algos.Run(spec, bench)
		if err != nil {
			t.Fatal(err)
		}
		spec.Eta, spec.EtaScale = 0.3*0.3, ""
		trV, v, err := algos.Run(spec, bench)
		if err != nil {
			t.Fatal(err)
		}
		if !a.UsesEta {
			spec.Eta = 0.3
			if _, v, err = algos.Run(spec, bench); err != nil {
				t.Fatal(err)
			}
		}
		if r != v || !slices.Equal(trR.HV, trV.HV) {
			t.Errorf("%s: radius(η = 0.3) gave %+v, variance(η = 0.09) %+v", a.Name, r, v)
		}
	}
	spec.EtaScale = "sqrt"
	if _, _, err := algos.Run(spec, bench); err == nil || !strings.Contains(err.Error(), "radius") {
		t.Fatalf("unknown eta scale: %v", err)
	}
}

// TestRunNumpyInitTies: numpy_argsort plays, round by round, the first k
// arms of NumPy 1.24.2's own argsort of the pull counts, as recorded in
// testdata/numpy_argsort.json for n = 36, k = 3.
func TestRunNumpyInitTies(t *testing.T) {
	b, err := os.ReadFile("testdata/numpy_argsort.json")
	if err != nil {
		t.Fatal(err)
	}
	var cs struct {
		Cases []struct{ Keys, Perm []int } `json:"cases"`
	}
	if err := json.Unmarshal(b, &cs); err != nil {
		t.Fatal(err)
	}
	spec, bench := runSpec(t, 2, 36, 3)
	spec.InitTies = algos.InitTiesNumpy
	tr, _, err := algos.Run(spec, bench)
	if err != nil {
		t.Fatal(err)
	}
	round := 0
	for _, c := range cs.Cases { // the script records n = 36 first
		if len(c.Keys) != 36 {
			break
		}
		want := slices.Sorted(slices.Values(c.Perm[:3]))
		if !slices.Equal(tr.Slates[round], want) {
			t.Fatalf("initial round %d: played %v, NumPy's argsort picks %v", round+1, tr.Slates[round], want)
		}
		round++
	}
	if round != 24 || tr.InitRounds != 24 {
		t.Fatalf("checked %d rounds, InitRounds %d: want the 24 of n = 36, k = 3, m0 = 2", round, tr.InitRounds)
	}
	spec.InitTies = ""
	def, _, _ := algos.Run(spec, bench)
	if slices.EqualFunc(def.Slates[:24], tr.Slates[:24], slices.Equal) {
		t.Fatal("numpy_argsort played the lowest-index round robin")
	}
}
