// Package randomk implements RandomK, the non-learning baseline: a uniformly
// random slate of k distinct arms, drawn once per run (the default, once =
// 1) or every round (once = 0).
package randomk

import (
	"math/rand/v2"

	"thv/algos"
)

func init() {
	algos.Register(algos.Spec{
		Name:     "RandomK",
		Cost:     0.2,
		Family:   "randomk",
		Fidelity: algos.Unmarked,
		UsesEta:  false,
		Params: []algos.Param{{
			Name: "once", Default: 0, Values: []float64{0, 1},
			Doc: "0: a new random slate every round; 1: one random slate, drawn at the first decision and kept (\"selects a slate uniformly at random\" read as one slate)",
		}},
		Summary: "a uniformly random k-subset (partial Fisher–Yates), once per run or every round; no learning",
		New:     func(cfg algos.Config) algos.Policy { return New(cfg) },
	})
}

// Policy is a RandomK player.
type Policy struct {
	rng   *rand.Rand
	perm  []int // a permutation of the arms, reshuffled in place
	once  bool  // keep the first slate drawn
	drawn bool
}

// New returns a RandomK policy.
func New(cfg algos.Config) *Policy {
	p := &Policy{rng: cfg.Rand, perm: make([]int, cfg.N), once: cfg.Params["once"] != 0}
	for i := range p.perm {
		p.perm[i] = i
	}
	return p
}

// Select fills slate with a uniformly random ordered sample of distinct
// arms, by a partial Fisher–Yates shuffle of the persistent permutation
// (uniform whatever permutation it starts from).
func (p *Policy) Select(t int, slate []int) {
	if p.once && p.drawn {
		copy(slate, p.perm[:len(slate)])
		return
	}
	p.drawn = true
	n := len(p.perm)
	for j := range slate {
		r := j + p.rng.IntN(n-j)
		p.perm[j], p.perm[r] = p.perm[r], p.perm[j]
		slate[j] = p.perm[j]
	}
}

// Observe ignores the feedback: RandomK does not learn.
func (p *Policy) Observe(slate []int, rewards [][]float64) {}
