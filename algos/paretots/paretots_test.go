package paretots

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"thv/algos"
)

func policy(t *testing.T, name string, sigma float64, params map[string]float64, means [][]float64, pulls int) *Policy {
	t.Helper()
	spec, err := algos.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	pol, err := spec.NewPolicy(algos.Problem{N: len(means), D: len(means[0]), K: 2, T: 100, Sigma: sigma}, 0, params, rand.New(rand.NewPCG(2, 3)))
	if err != nil {
		t.Fatal(err)
	}
	p := pol.(*Policy)
	for i, m := range means {
		copy(p.Mean[i], m)
		p.Count[i] = pulls
	}
	return p
}

var front = [][]float64{{1, 0}, {0.75, 0.25}, {0.5, 0.5}, {0.26, 0.74}, {0, 1}, {0.55, 0.55}, {0.1, 0.1}}

// TestPointMassPosterior: with σ = 0 (and σ_prior = 0) θ = μ̂, so ParetoTS+
// takes the largest Σ θ in the first layer, deterministically, with no NaN.
func TestPointMassPosterior(t *testing.T) {
	p := policy(t, "ParetoTS+", 0, map[string]float64{"sigma_prior": 0}, front, 5)
	for r := 0; r < 10; r++ {
		s := make([]int, 2)
		p.Select(10, s)
		slices.Sort(s)
		if !slices.Equal(s, []int{0, 5}) {
			t.Fatalf("chose %v, want [0 5] (Σ 1.1, then the lowest-index Σ-1 arm)", s)
		}
	}
	q := policy(t, "ParetoTS", 0, nil, front, 5)
	count := make([]int, len(front))
	for r := 0; r < 1000; r++ {
		s := make([]int, 2)
		q.Select(10, s)
		for _, i := range s {
			count[i]++
		}
	}
	if count[2] != 0 || count[6] != 0 || slices.Min([]int{count[0], count[1], count[3], count[4], count[5]}) < 300 {
		t.Fatalf("ParetoTS with a point-mass posterior chose %v: want uniform over layer 1 {0,1,3,4,5}", count)
	}
}

// TestPosteriorSpread: the sample spread is sqrt(σ²/N) for ParetoTS and
// sqrt((σ_prior² + σ²)/N) for ParetoTS+.
func TestPosteriorSpread(t *testing.T) {
	for _, c := range []struct {
		name   string
		params map[string]float64
		want   float64
	}{
		{"ParetoTS", nil, math.Sqrt(0.05 * 0.05 / 25)},
		{"ParetoTS+", map[string]float64{"sigma_prior": 0.2}, math.Sqrt((0.04 + 0.0025) / 25)},
	} {
		p := policy(t, c.name, 0.05, c.params, [][]float64{{0.5, 0.5}, {0.4, 0.4}}, 25)
		var sq float64
		const R = 20000
		s := make([]int, 2)
		for r := 0; r < R; r++ {
			p.Select(10, s)
			d := p.theta[0][0] - 0.5
			sq += d * d
		}
		if got := math.Sqrt(sq / R); math.Abs(got-c.want)/c.want > 0.03 {
			t.Errorf("%s: θ spread %v, want %v", c.name, got, c.want)
		}
	}
}
