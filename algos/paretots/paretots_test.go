package paretots

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"thv/algos"
	"thv/algos/algotest"
	"thv/envs"
	"thv/envs/fmath"
)

var family = []string{"ParetoTS", "ParetoTS+"}

func TestRegistration(t *testing.T) {
	ts, err := algos.Lookup("ParetoTS")
	if err != nil {
		t.Fatal(err)
	}
	if ts.Family != "paretots" || ts.Fidelity != algos.Faithful || ts.UsesEta || ts.Cite != "yahyaa2015thompson" || len(ts.Params) != 0 {
		t.Errorf("ParetoTS registered as %+v", ts)
	}
	plus, err := algos.Lookup("ParetoTS+")
	if err != nil {
		t.Fatal(err)
	}
	if plus.Family != "paretots" || plus.Fidelity != algos.Extension || plus.UsesEta || plus.Cite != "yahyaa2015thompson" ||
		len(plus.Params) != 1 || plus.Params[0].Name != "sigma_prior" || plus.Params[0].Default != 0.1 ||
		!strings.Contains(plus.Params[0].Doc, "our choice") {
		t.Errorf("ParetoTS+ registered as %+v", plus)
	}
}

// state builds the named policy with σ_obs = sigma, the given parameters,
// means and pull counts, and the policy stream PCG(seed, 1).
func state(t *testing.T, name string, sigma float64, params map[string]float64, means [][]float64, counts []int, seed uint64) *Policy {
	t.Helper()
	spec, err := algos.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	pol, err := spec.NewPolicy(algos.Problem{N: len(means), D: len(means[0]), K: 3, T: 1000, Sigma: sigma}, 0, params, rand.New(rand.NewPCG(seed, 1)))
	if err != nil {
		t.Fatal(err)
	}
	p := pol.(*Policy)
	for i, m := range means {
		copy(p.Mean[i], m)
		p.Count[i] = 100
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

// The layers of the hand-built instance (2-D):
//
//	layer 1: 0 (1, 0), 1 (.95, .4), 2 (.8, .6), 3 (.55, .82), 4 (0, 1)
//	         sums 1, 1.35, 1.4, 1.37, 1
//	layer 2: 5 (.5, .5), 7 (.3, .55), 8 (.6, .2)     sums 1, .85, .8
//	layer 3: 6 (.1, .1)
//
// Every dominance and sum gap is ≥ .02.
var layered = [][]float64{
	{1, 0}, {0.95, 0.4}, {0.8, 0.6}, {0.55, 0.82}, {0, 1},
	{0.5, 0.5}, {0.1, 0.1}, {0.3, 0.55}, {0.6, 0.2},
}

// bruteLayers is non-dominated sorting by its definition, ascending.
func bruteLayers(points [][]float64) [][]int {
	done := make([]bool, len(points))
	var layers [][]int
	for left := len(points); left > 0; {
		var layer []int
		for i := range points {
			if done[i] {
				continue
			}
			dominated := false
			for j := range points {
				if !done[j] && algos.Dominates(points[j], points[i]) {
					dominated = true
				}
			}
			if !dominated {
				layer = append(layer, i)
			}
		}
		for _, i := range layer {
			done[i] = true
		}
		left -= len(layer)
		layers = append(layers, layer)
	}
	return layers
}

// TestSamplesAndSlate recomputes a round from the definition with a copy of
// the policy's stream: θ_ij = μ̂_ij + σ_i·z, z from NormFloat64 arm by arm,
// coordinate by coordinate, σ_i² = σ_obs²/N_i (ParetoTS) or
// (σ_prior² + σ_obs²)/N_i (ParetoTS+); then whole layers of θ and, for
// ParetoTS, a uniform subset of the overflowing layer drawn from the same
// stream (partial Fisher–Yates over the layer in ascending order), for
// ParetoTS+ its largest Σ_j θ_ij.
func TestSamplesAndSlate(t *testing.T) {
	counts := []int{1, 4, 9, 16, 25, 36, 49, 64, 81}
	for _, c := range []struct {
		name     string
		params   map[string]float64
		variance float64 // N_i·σ_i²
	}{
		{"ParetoTS", nil, 0.3 * 0.3},
		{"ParetoTS+", map[string]float64{"sigma_prior": 0.2}, 0.2*0.2 + 0.3*0.3},
	} {
		for seed := range uint64(20) {
			p := state(t, c.name, 0.3, c.params, layered, counts, seed)
			slate := make([]int, 4)
			p.Select(50, slate)
			rng := rand.New(rand.NewPCG(seed, 1))
			theta := make([][]float64, len(layered))
			for i, m := range layered {
				sd := math.Sqrt(c.variance / float64(counts[i]))
				theta[i] = make([]float64, len(m))
				for j := range m {
					theta[i][j] = m[j] + float64(sd*fmath.NormFloat64(rng)) // as the policy: never fused
					if theta[i][j] != p.theta[i][j] {
						t.Fatalf("%s seed %d: θ[%d][%d] = %v, want %v", c.name, seed, i, j, p.theta[i][j], theta[i][j])
					}
				}
			}
			var want []int
			for _, layer := range bruteLayers(theta) {
				if len(want)+len(layer) <= len(slate) {
					want = append(want, layer...)
					continue
				}
				rest := make([]int, len(slate)-len(want))
				if c.name == "ParetoTS" {
					algos.PickUniform(slices.Clone(layer), rest, rng)
				} else {
					sums := make([]float64, len(theta))
					algos.CoordSums(theta, sums)
					algos.PickLargest(sums, slices.Clone(layer), rest)
				}
				want = append(want, rest...)
				break
			}
			got := slices.Clone(slate)
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("%s seed %d: slate %v, want %v (θ = %v)", c.name, seed, got, want, theta)
			}
		}
	}
}

// TestTieBreaks: with σ_i about 10⁻⁴, far below every gap of the instance,
// ParetoTS+ takes the largest Σ θ of the overflowing layer, and ParetoTS a
// uniformly random subset of it; both take whole layers first.
func TestTieBreaks(t *testing.T) {
	tiny := map[string]float64{"sigma_prior": 1e-3}
	for _, c := range []struct {
		k    int
		want []int
		why  string
	}{
		{3, []int{1, 2, 3}, "layer 1 overflows: largest Σ θ 2 (1.4), 3 (1.37), 1 (1.35)"},
		{6, []int{0, 1, 2, 3, 4, 5}, "layer 1 whole, then the largest Σ θ of layer 2: 5 (1.0)"},
		{7, []int{0, 1, 2, 3, 4, 5, 7}, "then 7 (.85) before 8 (.8)"},
		{8, []int{0, 1, 2, 3, 4, 5, 7, 8}, "layers 1 and 2 whole"},
	} {
		p := state(t, "ParetoTS+", 1e-3, tiny, layered, nil, 1)
		for range 20 {
			if got := choose(p, c.k); !slices.Equal(got, c.want) {
				t.Fatalf("ParetoTS+ k = %d: chose %v, want %v (%s)", c.k, got, c.want, c.why)
			}
		}
	}
	p := state(t, "ParetoTS", 1e-3, nil, layered, nil, 1)
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
			t.Fatalf("ParetoTS counts %v: layer 1 every time, arm 6 never", count)
		case (i == 5 || i == 7 || i == 8) && math.Abs(float64(c)/R-1.0/3) > 0.04:
			t.Fatalf("ParetoTS counts %v: each layer-2 arm ≈ 1/3 of the time", count)
		}
	}
}

