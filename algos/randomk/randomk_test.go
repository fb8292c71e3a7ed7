package randomk

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"thv/algos"
	"thv/algos/algotest"
	"thv/envs"
)

func build(t testing.TB, prob algos.Problem, rng *rand.Rand) algos.Policy {
	t.Helper()
	spec, err := algos.Lookup("RandomK")
	if err != nil {
		t.Fatal(err)
	}
	p, err := spec.NewPolicy(prob, 0, nil, rng)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func simulate(t testing.TB, g envs.Geometry, d, n, k, T int, seed, policySeed uint64) *algos.Trace {
	t.Helper()
	inst, err := envs.Generate(g, d, n, seed)
	if err != nil {
		t.Fatal(err)
	}
	b, err := envs.NewBandit(inst, 0.05, seed)
	if err != nil {
		t.Fatal(err)
	}
	p := build(t, algos.Problem{N: n, D: d, K: k, T: T}, envs.NewStream(policySeed, "policy/RandomK"))
	tr, err := algos.Simulate(p, b, k, T, algos.DefaultMinPulls, nil)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func TestRegistered(t *testing.T) {
	s, err := algos.Lookup("RandomK")
	if err != nil {
		t.Fatal(err)
	}
	if s.Family != "randomk" || s.Fidelity != algos.Unmarked || s.UsesEta {
		t.Errorf("spec %+v", s)
	}
}

func TestSimulateDeterministic(t *testing.T) {
	for _, g := range envs.Geometries {
		for _, d := range []int{2, 3} {
			t.Run(fmt.Sprintf("%s/d%d", g, d), func(t *testing.T) {
				a := simulate(t, g, d, 20, 3, 300, 7, 7)
				b := simulate(t, g, d, 20, 3, 300, 7, 7)
				if !slices.EqualFunc(a.Slates, b.Slates, slices.Equal) {
					t.Fatal("same seed, different slates")
				}
				c := simulate(t, g, d, 20, 3, 300, 7, 8)
				if slices.EqualFunc(a.Slates, c.Slates, slices.Equal) {
					t.Fatal("different policy seeds, same slates")
				}
			})
		}
	}
}

func chiSquare(freq []int, expected float64) float64 {
	var chi float64
	for _, f := range freq {
		chi += (float64(f) - expected) * (float64(f) - expected) / expected
	}
	return chi
}

// Arm frequencies are uniform (each arm is in a slate with probability
// k/n), every slate has k distinct arms, and each of the C(n, k) subsets is
// equally likely (which arm frequencies alone would not show).
func TestUniform(t *testing.T) {
	t.Run("arms", func(t *testing.T) {
		const n, k, R = 12, 4, 30000
		p := build(t, algos.Problem{N: n, D: 2, K: k, T: R}, rand.New(rand.NewPCG(1, 2)))
		freq := make([]int, n)
		slate := make([]int, k)
		for r := 0; r < R; r++ {
			p.Select(r+1, slate)
			seen := map[int]bool{}
			for _, i := range slate {
				if i < 0 || i >= n || seen[i] {
					t.Fatalf("invalid slate %v", slate)
				}
				seen[i] = true
				freq[i]++
			}
		}
		if chi := chiSquare(freq, float64(R*k)/n); chi > 45 { // 11 d.o.f.: p ≈ 10⁻⁵
			t.Fatalf("arm frequencies %v (χ² = %.1f)", freq, chi)
		}
	})
	t.Run("subsets", func(t *testing.T) {
		const n, k, R = 6, 2, 30000
		p := build(t, algos.Problem{N: n, D: 2, K: k, T: R}, rand.New(rand.NewPCG(3, 4)))
		freq := make([]int, n*n)
		slate := make([]int, k)
		for r := 0; r < R; r++ {
			p.Select(r+1, slate)
			a, b := min(slate[0], slate[1]), max(slate[0], slate[1])
			freq[a*n+b]++
		}
		var pairs []int
		for a := 0; a < n; a++ {
			for b := a + 1; b < n; b++ {
				pairs = append(pairs, freq[a*n+b])
			}
		}
		if chi := chiSquare(pairs, float64(R)/15); chi > 50 { // 14 d.o.f.: p ≈ 10⁻⁵
			t.Fatalf("subset frequencies %v (χ² = %.1f)", pairs, chi)
		}
	})
}

func TestSelectAllocFree(t *testing.T) {
	p := build(t, algos.Problem{N: 150, D: 5, K: 6, T: 5000}, rand.New(rand.NewPCG(1, 1)))
	slate := make([]int, 6)
	if a := testing.AllocsPerRun(100, func() { p.Select(1, slate) }); a != 0 {
		t.Errorf("Select allocates %v times per call", a)
	}
}

// BenchmarkSelect times whole runs and learned-state rounds in the paper's
// d = 5 setting (algotest.BenchmarkRuns).
func BenchmarkSelect(b *testing.B) {
	algotest.BenchmarkRuns(b, []string{"RandomK"}, 0)
}

// TestOnce: with once = 1 the first decision's random slate is played in
// every later round; with the default, slates change.
func TestOnce(t *testing.T) {
	prob := algos.Problem{N: 20, D: 2, K: 4, T: 50}
	spec, _ := algos.Lookup("RandomK")
	for _, once := range []float64{0, 1} {
		p, err := spec.NewPolicy(prob, 0, map[string]float64{"once": once}, envs.NewStream(3, "policy/RandomK"))
		if err != nil {
			t.Fatal(err)
		}
		first := make([]int, 4)
		p.Select(25, first)
		changed := false
		for tt := 26; tt < 50; tt++ {
			s := make([]int, 4)
			p.Select(tt, s)
			changed = changed || !slices.Equal(s, first)
		}
		if changed != (once == 0) {
			t.Fatalf("once = %v: slates changed = %v", once, changed)
		}
	}
	if _, err := spec.NewPolicy(prob, 0, map[string]float64{"once": 0.5}, envs.NewStream(3, "x")); err == nil || !strings.Contains(err.Error(), "want one of") {
		t.Fatalf("once = 0.5 accepted: %v", err)
	}
}
