// Package scalarucb implements the linear-scalarization baselines adapted to
// top-k slates.
//
// ScalarUCB (UCB1 of Auer et al., 2002, on a fixed scalarization) reduces
// each reward vector to its uniform average w·x, w = 1/d, whose empirical
// mean is w·μ̂_i, and plays the k arms of highest index
// w·μ̂_i + sqrt(η·ln(n·T²) / (2·N_i)). ScalarUCB-RandW (random
// scalarizations, Paria et al., 2020) draws w ~ Dirichlet(1, …, 1) each
// round and plays the k arms of highest w·U_i, with the UCB vectors
// U_i = μ̂_i + β_i·1 and the standard bonus β_i = sqrt(η·ln(n·d·T²) / (2·N_i)).
package scalarucb

import (
	"math"
	"math/rand/v2"
	"slices"

	"thv/algos"
	"thv/envs/fmath"
)

func init() {
	algos.Register(algos.Spec{
		Name:     "ScalarUCB",
		Cost:     0.3,
		Learns:   true,
		Family:   "scalarucb",
		Fidelity: algos.Extension,
		UsesEta:  true,
		Cite:     "auer2002finite",
		Summary:  "UCB1 on the fixed uniform scalarization w = 1/d: top-k by w·μ̂_i + sqrt(η ln(nT²)/(2N_i))",
		New:      func(cfg algos.Config) algos.Policy { return New(cfg) },
	})
	algos.Register(algos.Spec{
		Name:     "ScalarUCB-RandW",
		Cost:     0.3,
		Learns:   true,
		Family:   "scalarucb",
		Fidelity: algos.Extension,
		UsesEta:  true,
		Cite:     "paria2020flexible",
		Summary:  "top-k by w·U_i with a fresh w ~ Dirichlet(1) each round, standard bonus sqrt(η ln(ndT²)/(2N_i))",
		New:      func(cfg algos.Config) algos.Policy { return NewRandW(cfg) },
	})
}

// Policy is a ScalarUCB or ScalarUCB-RandW learner.
type Policy struct {
	algos.Stats
	randW  bool
	c      float64 // β_i = sqrt(c / N_i)
	w      []float64
	rng    *rand.Rand
	scores []float64
	// bonus[i] = β_i, computed when N_i was bonusAt[i] (−1: never). The
	// standard bonus does not depend on t, and ScalarUCB's index (fixed w)
	// moves only with arm i's statistics, so only the played arms are
	// recomputed each round.
	bonus   []float64
	bonusAt []int

	// errs[i] bounds the rounding error of scores[i]: rel times the sum
	// of its terms' magnitudes, for a sum of d products and the bonus (or
	// of d products of sums), each rounded once.
	errs       []float64
	rel        float64
	sumA, sumB algos.Sum // scratch of CompareExact
}

// New returns a ScalarUCB policy.
func New(cfg algos.Config) *Policy {
	T := float64(cfg.T)
	p := newPolicy(cfg)
	p.c = cfg.Eta * fmath.Log(float64(cfg.N)*T*T) / 2
	for l := range p.w {
		p.w[l] = 1 / float64(cfg.D)
	}
	return p
}

// NewRandW returns a ScalarUCB-RandW policy.
func NewRandW(cfg algos.Config) *Policy {
	T := float64(cfg.T)
	p := newPolicy(cfg)
	p.randW = true
	p.c = cfg.Eta * fmath.Log(float64(cfg.N)*float64(cfg.D)*T*T) / 2
	return p
}

func newPolicy(cfg algos.Config) *Policy {
	return &Policy{
		Stats:   algos.NewStats(cfg.N, cfg.D),
		w:       make([]float64, cfg.D),
		rng:     cfg.Rand,
		scores:  make([]float64, cfg.N),
		bonus:   make([]float64, cfg.N),
		bonusAt: slices.Repeat([]int{-1}, cfg.N),
		errs:    make([]float64, cfg.N),
		rel:     algos.ErrorBound(2*cfg.D+2, 1),
	}
}

// Dirichlet fills w with a draw from the flat Dirichlet(1, …, 1)
// distribution, the uniform distribution on the simplex: independent Exp(1)
// draws normalised by their sum.
func Dirichlet(rng *rand.Rand, w []float64) {
	var s float64
	for l := range w {
		x := fmath.ExpFloat64(rng)
		w[l] = x
		s += x
	}
	for l := range w {
		w[l] /= s
	}
}

// Select plays the len(slate) arms of highest index.
func (p *Policy) Select(t int, slate []int) {
	if p.randW {
		Dirichlet(p.rng, p.w)
	}
	for i, m := range p.Mean {
		fresh := p.bonusAt[i] != p.Count[i]
		if fresh {
			p.bonusAt[i] = p.Count[i]
			p.bonus[i] = math.Sqrt(p.c / float64(max(1, p.Count[i])))
		} else if !p.randW {
			continue // the score of last round
		}
		b := p.bonus[i]
		var s, a float64 // the index, and the sum of its terms' magnitudes
		if p.randW {
			for l, mu := range m {
				x := float64(p.w[l] * (mu + b))
				s += x
				a += float64(p.w[l] * (math.Abs(mu) + b)) // the magnitudes μ̂ + β is rounded from
			}
		} else {
			for l, mu := range m {
				x := float64(p.w[l] * mu)
				s += x
				a += math.Abs(x)
			}
			s += b
			a += b
		}
		p.scores[i], p.errs[i] = s, p.rel*a
	}
	algos.TopKExact(p.scores, p.errs, slate, p)
}

// CompareExact compares the indices of arms i and j in exact arithmetic on
// w, μ̂ and β: w·μ̂_i + β_i (ScalarUCB), w·(μ̂_i + β_i) (ScalarUCB-RandW).
func (p *Policy) CompareExact(i, j int) int {
	return p.exactScore(i, &p.sumA).Cmp(p.exactScore(j, &p.sumB))
}

func (p *Policy) exactScore(i int, s *algos.Sum) *algos.Sum {
	b := p.bonus[i]
	s.Reset()
	for l, mu := range p.Mean[i] {
		s.AddProduct(p.w[l], mu)
		if p.randW {
			s.AddProduct(p.w[l], b)
		}
	}
	if !p.randW {
		s.Add(b)
	}
	return s
}