// TestPointMass: with σ_obs = 0 (and σ_prior = 0) the posterior is a point
// mass: θ = μ̂ exactly, no NaN even for an arm never pulled, no normal
// draws (the stream serves the uniform choice only).
func TestPointMass(t *testing.T) {
	counts := []int{0, 3, 3, 3, 3, 3, 3, 3, 3}
	p := state(t, "ParetoTS", 0, nil, layered, counts, 5)
	slate := make([]int, 6)
	p.Select(50, slate)
	for i, m := range layered {
		if !slices.Equal(p.theta[i], m) {
			t.Fatalf("θ[%d] = %v, want μ̂ = %v", i, p.theta[i], m)
		}
	}
	rest := make([]int, 1)
	algos.PickUniform([]int{5, 7, 8}, rest, rand.New(rand.NewPCG(5, 1)))
	if want := append([]int{0, 1, 2, 3, 4}, rest[0]); !slices.Equal(slate, want) {
		t.Fatalf("slate %v, want %v (the stream's first draw picks in layer 2)", slate, want)
	}
	q := state(t, "ParetoTS+", 0, map[string]float64{"sigma_prior": 0}, layered, counts, 5)
	if got := choose(q, 6); !slices.Equal(got, []int{0, 1, 2, 3, 4, 5}) {
		t.Fatalf("ParetoTS+ point mass: %v", got)
	}
	// σ > 0 with N = 0 (read as 1): finite samples.
	r := state(t, "ParetoTS+", 0.1, nil, layered, counts, 5)
	r.Select(50, slate)
	for i := range r.theta {
		for _, x := range r.theta[i] {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				t.Fatalf("θ[%d] = %v", i, r.theta[i])
			}
		}
	}
}

