// Package paretots implements Pareto-layer Thompson sampling for top-k
// slates: ParetoTS (Yahyaa & Manderick's Gaussian Pareto TS) and our
// variant ParetoTS+ with a slower-decaying heuristic posterior and a
// Σ_j θ_ij tie-break.
package paretots

import (
	"math"
	"math/rand/v2"

	"thv/algos"
)

func init() {
	algos.Register(algos.Spec{
		Name: "ParetoTS", Family: "paretots", Fidelity: algos.Faithful, Cite: "yahyaa2015thompson",
		Summary: "sample θ_i ~ N(μ̂_i, σ²/N_i I), Pareto layers of the samples, uniform choice in the overflowing layer",
		New:     func(cfg algos.Config) algos.Policy { return newPolicy(cfg, false) },
	})
	algos.Register(algos.Spec{
		Name: "ParetoTS+", Family: "paretots", Fidelity: algos.Extension, Cite: "yahyaa2015thompson",
		Params: []algos.Param{{Name: "sigma_prior", Default: 0.1,
			Doc: "σ_prior of the heuristic posterior variance (σ_prior² + σ²)/N_i; our choice, the paper gives no value"}},
		Summary: "ParetoTS with posterior variance (σ_prior² + σ²)/N_i and a Σ_j θ_ij tie-break in the overflowing layer",
		New:     func(cfg algos.Config) algos.Policy { return newPolicy(cfg, true) },
	})
}

// Policy is a Pareto Thompson-sampling learner.
type Policy struct {
	algos.Stats
	plus   bool
	varNum float64 // posterior variance numerator: σ² (ParetoTS) or σ_prior² + σ² (ParetoTS+)
	rng    *rand.Rand
	theta  [][]float64
	layers algos.Layers
	cand   []int
}

func newPolicy(cfg algos.Config, plus bool) *Policy {
	p := &Policy{Stats: algos.NewStats(cfg.N, cfg.D), plus: plus, rng: cfg.Rand, varNum: cfg.Sigma * cfg.Sigma}
	if plus {
		sp := cfg.Params["sigma_prior"]
		p.varNum += sp * sp
	}
	flat := make([]float64, cfg.N*cfg.D)
	p.theta = make([][]float64, cfg.N)
	for i := range p.theta {
		p.theta[i] = flat[i*cfg.D : (i+1)*cfg.D : (i+1)*cfg.D]
	}
	return p
}

// Select samples every arm's mean vector from its Gaussian posterior, takes
// whole Pareto layers of the samples while they fit and resolves the
// overflowing layer (uniformly for ParetoTS, by largest Σ_j θ_ij for ParetoTS+).
func (p *Policy) Select(t int, slate []int) {
	for i, m := range p.Mean {
		sd := math.Sqrt(p.varNum / float64(max(1, p.Count[i])))
		for j, v := range m {
			p.theta[i][j] = v + sd*p.rng.NormFloat64()
		}
	}
	if p.plus { // the Σ θ tie-break lets peeling stop early
		p.layers.TopBySum(p.theta, slate)
		return
	}
	full, overflow := p.layers.Select(p.theta, len(slate))
	n := copy(slate, full)
	p.cand = append(p.cand[:0], overflow...)
	algos.PickUniform(p.cand, slate[n:], p.rng)
}
