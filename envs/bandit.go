package envs

import (
	"fmt"
	"math"

	"thv/envs/fmath"
)

// Bandit is a stochastic multi-objective bandit over an Instance: pulling arm
// i returns its mean plus independent N(0, σ²) noise per coordinate, clipped
// to [0, 1]^d.
//
// Noise uses common random numbers: arm i has its own random stream, and its
// j-th pull consumes the j-th block of d normals of that stream. The reward of
// the j-th pull of arm i is therefore fixed by (seed, i, j), whatever the
// algorithm or the order of pulls.
type Bandit struct {
	inst    *Instance
	sigma   float64
	streams []fmath.PCG // arm i's noise stream, NewPCG(seed, "noise", i)'s generator
	pulls   []int
}

// NewBandit returns a bandit over inst with noise level sigma ≥ 0.
func NewBandit(inst *Instance, sigma float64, seed uint64) (*Bandit, error) {
	if err := inst.Validate(); err != nil {
		return nil, err
	}
	if !(sigma >= 0) || math.IsInf(sigma, 0) {
		return nil, fmt.Errorf("noise level sigma = %v: must be finite and ≥ 0", sigma)
	}
	b := &Bandit{inst: inst, sigma: sigma, streams: make([]fmath.PCG, inst.N()), pulls: make([]int, inst.N())}
	for i := range b.streams {
		b.streams[i] = fmath.NewPCGValue(pcgSeeds(seed, "noise", uint64(i)))
	}
	return b, nil
}

// Instance returns the instance the bandit samples from.
func (b *Bandit) Instance() *Instance { return b.inst }

// Sigma returns the noise level.
func (b *Bandit) Sigma() float64 { return b.sigma }

// Pulls returns how many times arm i has been pulled.
func (b *Bandit) Pulls(i int) int { return b.pulls[i] }

// Pull draws one reward vector of arm i into out (len d): its d normals
// in one batch into out, then each scaled, shifted by the mean and clipped.
func (b *Bandit) Pull(i int, out []float64) {
	mu := b.inst.Means[i][:len(out)]
	b.streams[i].NormFloat64s(out)
	for j, z := range out {
		out[j] = clip01(mu[j] + float64(b.sigma*z))
	}
	b.pulls[i]++
}

// clip01 is min(1, max(0, x)), bit for bit (±0 becomes +0, NaN stays NaN),
// in two comparisons for the usual x in (0, 1) instead of the builtins'
// handling of signed zeros and NaN.
func clip01(x float64) float64 {
	switch {
	case x > 0 && x < 1:
		return x
	case x >= 1:
		return 1
	case x <= 0:
		return 0
	}
	return x // NaN
}