// simulate runs one algorithm through algos.Simulate; the policy is told
// σ_obs = policySigma, the bandit's noise is envSigma.
func simulate(t *testing.T, name string, in *envs.Instance, envSigma, policySigma float64, k, T int, envSeed, policySeed uint64) *algos.Trace {
	t.Helper()
	return algotest.RunOn(t, name, in, 0, envSigma, policySigma, k, T, envSeed, rand.New(rand.NewPCG(policySeed, 7)))
}

// TestSimulate runs both algorithms on every geometry: valid slates
// (Simulate rejects anything else), identical runs for identical seeds,
// different runs for different policy streams.
func TestSimulate(t *testing.T) {
	for _, name := range family {
		for _, g := range envs.Geometries {
			for _, s := range []struct{ d, n, k int }{{2, 20, 3}, {3, 24, 4}, {5, 30, 6}} {
				in, err := envs.Generate(g, s.d, s.n, 3)
				if err != nil {
					t.Fatal(err)
				}
				a := simulate(t, name, in, 0.05, 0.05, s.k, 300, 3, 1)
				b := simulate(t, name, in, 0.05, 0.05, s.k, 300, 3, 1)
				c := simulate(t, name, in, 0.05, 0.05, s.k, 300, 3, 2)
				if !slices.EqualFunc(a.Slates, b.Slates, slices.Equal) {
					t.Fatalf("%s on %s d=%d: identical seeds, different slates", name, g, s.d)
				}
				if slices.EqualFunc(a.Slates, c.Slates, slices.Equal) {
					t.Fatalf("%s on %s d=%d: another policy seed gives the same slates", name, g, s.d)
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
// is the slate played most often, whether the policy knows the noise is 0
// (point-mass posterior) or believes σ_obs = 0.05 and must learn. (A random
// slate would be about 10%. The linear front is left out: its clipped arms
// are weakly dominated by others, with gaps too small to leave.)
func TestLearnsFront(t *testing.T) {
	for _, name := range family {
		for _, sigmaObs := range []float64{0, 0.05} {
			for _, g := range []envs.Geometry{envs.Concave, envs.Convex, envs.Clusters} {
				for _, s := range []struct{ d, n, k int }{{2, 20, 3}, {3, 24, 3}} {
					in, err := envs.Generate(g, s.d, s.n, 1)
					if err != nil {
						t.Fatal(err)
					}
					opt := paretoOptimal(in.Means)
					tr := simulate(t, name, in, 0, sigmaObs, s.k, 10000, 1, 1)
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
						t.Errorf("%s (σ_obs %v) on %s d=%d: %d of the last 1000 slates are Pareto-optimal only, want ≥ 900", name, sigmaObs, g, s.d, good)
					}
					for _, i := range mode[:s.k] {
						if !opt[i] {
							t.Errorf("%s (σ_obs %v) on %s d=%d: most played slate %v has a dominated arm", name, sigmaObs, g, s.d, mode[:s.k])
						}
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
			pol, err := spec.NewPolicy(algos.Problem{N: 150, D: 5, K: 6, T: 1000, Sigma: 0.02}, 0, nil, rand.New(rand.NewPCG(1, 1)))
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
		if a := testing.AllocsPerRun(20, func() { p.Select(301, slate) }); a != 0 {
			t.Errorf("%s: Select allocates %v times per call", name, a)
		}
	}
}

// TestEqualSumsByRoundingTieToLowestIndex: ParetoTS+ with a point-mass
// posterior (σ = σ_prior = 0, θ = μ̂) on four arms whose means are
// permutations of (x, y, z): one layer whose Σ_j θ_ij are equal in exact
// arithmetic, while the sums formed in coordinate order differ in the last
// bit, some above arm 0's. The lowest index, arm 0, must be taken.
func TestEqualSumsByRoundingTieToLowestIndex(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 30))
	for trial := 0; ; trial++ {
		if trial == 100000 {
			t.Fatal("no permutation found whose sums differ")
		}
		x, y, z := 0.1+0.25*rng.Float64(), 0.4+0.25*rng.Float64(), 0.7+0.25*rng.Float64()
		p := state(t, "ParetoTS+", 0, map[string]float64{"sigma_prior": 0}, [][]float64{{x, y, z}, {y, z, x}, {z, x, y}, {y, x, z}}, nil, 1)
		slate := make([]int, 1)
		p.Select(50, slate)
		if slices.Max(p.sum[1:4]) <= p.sum[0] {
			continue
		}
		if slate[0] != 0 {
			t.Fatalf("sums %v (equal exactly): Select = %v, want [0]", p.sum[:4], slate)
		}
		return
	}
}

// TestDirectSourceDrawsTheSame: a policy given the generator itself
// (NewPolicyOn, whose normals skip the Source interface) chooses the same
// slates, samples the same θ to the bit and leaves the stream where one
// given only the *rand.Rand over that generator (NewPolicy) does.
func TestDirectSourceDrawsTheSame(t *testing.T) {
	in, err := envs.Generate(envs.Linear, 4, 60, 2)
	if err != nil {
		t.Fatal(err)
	}
	prob := algos.Problem{N: 60, D: 4, K: 5, T: 1000, Sigma: 0.05}
	for _, name := range family {
		spec, _ := algos.Lookup(name)
		srcA, srcB := rand.NewPCG(7, 8), rand.NewPCG(7, 8)
		viaRand, err := spec.NewPolicy(prob, 0, nil, rand.New(srcA))
		if err != nil {
			t.Fatal(err)
		}
		direct, err := spec.NewPolicyOn(prob, 0, nil, srcB)
		if err != nil {
			t.Fatal(err)
		}
		a, b := viaRand.(*Policy), direct.(*Policy)
		if a.src != nil || b.src != srcB {
			t.Fatalf("%s: the generator was not passed as meant", name)
		}
		for i, m := range in.Means {
			copy(a.Mean[i], m)
			copy(b.Mean[i], m)
			a.Count[i], b.Count[i] = 1+i%7, 1+i%7
		}
		sa, sb := make([]int, 5), make([]int, 5)
		for round := range 200 {
			a.Select(100+round, sa)
			b.Select(100+round, sb)
			if !slices.Equal(sa, sb) || !slices.Equal(a.flat, b.flat) {
				t.Fatalf("%s round %d: slates %v and %v (or θ) differ", name, round, sa, sb)
			}
		}
		if srcA.Uint64() != srcB.Uint64() {
			t.Errorf("%s: the streams ended in different states", name)
		}
	}
}
