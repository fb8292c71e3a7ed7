package paretoucb

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"thv/algos"
	"thv/algos/algotest"
	"thv/envs"
)

var family = []string{"ParetoUCB", "ParetoUCB+", "ParetoUCB-Div", "ParetoUCB-Crowd"}

func TestRegistration(t *testing.T) {
	for _, c := range []struct {
		name    string
		fid     algos.Fidelity
		usesEta bool
		cite    string
	}{
		{"ParetoUCB", algos.Faithful, false, "Drugan2013MOBandits"},
		{"ParetoUCB+", algos.Extension, true, "Drugan2013MOBandits"},
		{"ParetoUCB-Div", algos.Extension, true, "Drugan2013MOBandits"},
		{"ParetoUCB-Crowd", algos.Extension, true, "Drugan2013MOBandits,Deb2002NSGA2"},
	} {
		s, err := algos.Lookup(c.name)
		if err != nil {
			t.Fatal(err)
		}
		if s.Family != "paretoucb" || s.Fidelity != c.fid || s.UsesEta != c.usesEta || s.Cite != c.cite || len(s.Params) != 0 {
			t.Errorf("%s registered as %+v", c.name, s)
		}
	}
}

func TestRadius(t *testing.T) {
	for _, c := range []struct {
		eta                float64
		t, d, front, pulls int
		want               float64
		how                string
	}{
		// (d·|F̂|)^{1/4} = 16^{1/4} = 2: sqrt(2·ln(200)/4) = sqrt(2·5.298317/4).
		{1, 100, 2, 8, 4, 1.6276236307187293, "sqrt(2 ln 200 / 4)"},
		// 16^{1/4} = 2 again, t = 1: sqrt(2·0.5·ln 2 / 1).
		{0.5, 1, 4, 4, 1, 0.8325546111576977, "sqrt(ln 2)"},
		// |F̂| = 0 is read as 1: sqrt(2·0.3·(ln 7 + ln(3)/4)/9).
		{0.3, 7, 3, 0, 9, 0.3847564789337398, "sqrt(0.6 (ln 7 + ln 3 / 4) / 9)"},
		// N = 0 is read as 1.
		{1, 100, 2, 8, 0, math.Sqrt(2 * math.Log(200)), "sqrt(2 ln 200)"},
	} {
		if got := Radius(c.eta, c.t, c.d, c.front, c.pulls); math.Abs(got-c.want) > 1e-14 {
			t.Errorf("Radius(%v, t=%d, d=%d, |F|=%d, N=%d) = %v, want %s = %v", c.eta, c.t, c.d, c.front, c.pulls, got, c.how, c.want)
		}
	}
}

// state builds the named policy with the given means and pull counts.
func state(t *testing.T, name string, eta float64, means [][]float64, counts []int, seed uint64) *Policy {
	t.Helper()
	spec, err := algos.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	pol, err := spec.NewPolicy(algos.Problem{N: len(means), D: len(means[0]), K: 3, T: 1000}, eta, nil, rand.New(rand.NewPCG(seed, 1)))
	if err != nil {
		t.Fatal(err)
	}
	p := pol.(*Policy)
	for i, m := range means {
		copy(p.Mean[i], m)
		p.Count[i] = 7
		if counts != nil {
			p.Count[i] = counts[i]
		}
	}
	return p
}

func choose(p *Policy, k int) []int {
	s := make([]int, k)
	p.Select(50, s)
	slices.Sort(s)
	return s
}

// TestUCBVectors: U_i = μ̂_i + β_i·1 with |F̂| taken on μ̂ (here 3 of 4
// arms), N_i per arm, η for the + variants and η = 1 for ParetoUCB whatever
// η it is given.
func TestUCBVectors(t *testing.T) {
	means := [][]float64{{0.9, 0.1, 0.2}, {0.1, 0.9, 0.2}, {0.2, 0.2, 0.8}, {0.1, 0.1, 0.1}}
	// Arm 3 is dominated in μ̂ but, pulled once, its U dominates all others:
	// |F̂| on U would be 1, not 3.
	counts := []int{25, 16, 9, 1}
	for _, name := range family {
		p := state(t, name, 0.3, means, counts, 1)
		p.Select(50, make([]int, 2))
		eta := 0.3
		if name == "ParetoUCB" {
			eta = 1
		}
		for i, m := range means {
			beta := Radius(eta, 50, 3, 3, counts[i])
			for j := range m {
				if got, want := p.upper[i][j], m[j]+beta; math.Abs(got-want) > 1e-15 {
					t.Fatalf("%s: U[%d][%d] = %v, want μ̂ + β = %v", name, i, j, got, want)
				}
			}
		}
	}
}

