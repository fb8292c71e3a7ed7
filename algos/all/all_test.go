package all

import (
	"slices"
	"testing"

	"thv/algos"
	"thv/envs"
)

// TestEveryPolicy runs each registered algorithm (the paper's fourteen
// first, in PaperOrder) on every geometry: every slate has k distinct valid
// arms (Simulate rejects anything else), runs are deterministic for a seed,
// and the forced initialisation is the same round-robin for all.
func TestEveryPolicy(t *testing.T) {
	var names []string
	for _, spec := range algos.All() {
		names = append(names, spec.Name)
	}
	if len(names) < len(algos.PaperOrder) || !slices.Equal(names[:len(algos.PaperOrder)], algos.PaperOrder) {
		t.Fatalf("registered %v, want the paper's %v first", names, algos.PaperOrder)
	}
	for _, spec := range algos.All() {
		for _, g := range envs.Geometries {
			for _, s := range []struct{ d, n, k int }{{2, 20, 3}, {3, 24, 4}} {
				run := func() *algos.Trace {
					in, err := envs.Generate(g, s.d, s.n, 4)
					if err != nil {
						t.Fatal(err)
					}
					tr, _, err := algos.Run(algos.RunSpec{
						Algo: spec.Name, Eta: 0.1, Instance: in, K: s.k, T: 150, Sigma: 0.05,
						Seed: 4, MinPulls: 2, Window: 100,
					}, algos.ComputeBenchmarks(in, s.k, nil))
					if err != nil {
						t.Fatalf("%s on %s d=%d: %v", spec.Name, g, s.d, err)
					}
					return tr
				}
				a, b := run(), run()
				for r := range a.Slates {
					if !slices.Equal(a.Slates[r], b.Slates[r]) {
						t.Fatalf("%s on %s d=%d: round %d differs between identical runs", spec.Name, g, s.d, r+1)
					}
				}
				// Round-robin: the k arms with fewest pulls, lowest index first.
				init := algos.InitRounds(s.n, s.k, 2)
				counts := make([]int, s.n)
				for r := 0; r < init; r++ {
					var want []int
					for c := 0; len(want) < s.k; c++ {
						for i := 0; i < s.n && len(want) < s.k; i++ {
							if counts[i] == c {
								want = append(want, i)
							}
						}
					}
					for _, i := range want {
						counts[i]++
					}
					slices.Sort(want)
					if !slices.Equal(a.Slates[r], want) {
						t.Fatalf("%s: initialisation round %d played %v, want %v", spec.Name, r+1, a.Slates[r], want)
					}
				}
			}
		}
	}
}

// TestLearnersBeatRandom: on the paper's d = 2 concave setting every
// learning algorithm ends with a higher HV_last100 than RandomK.
func TestLearnersBeatRandom(t *testing.T) {
	in, _ := envs.Generate(envs.Concave, 2, 36, 0)
	bench := algos.ComputeBenchmarks(in, 3, nil)
	hvLast := func(name string) float64 {
		_, s, err := algos.Run(algos.RunSpec{Algo: name, Eta: 0.1, Instance: in, K: 3, T: 2000, Sigma: 0.05, Seed: 0, MinPulls: 2, Window: 100}, bench)
		if err != nil {
			t.Fatal(err)
		}
		return s.HVLast
	}
	random := hvLast("RandomK")
	for _, spec := range algos.All() {
		if !spec.Learns {
			continue // a baseline that ignores its feedback, as RandomK does
		}
		if v := hvLast(spec.Name); v <= random {
			t.Errorf("%s: HV_last100 %.4f ≤ RandomK's %.4f", spec.Name, v, random)
		}
	}
}

// TestSharedSlateVolumes: runs that share their slates' volumes (one
// SlateHVs per instance, used by several runs at once) give the traces
// and summaries of runs that do not; a memo of another instance or
// reference point is refused.
func TestSharedSlateVolumes(t *testing.T) {
	in, err := envs.Generate(envs.Concave, 3, 30, 2)
	if err != nil {
		t.Fatal(err)
	}
	bench := algos.ComputeBenchmarks(in, 4, nil)
	spec := func(algo string, seed uint64, hvs *algos.SlateHVs) algos.RunSpec {
		return algos.RunSpec{Algo: algo, Eta: 0.1, Instance: in, K: 4, T: 400, Sigma: 0.05, Seed: seed, MinPulls: 2, Window: 50, HVs: hvs}
	}
	shared := algos.NewSlateHVs(in.Means, nil)
	type result struct {
		tr  *algos.Trace
		sum algos.Summary
	}
	runs := []struct {
		algo string
		seed uint64
	}{{"THV-UCB", 0}, {"ParetoUCB", 0}, {"THV-UCB", 1}, {"ScalarUCB", 2}, {"RandomK", 3}}
	got := make([]result, len(runs))
	done := make(chan int)
	for r, run := range runs {
		go func() {
			tr, s, err := algos.Run(spec(run.algo, run.seed, shared), bench)
			if err != nil {
				t.Error(err)
			}
			got[r] = result{tr, s}
			done <- r
		}()
	}
	for range runs {
		<-done
	}
	for r, run := range runs {
		tr, s, err := algos.Run(spec(run.algo, run.seed, nil), bench)
		if err != nil {
			t.Fatal(err)
		}
		if got[r].tr == nil || !slices.Equal(got[r].tr.HV, tr.HV) || got[r].sum != s {
			t.Errorf("%s seed %d: shared volumes change the run", run.algo, run.seed)
		}
	}
	other, _ := envs.Generate(envs.Concave, 3, 30, 3)
	for _, hvs := range []*algos.SlateHVs{algos.NewSlateHVs(other.Means, nil), algos.NewSlateHVs(in.Means, []float64{0.1, 0, 0})} {
		if _, _, err := algos.Run(spec("RandomK", 0, hvs), bench); err == nil {
			t.Error("a memo of another instance or reference point is used")
		}
	}
}
