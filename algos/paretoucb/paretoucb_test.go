package paretoucb

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"thv/algos"
)

// family are the algorithms this package registers (ParetoUCB-Div:
// package paretodiv).
var family = []string{"ParetoUCB", "ParetoUCB+", "ParetoUCB-Crowd"}

func TestRegistration(t *testing.T) {
	for _, c := range []struct {
		name    string
		fid     algos.Fidelity
		usesEta bool
		cite    string
	}{
		{"ParetoUCB", algos.Faithful, false, "Drugan2013MOBandits"},
		{"ParetoUCB+", algos.Extension, true, "Drugan2013MOBandits"},
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
		{"ParetoUCB-Crowd", 3, []int{0, 3, 4},
			"crowding 0 +Inf, 1 .2+.6 = .8, 2 .4+.42 = .82, 3 .8+.4 = 1.2, 4 +Inf"},
		// Layer 1 fits whole; layer 2 overflows (3 arms, 1 slot).
		{"ParetoUCB+", 6, []int{0, 1, 2, 3, 4, 5}, "largest Σ U of layer 2: 5 (1.0)"},
		{"ParetoUCB-Crowd", 6, []int{0, 1, 2, 3, 4, 7},
			"crowding in layer 2: 7 and 8 +Inf, 5 2; Σ U breaks the tie: 7 (.85) over 8 (.8)"},
		// Whole layers give exactly k: no tie-break, the same for all.
		{"ParetoUCB", 8, []int{0, 1, 2, 3, 4, 5, 7, 8}, "layers 1 and 2"},
		{"ParetoUCB+", 8, []int{0, 1, 2, 3, 4, 5, 7, 8}, "layers 1 and 2"},
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

// TestTieBreakRules checks the Crowd rule on U set by hand, where exact
// ties can be built: lowest index on equal crowding and Σ U.
func TestTieBreakRules(t *testing.T) {
	p := state(t, "ParetoUCB-Crowd", 0.1, [][]float64{{0, 0}, {0, 0}, {0, 0}, {0, 0}}, nil, 1)
	set := func(u [][]float64) {
		for i := range u {
			copy(p.upper[i], u[i])
			p.sum[i] = u[i][0] + u[i][1]
		}
	}
	out := make([]int, 2)
	// Crowding: 0 and 2 are the boundaries (+Inf) with equal Σ: the lower
	// index first; arm 1 is interior.
	set([][]float64{{1, 0}, {0.5, 0.6}, {0, 1}, {0, 0}})
	p.order = algos.SumOrder{Points: p.upper, Sums: p.sum} // as Select sets it, |U| taken when needed
	p.crowding([]int{0, 1, 2}, out)
	if !slices.Equal(out, []int{0, 2}) {
		t.Errorf("crowding with equal +Inf and Σ: %v, want [0 2]", out)
	}
	// Unequal Σ among the boundaries: the larger Σ first.
	set([][]float64{{1, 0}, {0.5, 0.6}, {0, 1.2}, {0, 0}})
	p.order = algos.SumOrder{Points: p.upper, Sums: p.sum} // as Select sets it, |U| taken when needed
	p.crowding([]int{0, 1, 2}, out[:1])
	if out[0] != 2 {
		t.Errorf("crowding tie on +Inf: %d, want 2 (Σ 1.2)", out[0])
	}
}

// TestEqualSumsByRoundingTieToLowestIndex: four arms with the same count
// and means that are permutations of (x, y, z) form one Pareto layer whose
// members all have the same Σ_j U_ij in exact arithmetic; the sums formed
// in coordinate order differ in the last bit, some above arm 0's. Every
// tie-break by Σ_j U_ij must take arm 0: ParetoUCB+'s and ParetoUCB-Crowd's among members of equal (infinite)
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
