package paretoucb

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"thv/algos"
)

// state builds a policy whose UCB vectors are exactly the given means
// (huge pull counts make the radius negligible at the 1e-6 level used).
func state(t *testing.T, name string, means [][]float64, k int) *Policy {
	t.Helper()
	spec, err := algos.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	pol, err := spec.NewPolicy(algos.Problem{N: len(means), D: len(means[0]), K: k, T: 100}, 1e-12, nil, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	p := pol.(*Policy)
	for i, m := range means {
		copy(p.Mean[i], m)
		p.Count[i] = 1 << 40
	}
	return p
}

func sel(p *Policy, k int) []int {
	s := make([]int, k)
	p.Select(10, s)
	slices.Sort(s)
	return s
}

func TestTieBreaks(t *testing.T) {
	// Layer 1: arms 0..4 on a line x + y = 1 (sums equal) plus arm 5 with a
	// larger sum; arm 6 is dominated.
	front := [][]float64{{1, 0}, {0.75, 0.25}, {0.5, 0.5}, {0.26, 0.74}, {0, 1}, {0.55, 0.55}, {0.1, 0.1}}
	// Arm 5 (0.55,0.55) dominates arm 2 (0.5,0.5): layer 1 = {0,1,3,4,5}.
	for _, c := range []struct {
		algo string
		k    int
		want []int
	}{
		{"ParetoUCB+", 2, []int{0, 5}},             // Σ: arm 5 = 1.1, then the sum-1 tie → lowest index 0
		{"ParetoUCB-Div", 2, []int{0, 5}},          // first: largest Σ (5); farthest in ℓ∞ from (0.55,0.55): arms 0 and 4 at 0.55 (tie → larger Σ equal → index 0)
		{"ParetoUCB-Div", 3, []int{0, 4, 5}},       // then farthest from {5, 0}: arm 4 (0.45 from 5, 1 from 0)
		{"ParetoUCB-Crowd", 2, []int{0, 4}},        // boundary arms have infinite crowding distance
		{"ParetoUCB+", 6, []int{0, 1, 2, 3, 4, 5}}, // layer 1 (5 arms) fits; arm 2 leads layer 2
	} {
		if got := sel(state(t, c.algo, front, c.k), c.k); !slices.Equal(got, c.want) {
			t.Errorf("%s k=%d: chose %v, want %v", c.algo, c.k, got, c.want)
		}
	}
	// ParetoUCB: uniform within the layer: over many draws each of the five
	// layer-1 arms is chosen, arm 2 and 6 never.
	p := state(t, "ParetoUCB", front, 2)
	count := make([]int, len(front))
	for r := 0; r < 2000; r++ {
		for _, i := range sel(p, 2) {
			count[i]++
		}
	}
	for i, c := range count {
		in := i != 2 && i != 6
		if in && (c < 700 || c > 900) || !in && c != 0 {
			t.Fatalf("ParetoUCB choice counts %v: want ≈800 for arms 0,1,3,4,5 and 0 for 2, 6", count)
		}
	}
}

func TestRadius(t *testing.T) {
	// sqrt(2·0.5·ln(100·(3·4)^{1/4}) / 16): ln(100) + ln(12)/4 = 4.60517 + 0.62123.
	want := math.Sqrt(2 * 0.5 * (math.Log(100) + math.Log(12)/4) / 16)
	if got := Radius(0.5, 100, 3, 4, 16); math.Abs(got-want) > 1e-15 || math.Abs(got-0.571533) > 1e-6 {
		t.Fatalf("Radius = %v, want %v ≈ 0.571533", got, want)
	}
}

func BenchmarkRunD5(b *testing.B) {
	for _, name := range []string{"ParetoUCB", "ParetoUCB+", "ParetoUCB-Div", "ParetoUCB-Crowd"} {
		b.Run(name, func(b *testing.B) { benchRun(b, name) })
	}
}
