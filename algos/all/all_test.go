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
