// Package paretots implements Pareto-layer Thompson sampling for top-k
// slates: ParetoTS, the top-k adaptation of Yahyaa & Manderick's Gaussian
// Pareto Thompson sampling, and our variant ParetoTS+.
//
// Each round both sample θ_ij ~ N(μ̂_ij, σ_i²) independently for every arm
// and objective, and fill the slate with whole Pareto layers of θ, best
// layer first, while they fit. ParetoTS uses the conjugate posterior
// σ_i² = σ_obs²/N_i and a uniformly random subset of the overflowing layer;
// ParetoTS+ uses the slower-decaying σ_i² = (σ_prior² + σ_obs²)/N_i and the
// largest Σ_j θ_ij in the overflowing layer (lowest index on ties).
// σ_obs is the problem's known noise level.
package paretots

import (
	"math"
	"math/rand/v2"

	"thv/algos"
	"thv/envs/fmath"
)

// DefaultSigmaPrior is ParetoTS+'s σ_prior. The paper gives no value.
const DefaultSigmaPrior = 0.1

func init() {
	algos.Register(algos.Spec{
		Name: "ParetoTS", Family: "paretots", Fidelity: algos.Faithful, Cite: "yahyaa2015thompson",
		Cost: 2, Learns: true,
		Summary: "θ_i ~ N(μ̂_i, σ²/N_i·I), Pareto layers of θ, a uniformly random subset of the overflowing layer",
		New:     func(cfg algos.Config) algos.Policy { return New(cfg, false, 0) },
	})
	algos.Register(algos.Spec{
		Name: "ParetoTS+", Family: "paretots", Fidelity: algos.Extension, Cite: "yahyaa2015thompson",
		Cost: 2, Learns: true,
		Params: []algos.Param{{
			Name: "sigma_prior", Default: DefaultSigmaPrior,
			Doc: "σ_prior in the heuristic posterior variance (σ_prior² + σ²)/N_i; our choice, the paper gives no value",
		}},
		Summary: "ParetoTS with posterior variance (σ_prior² + σ²)/N_i and the largest Σ_j θ_ij in the overflowing layer",
		New:     func(cfg algos.Config) algos.Policy { return New(cfg, true, cfg.Params["sigma_prior"]) },
	})
}

// Policy is a Pareto Thompson-sampling learner. Its fields Count and Mean
// (the embedded Stats) may be set directly to put it in a given state.
type Policy struct {
	algos.Stats
	plus   bool
	d      int
	varNum float64 // N_i·σ_i²: σ_obs² (ParetoTS) or σ_prior² + σ_obs² (ParetoTS+)
	rng    *rand.Rand
	src    *rand.PCG // rng's generator, for the normals, when the config gives it

	theta  [][]float64
	flat   []float64 // θ_i = flat[d·i : d·i+d], the backing of theta
	sum    []float64 // Σ_j θ_ij
	layers algos.Layers
}

// New returns ParetoTS (plus false) or ParetoTS+ (plus true, with
// sigmaPrior). A nil cfg.Rand is replaced by a fixed stream.
func New(cfg algos.Config, plus bool, sigmaPrior float64) *Policy {
	n, d := cfg.N, cfg.D
	p := &Policy{
		Stats: algos.NewStats(n, d), plus: plus, d: d, rng: cfg.Rand, src: cfg.Source,
		varNum: cfg.Sigma * cfg.Sigma,
		theta:  make([][]float64, n),
		sum:    make([]float64, n),
	}
	if plus {
		p.varNum += float64(sigmaPrior * sigmaPrior)
	}
	if p.rng == nil {
		p.src = rand.NewPCG(0, 0)
		p.rng = rand.New(p.src)
	}
	p.flat = make([]float64, n*d)
	for i := range p.theta {
		p.theta[i] = p.flat[i*d : (i+1)*d : (i+1)*d]
	}
	p.layers.Reserve(n)
	return p
}

// StdDev is the posterior standard deviation sqrt(varNum/N_i), N_i read as
// at least 1.
func (p *Policy) StdDev(i int) float64 {
	return math.Sqrt(p.varNum / float64(max(1, p.Count[i])))
}

// Select samples θ (arm by arm, coordinate by coordinate, one NormFloat64
// each; no draws when the posterior is a point mass, σ_i = 0, and then
// θ = μ̂), takes whole Pareto layers of θ while they fit and resolves the
// overflowing layer.
func (p *Policy) Select(t int, slate []int) {
	switch {
	case p.varNum == 0: // a point mass: θ = μ̂
		for i, m := range p.Mean {
			th := p.theta[i][:len(m)]
			s := 0.0
			for j, x := range m {
				th[j] = x
				s += x
			}
			p.sum[i] = s
		}
	case p.src != nil:
		// The same draws in the same order, taken from the generator in
		// one batch into θ's backing, then θ_ij = μ̂_ij + σ_i·z_ij.
		d := p.d
		z := p.flat[:d*len(p.Mean)]
		fmath.NormFloat64sPCG(p.src, z)
		for i, m := range p.Mean {
			sd := p.StdDev(i)
			th := z[d*i : d*i+d : d*i+d]
			s := 0.0
			for j, x := range m[:d] {
				th[j] = x + float64(sd*th[j])
				s += th[j]
			}
			p.sum[i] = s
		}
	default:
		for i, m := range p.Mean {
			th := p.theta[i][:len(m)]
			sd := p.StdDev(i)
			s := 0.0
			for j, x := range m {
				th[j] = x + float64(sd*fmath.NormFloat64(p.rng))
				s += th[j]
			}
			p.sum[i] = s
		}
	}
	if p.plus { // Peel + PickLargestSum on Σ θ, found early
		// Σ_j |θ_ij|, the scale of a sum's rounding error, is taken for
		// the few arms whose sums are compared closely (algos.SumOrder).
		p.layers.TopBySumOf(p.theta, p.sum, nil, slate) // sum as CoordSums forms it
		return
	}
	var full, over []int
	if p.d == 2 || p.d == 3 {
		full, over = p.layers.PeelFlat(p.flat, p.d, len(slate)) // θ in place
	} else {
		full, over = p.layers.Peel(p.theta, len(slate))
	}
	n := copy(slate, full)
	algos.PickUniform(over, slate[n:], p.rng)
}