// The layers of the hand-built instance (2-D, equal pull counts, so U is μ̂
// shifted by the same β and keeps its layers, sums and distances):
//
//	layer 1: 0 (1, 0), 1 (.95, .4), 2 (.8, .6), 3 (.55, .82), 4 (0, 1)
//	         sums 1, 1.35, 1.4, 1.37, 1
//	layer 2: 5 (.5, .5), 7 (.3, .55), 8 (.6, .2)     sums 1, .85, .8
//	layer 3: 6 (.1, .1)
var layered = [][]float64{
	{1, 0}, {0.95, 0.4}, {0.8, 0.6}, {0.55, 0.82}, {0, 1},
	{0.5, 0.5}, {0.1, 0.1}, {0.3, 0.55}, {0.6, 0.2},
}

func TestTieBreaks(t *testing.T) {
	for _, c := range []struct {
		name string
		k    int
		want []int
		why  string
	}{
		// Layer 1 overflows (5 arms, k = 3).
		{"ParetoUCB+", 3, []int{1, 2, 3}, "largest Σ U: 2 (1.4), 3 (1.37), 1 (1.35)"},
		{"ParetoUCB-Div", 3, []int{0, 2, 4},
			"empty slate: largest Σ U first (2); ℓ∞ from 2: 0 .6, 1 .2, 3 .25, 4 .8 → 4; min over {2, 4}: 0 .6, 1 .2, 3 .25 → 0"},
		{"ParetoUCB-Crowd", 3, []int{0, 3, 4},
			"crowding 0 +Inf, 1 .2+.6 = .8, 2 .4+.42 = .82, 3 .8+.4 = 1.2, 4 +Inf"},
		// Layer 1 fits whole; layer 2 overflows (3 arms, 1 slot).
		{"ParetoUCB+", 6, []int{0, 1, 2, 3, 4, 5}, "largest Σ U of layer 2: 5 (1.0)"},
		{"ParetoUCB-Div", 6, []int{0, 1, 2, 3, 4, 8},
			"min ℓ∞ to layer 1: 5 .3 (to 2), 7 .27 (to 3), 8 .35 (to 1) → 8 (ignoring layer 1 it would take the largest Σ, 5)"},
		{"ParetoUCB-Crowd", 6, []int{0, 1, 2, 3, 4, 7},
			"crowding in layer 2: 7 and 8 +Inf, 5 2; Σ U breaks the tie: 7 (.85) over 8 (.8)"},
		{"ParetoUCB-Div", 7, []int{0, 1, 2, 3, 4, 5, 8}, "then min over {layer 1, 8}: 5 .3, 7 .27 → 5"},
		// Whole layers give exactly k: no tie-break, the same for all.
		{"ParetoUCB", 8, []int{0, 1, 2, 3, 4, 5, 7, 8}, "layers 1 and 2"},
		{"ParetoUCB+", 8, []int{0, 1, 2, 3, 4, 5, 7, 8}, "layers 1 and 2"},
		{"ParetoUCB-Div", 8, []int{0, 1, 2, 3, 4, 5, 7, 8}, "layers 1 and 2"},
		{"ParetoUCB-Crowd", 8, []int{0, 1, 2, 3, 4, 5, 7, 8}, "layers 1 and 2"},
	} {
		if got := choose(state(t, c.name, 0.1, layered, nil, 1), c.k); !slices.Equal(got, c.want) {
			t.Errorf("%s, k = %d: chose %v, want %v (%s)", c.name, c.k, got, c.want, c.why)
		}
	}
}

// TestUniformTieBreak: ParetoUCB takes layer 1 whole and a uniformly random
// arm of the overflowing layer 2, drawn from its own stream.
func TestUniformTieBreak(t *testing.T) {
	p := state(t, "ParetoUCB", 0, layered, nil, 1)
	count := make([]int, len(layered))
	const R = 3000
	for range R {
		for _, i := range choose(p, 6) {
			count[i]++
		}
	}
	for i, c := range count {
		switch {
		case i <= 4 && c != R, i == 6 && c != 0:
			t.Fatalf("counts %v: layer 1 every time, arm 6 never", count)
		case (i == 5 || i == 7 || i == 8) && math.Abs(float64(c)/R-1.0/3) > 0.04:
			t.Fatalf("counts %v: each layer-2 arm ≈ 1/3 of the time", count)
		}
	}
	// The same stream gives the same choices, another stream others.
	a, b, other := state(t, "ParetoUCB", 0, layered, nil, 9), state(t, "ParetoUCB", 0, layered, nil, 9), state(t, "ParetoUCB", 0, layered, nil, 10)
	differ := false
	for range 50 {
		x, y, z := choose(a, 6), choose(b, 6), choose(other, 6)
		if !slices.Equal(x, y) {
			t.Fatalf("same seed, different choices %v %v", x, y)
		}
		differ = differ || !slices.Equal(x, z)
	}
	if !differ {
		t.Fatal("different seeds gave the same 50 choices")
	}
}

