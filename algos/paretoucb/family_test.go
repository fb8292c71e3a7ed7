package paretoucb_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"thv/algos"
	"thv/algos/algotest"
	_ "thv/algos/paretodiv" // ParetoUCB-Div
	"thv/algos/paretoucb"
	"thv/envs"
)

// Tests of the four algorithms of the family, ParetoUCB-Div's included.

var family = []string{"ParetoUCB", "ParetoUCB+", "ParetoUCB-Div", "ParetoUCB-Crowd"}

// simulate runs one algorithm on instance in through algos.Simulate.
func simulate(t *testing.T, name string, in *envs.Instance, sigma float64, k, T int, envSeed, policySeed uint64) *algos.Trace {
	t.Helper()
	return algotest.RunOn(t, name, in, 0.1, sigma, sigma, k, T, envSeed, rand.New(rand.NewPCG(policySeed, 7)))
}

// TestSimulate runs every algorithm on every geometry: valid slates (Simulate
// rejects anything else), identical runs for identical seeds; ParetoUCB's
// slates depend on its stream, the other three never use it.
func TestSimulate(t *testing.T) {
	for _, name := range family {
		for _, g := range envs.Geometries {
			for _, s := range []struct{ d, n, k int }{{2, 20, 3}, {3, 24, 4}, {5, 30, 6}} {
				in, err := envs.Generate(g, s.d, s.n, 3)
				if err != nil {
					t.Fatal(err)
				}
				a := simulate(t, name, in, 0.05, s.k, 300, 3, 1)
				b := simulate(t, name, in, 0.05, s.k, 300, 3, 1)
				c := simulate(t, name, in, 0.05, s.k, 300, 3, 2)
				if !slices.EqualFunc(a.Slates, b.Slates, slices.Equal) {
					t.Fatalf("%s on %s d=%d: identical seeds, different slates", name, g, s.d)
				}
				same := slices.EqualFunc(a.Slates, c.Slates, slices.Equal)
				if random := name == "ParetoUCB"; random == same {
					t.Fatalf("%s on %s d=%d: another policy seed gives the same slates: %v (want %v)", name, g, s.d, same, !random)
				}
			}
		}
	}
}

// paretoOptimal marks the arms no other arm dominates.
func paretoOptimal(means [][]float64) []bool {
	opt := make([]bool, len(means))
	for i := range means {
		opt[i] = !slices.ContainsFunc(means, func(m []float64) bool { return algos.Dominates(m, means[i]) })
	}
	return opt
}

// TestLearnsFront: on noiseless instances, after 10,000 rounds at least
// 90% of the last 1,000 slates are made of Pareto-optimal arms only, and so
// is the slate played most often. (A random slate would be about 10%. The
// linear front is left out: its clipped arms are weakly dominated by
// others, with gaps too small to leave.)
func TestLearnsFront(t *testing.T) {
	for _, name := range family {
		for _, g := range []envs.Geometry{envs.Concave, envs.Convex, envs.Clusters} {
			for _, s := range []struct{ d, n, k int }{{2, 20, 3}, {3, 24, 3}} {
				in, err := envs.Generate(g, s.d, s.n, 1)
				if err != nil {
					t.Fatal(err)
				}
				opt := paretoOptimal(in.Means)
				tr := simulate(t, name, in, 0, s.k, 10000, 1, 1)
				good := 0
				freq := map[[8]int]int{}
				var mode [8]int
				for _, sl := range tr.Slates[len(tr.Slates)-1000:] {
					if !slices.ContainsFunc(sl, func(i int) bool { return !opt[i] }) {
						good++
					}
					var key [8]int
					copy(key[:], sl)
					if freq[key]++; freq[key] > freq[mode] {
						mode = key
					}
				}
				if good < 900 {
					t.Errorf("%s on %s d=%d: %d of the last 1000 slates are Pareto-optimal only, want ≥ 900", name, g, s.d, good)
				}
				for _, i := range mode[:s.k] {
					if !opt[i] {
						t.Errorf("%s on %s d=%d: most played slate %v has a dominated arm", name, g, s.d, mode[:s.k])
					}
				}
			}
		}
	}
}

// TestSelectDoesNotAllocate: not on the first call after New, nor later.
func TestSelectDoesNotAllocate(t *testing.T) {
	in, err := envs.Generate(envs.Concave, 5, 150, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range family {
		spec, _ := algos.Lookup(name)
		fresh := func() *paretoucb.Policy {
			pol, err := spec.NewPolicy(algos.Problem{N: 150, D: 5, K: 6, T: 1000, Sigma: 0.02}, 0.1, nil, rand.New(rand.NewPCG(1, 1)))
			if err != nil {
				t.Fatal(err)
			}
			p := pol.(*paretoucb.Policy)
			for i, m := range in.Means {
				copy(p.Mean[i], m)
				p.Count[i] = 2 + i%5
			}
			return p
		}
		slate := make([]int, 6)
		if n := algotest.FirstCallMallocs(3, func() func() {
			p := fresh()
			return func() { p.Select(300, slate) }
		}); n != 0 {
			t.Errorf("%s: first Select after New allocated %d times", name, n)
		}
		p := fresh()
		p.Select(300, slate)
		t0 := 301
		if a := testing.AllocsPerRun(20, func() {
			p.Mean[t0%150][0] += 1e-3 // as after an observation
			p.Touch(t0 % 150)
			p.Select(t0, slate)
			t0++
		}); a != 0 {
			t.Errorf("%s: Select allocates %v times per call", name, a)
		}
	}
}
