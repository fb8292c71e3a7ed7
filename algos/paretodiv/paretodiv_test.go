package paretodiv

import (
	"math/rand/v2"
	"slices"
	"testing"

	"thv/algos"
	"thv/algos/paretoucb"
)

func TestRegistration(t *testing.T) {
	s, err := algos.Lookup("ParetoUCB-Div")
	if err != nil {
		t.Fatal(err)
	}
	if s.Family != "paretoucb" || s.Fidelity != algos.Extension || !s.UsesEta || s.Cite != "Drugan2013MOBandits" || len(s.Params) != 0 {
		t.Errorf("ParetoUCB-Div registered as %+v", s)
	}
}

// layered is paretoucb's hand-built instance (2-D, equal pull counts, so U
// is μ̂ shifted by the same β and keeps its layers, sums and distances):
//
//	layer 1: 0 (1, 0), 1 (.95, .4), 2 (.8, .6), 3 (.55, .82), 4 (0, 1)
//	         sums 1, 1.35, 1.4, 1.37, 1
//	layer 2: 5 (.5, .5), 7 (.3, .55), 8 (.6, .2)     sums 1, .85, .8
//	layer 3: 6 (.1, .1)
var layered = [][]float64{
	{1, 0}, {0.95, 0.4}, {0.8, 0.6}, {0.55, 0.82}, {0, 1},
	{0.5, 0.5}, {0.1, 0.1}, {0.3, 0.55}, {0.6, 0.2},
}

// TestSelect: ParetoUCB-Div's slates on the layered instance, through the
// registry.
func TestSelect(t *testing.T) {
	spec, err := algos.Lookup("ParetoUCB-Div")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		k    int
		want []int
		why  string
	}{
		{3, []int{0, 2, 4}, "layer 1 overflows; empty slate: largest Σ U first (2); ℓ∞ from 2: 0 .6, 1 .2, 3 .25, 4 .8 → 4; min over {2, 4}: 0 .6, 1 .2, 3 .25 → 0"},
		{6, []int{0, 1, 2, 3, 4, 8}, "layer 2 overflows; min ℓ∞ to layer 1: 5 .3 (to 2), 7 .27 (to 3), 8 .35 (to 1) → 8 (ignoring layer 1 it would take the largest Σ, 5)"},
		{7, []int{0, 1, 2, 3, 4, 5, 8}, "then min over {layer 1, 8}: 5 .3, 7 .27 → 5"},
		{8, []int{0, 1, 2, 3, 4, 5, 7, 8}, "layers 1 and 2: no tie-break"},
	} {
		pol, err := spec.NewPolicy(algos.Problem{N: len(layered), D: 2, K: 3, T: 1000}, 0.1, nil, rand.New(rand.NewPCG(1, 1)))
		if err != nil {
			t.Fatal(err)
		}
		p := pol.(*paretoucb.Policy)
		for i, m := range layered {
			copy(p.Mean[i], m)
			p.Count[i] = 7
		}
		got := make([]int, c.k)
		p.Select(50, got)
		slices.Sort(got)
		if !slices.Equal(got, c.want) {
			t.Errorf("k = %d: chose %v, want %v (%s)", c.k, got, c.want, c.why)
		}
	}
}

// TestChooseRules checks the rule on U set by hand, where exact ties can be
// built: lowest index on equal distances, and on the largest Σ U for the
// first pick.
func TestChooseRules(t *testing.T) {
	f := newFarthest(4)
	upper, flat, sum := ucb(4, 2)
	choose := func(chosen, layer, out []int) {
		order := algos.SumOrder{Points: upper, Sums: sum} // as Select sets it, |U| taken when needed
		f.Choose(flat, 2, &order, chosen, layer, out)
	}
	set := func(u [][]float64) {
		for i := range u {
			copy(upper[i], u[i])
			sum[i] = u[i][0] + u[i][1]
		}
	}
	// 0 (1, 0) Σ 1, 1 (.5, .75) Σ 1.25, 2 (0, 1) Σ 1, 3 (.75, .5) Σ 1.25.
	set([][]float64{{1, 0}, {0.5, 0.75}, {0, 1}, {0.75, 0.5}})
	out := make([]int, 2)
	// Empty slate: Σ ties between 1 and 3 → 1. ℓ∞ from 1: 0 .75, 2 .5, 3 .25 → 0.
	choose(nil, []int{0, 1, 2, 3}, out)
	if !slices.Equal(out, []int{1, 0}) {
		t.Errorf("farthest from nothing: %v, want [1 0]", out)
	}
	// From arm 1 chosen earlier: ℓ∞ 0 .75, 2 .5, 3 .25 → 0; then min over
	// {1, 0}: 2 min(.5, 1) = .5, 3 min(.25, .5) = .25 → 2.
	choose([]int{1}, []int{0, 2, 3}, out)
	if !slices.Equal(out, []int{0, 2}) {
		t.Errorf("farthest from {1}: %v, want [0 2]", out)
	}
	// Equal distances: from (.5, .5), arms 0 (1, 0) and 2 (0, 1) are both
	// at .5: the lower index wins.
	set([][]float64{{1, 0}, {0.5, 0.5}, {0, 1}, {0.5, 0.5}})
	choose([]int{1}, []int{2, 0}, out[:1])
	if out[0] != 0 {
		t.Errorf("farthest tie: %d, want 0", out[0])
	}
}

// TestEqualSumsByRoundingTieToLowestIndex: four arms whose U are
// permutations of (x, y, z) have the same Σ_j U_ij in exact arithmetic;
// the sums formed in coordinate order differ in the last bit, some above
// arm 0's. The first pick, by the largest Σ_j U_ij, must be arm 0.
func TestEqualSumsByRoundingTieToLowestIndex(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 28))
	for trial := 0; ; trial++ {
		if trial == 100000 {
			t.Fatal("no permutation found whose sums differ")
		}
		x, y, z := 0.1+0.25*rng.Float64(), 0.4+0.25*rng.Float64(), 0.7+0.25*rng.Float64()
		upper, flat, sum := ucb(4, 3)
		for i, u := range [][]float64{{x, y, z}, {y, z, x}, {z, x, y}, {y, x, z}} {
			copy(upper[i], u)
			sum[i] = 0.0 + u[0] + u[1] + u[2]
		}
		if slices.Max(sum[1:4]) <= sum[0] {
			continue // the rounded sums put arm 0 first anyway
		}
		out := make([]int, 1)
		order := algos.SumOrder{Points: upper, Sums: sum}
		newFarthest(4).Choose(flat, 3, &order, nil, []int{0, 1, 2, 3}, out)
		if out[0] != 0 {
			t.Fatalf("sums %v (equal exactly): first pick %d, want 0", sum, out[0])
		}
		break
	}
}