// TestTieBreakRules checks the Div and Crowd rules on U set by hand, where
// exact ties can be built: lowest index on equal distances, on the largest
// Σ U for Div's first pick, and on equal crowding and Σ U for Crowd.
func TestTieBreakRules(t *testing.T) {
	p := state(t, "ParetoUCB-Div", 0.1, [][]float64{{0, 0}, {0, 0}, {0, 0}, {0, 0}}, nil, 1)
	set := func(u [][]float64) {
		for i := range u {
			copy(p.upper[i], u[i])
			p.sum[i] = u[i][0] + u[i][1]
		}
	}
	// 0 (1, 0) Σ 1, 1 (.5, .75) Σ 1.25, 2 (0, 1) Σ 1, 3 (.75, .5) Σ 1.25.
	set([][]float64{{1, 0}, {0.5, 0.75}, {0, 1}, {0.75, 0.5}})
	out := make([]int, 2)
	// Empty slate: Σ ties between 1 and 3 → 1. ℓ∞ from 1: 0 .75, 2 .5, 3 .25 → 0.
	p.farthest(nil, []int{0, 1, 2, 3}, out)
	if !slices.Equal(out, []int{1, 0}) {
		t.Errorf("farthest from nothing: %v, want [1 0]", out)
	}
	// From arm 1 chosen earlier: 0 and 3? ℓ∞ 0 .75, 2 .5, 3 .25 → 0; then
	// min over {1, 0}: 2 min(.5, 1) = .5, 3 min(.25, .5) = .25 → 2.
	p.farthest([]int{1}, []int{0, 2, 3}, out)
	if !slices.Equal(out, []int{0, 2}) {
		t.Errorf("farthest from {1}: %v, want [0 2]", out)
	}
	// Equal distances: from (.5, .5), arms 0 (1, 0) and 2 (0, 1) are both
	// at .5: the lower index wins.
	set([][]float64{{1, 0}, {0.5, 0.5}, {0, 1}, {0.5, 0.5}})
	p.farthest([]int{1}, []int{2, 0}, out[:1])
	if out[0] != 0 {
		t.Errorf("farthest tie: %d, want 0", out[0])
	}
	// Crowding: 0 and 2 are the boundaries (+Inf) with equal Σ: the lower
	// index first; arm 1 is interior.
	set([][]float64{{1, 0}, {0.5, 0.6}, {0, 1}, {0, 0}})
	p.crowding([]int{0, 1, 2}, out)
	if !slices.Equal(out, []int{0, 2}) {
		t.Errorf("crowding with equal +Inf and Σ: %v, want [0 2]", out)
	}
	// Unequal Σ among the boundaries: the larger Σ first.
	set([][]float64{{1, 0}, {0.5, 0.6}, {0, 1.2}, {0, 0}})
	p.crowding([]int{0, 1, 2}, out[:1])
	if out[0] != 2 {
		t.Errorf("crowding tie on +Inf: %d, want 2 (Σ 1.2)", out[0])
	}
}

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
		fresh := func() *Policy {
			pol, err := spec.NewPolicy(algos.Problem{N: 150, D: 5, K: 6, T: 1000, Sigma: 0.02}, 0.1, nil, rand.New(rand.NewPCG(1, 1)))
			if err != nil {
				t.Fatal(err)
			}
			p := pol.(*Policy)
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

// TestEqualSumsByRoundingTieToLowestIndex: four arms with the same count
// and means that are permutations of (x, y, z) form one Pareto layer whose
// members all have the same Σ_j U_ij in exact arithmetic; the sums formed
// in coordinate order differ in the last bit, some above arm 0's. Every
// tie-break by Σ_j U_ij must take arm 0: ParetoUCB+'s, ParetoUCB-Div's
// first pick, and ParetoUCB-Crowd's among members of equal (infinite)
// crowding distance.
func TestEqualSumsByRoundingTieToLowestIndex(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 28))
	for _, name := range family[1:] {
		for trial := 0; ; trial++ {
			if trial == 100000 {
				t.Fatalf("%s: no permutation found whose sums differ", name)
			}
			x, y, z := 0.1+0.25*rng.Float64(), 0.4+0.25*rng.Float64(), 0.7+0.25*rng.Float64()
			p := state(t, name, 0.01, [][]float64{{x, y, z}, {y, z, x}, {z, x, y}, {y, x, z}}, nil, 1)
			slate := make([]int, 1)
			p.Select(100, slate)
			if slices.Max(p.sum[1:4]) <= p.sum[0] {
				continue // the rounded sums put arm 0 first anyway
			}
			if slate[0] != 0 {
				t.Fatalf("%s: sums %v (equal exactly): Select = %v, want [0]", name, p.sum[:4], slate)
			}
			break
		}
	}
}
