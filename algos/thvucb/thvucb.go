// Package thvucb implements THV-UCB (the paper's Algorithm 1): coordinate-wise
// UCB boxes, safe pruning of confidently dominated arms, and greedy slate
// construction on optimistic marginal hypervolume gains.
//
// Select returns exactly the slate of the literal algorithm in exact
// arithmetic (every gain of every remaining arm evaluated at every greedy
// step, lowest index on ties; a gain is exactly 0 when the arm's UCB
// vector is weakly below one already chosen, and near ties of the computed
// gains are decided on the exact ones) but evaluates few gains at all: a
// lazy greedy keeps upper bounds on the gains, carried across rounds
// through bounds on how far each arm's box can have moved since, and a
// gain is evaluated by inclusion–exclusion over the chosen arms only when
// its bound could win. Even the UCB
// vectors are computed only for the arms greedy looks at closely (about a
// third at d = 5); the others are bounded through the same drift bounds.
package thvucb

import (
	"math"
	"math/rand/v2"

	"thv/algos"
	"thv/envs/fmath"
)

func init() {
	algos.Register(algos.Spec{
		Name:     "THV-UCB",
		Cost:     8,
		Learns:   true,
		Family:   "thvucb",
		Fidelity: algos.Unmarked,
		UsesEta:  true,
		Params: []algos.Param{
			{Name: "delta", Default: 0, Doc: "failure probability δ of the confidence radius; 0 means δ = 1/T (the paper's Theorem 3)"},
			{Name: "clip", Default: 1, Doc: "1: clip the UCB vectors to [0, 1] (the paper's optional step); 0: do not"},
		},
		Summary: "greedy on optimistic marginal HV gains over coordinate-wise UCB boxes, with safe pruning",
		New:     func(cfg algos.Config) algos.Policy { return New(cfg) },
	})
}

// Policy is a THV-UCB learner.
type Policy struct {
	algos.Stats
	prob  algos.Problem
	eta   float64
	delta float64
	clip  bool

	// The UCB vectors are computed lazily: upper[i], lower[c*n+i] (by
	// coordinate, so that the domination test scans one coordinate of all
	// arms contiguously) and boxes[i] hold u_i, L_i and box(u_i) as of round
	// at[i] ≤ t, with the statistics arm i has now (Select recomputes the
	// arms whose statistics changed), and riseAt[i] is the rise potential
	// R_i at that round. So boxes[i] + R_i(t) − riseAt[i] bounds
	// box(u_i(t)), and lower[c*n+i] ≥ L_ic(t), as the radius only grows
	// while the statistics stay.
	upper [][]float64
	lower []float64
	// lowerMax[c] ≥ every lower[c*n+j] (each value written is folded in):
	// an arm whose u_ic exceeds it is dominated by no arm.
	lowerMax []float64
	boxes    []float64
	at       []int
	riseAt   []float64
	old      []float64 // scratch: a u_i before it is recomputed
	t        int       // the round of the current (or last) Select, 0 before the first
	c        float64   // its c_t

	fullBox float64 // box((1, …, 1)): with clipping, no box is larger

	pruned  []int8 // per round: 0 unknown, 1 kept, 2 pruned
	lastDom []int  // the arm that last proved i dominated: checked first

	ie    terms // inclusion–exclusion terms of the slate chosen so far
	rise  riseBound
	lazy  lazyGreedy
	steps stepCache
}

// New returns a THV-UCB policy.
func New(cfg algos.Config) *Policy {
	n, d, k := cfg.N, cfg.D, cfg.K
	p := &Policy{
		Stats: algos.NewStats(n, d),
		prob:  cfg.Problem,
		eta:   cfg.Eta,
		delta: cfg.Params["delta"],
		clip:  cfg.Params["clip"] != 0,
		upper: matrix(n, d), lower: make([]float64, n*d), lowerMax: make([]float64, d),
		boxes: make([]float64, n), at: make([]int, n), riseAt: make([]float64, n),
		old:    make([]float64, d),
		pruned: make([]int8, n), lastDom: make([]int, n),
	}
	if p.delta <= 0 {
		p.delta = 1 / float64(cfg.T)
	}
	if p.prob.Ref == nil {
		p.prob.Ref = make([]float64, d)
	}
	ones := make([]float64, d)
	for j := range ones {
		ones[j] = 1
	}
	p.fullBox = box(ones, p.prob.Ref)
	for i := range p.lastDom {
		p.lastDom[i] = -1
	}
	p.ie.init(d, p.prob.Ref)
	p.rise.init(n, d, cfg.T)
	p.lazy.init(n)
	// Fixed seed: the hashes only name sets of arms; they never reach a result.
	p.steps.init(n, d, k, rand.New(rand.NewPCG(0x7468765f, 0x7563627a)))
	return p
}

func matrix(n, d int) [][]float64 {
	flat := make([]float64, n*d)
	m := make([][]float64, n)
	for i := range m {
		m[i] = flat[i*d : (i+1)*d : (i+1)*d]
	}
	return m
}

// Radius is THV-UCB's confidence radius β_i(t) = sqrt(2η log(n d t²/δ) / max(1, N_i)).
func Radius(eta float64, n, d, t int, delta float64, pulls int) float64 {
	return radius(width(eta, n, d, t, delta), pulls)
}

// width is c_t = 2η log(n d t²/δ), the numerator of β_i(t)².
func width(eta float64, n, d, t int, delta float64) float64 {
	return 2 * eta * fmath.Log(float64(n)*float64(d)*float64(t)*float64(t)/delta)
}

// radius is β_i(t) = sqrt(c_t / max(1, N_i)).
func radius(c float64, pulls int) float64 { return math.Sqrt(c / float64(max(1, pulls))) }

// ucb is one coordinate of u_i: μ̂ + β, clipped to [0, 1] if the policy
// clips. Comparisons, not min and max: those also order NaNs and signed
// zeros, at several times the cost on this hot path, and none occur here.
func (p *Policy) ucb(mean, beta float64) float64 { return ucb(mean, beta, p.clip) }

// ucb is Policy.ucb with the policy's clip given.
func ucb(mean, beta float64, clip bool) float64 {
	v := mean + beta
	if clip {
		if v > 1 {
			v = 1
		} else if v < 0 {
			v = 0
		}
	}
	return v
}

// Select builds S_t greedily on optimistic marginal gains among the arms that
// are not confidently dominated (all arms if fewer than k remain).
func (p *Policy) Select(t int, slate []int) {
	n, d := p.prob.N, p.prob.D
	p.t, p.c = t, width(p.eta, n, d, t, p.delta)
	clear(p.pruned)
	p.rise.update(p) // also recomputes the arms whose statistics changed
	// A rounding error must never let a bound hide below a gain it may
	// tie: every bound carries this slack, far above the rounding of the
	// sums that form bounds (relative to the gains, and to the rise
	// potentials they are shifted by) and far below any gap between gains
	// that matters (ties closer than this only cost an exact evaluation).
	scale := 0.0 // a bound on the largest box
	now, riseAt := p.rise.now[:len(p.boxes)], p.riseAt[:len(p.boxes)]
	for i, b := range p.boxes {
		// max(scale, x) without the builtin's NaN and signed-zero
		// handling: x is finite, and scale stays +0 or above.
		if x := b + now[i] - riseAt[i]; x > scale {
			scale = x
		}
	}
	p.lazy.slack = float64(1e-11*scale) + float64(1e-13*p.rise.largest)
	if !p.greedy(slate, true) {
		p.greedy(slate, false) // |A_t| < k: A_t = [n]
	}
}

// refresh makes arm i's UCB vector current, during a Select.
func (p *Policy) refresh(i int) {
	if p.at[i] != p.t {
		p.compute(i)
		p.riseAt[i] = p.rise.now[i]
	}
}

// compute computes u_i, L_i and box(u_i) for the round of the current
// Select from arm i's statistics.
func (p *Policy) compute(i int) {
	p.boxes[i] = p.vectors(i, p.c, p.upper[i], p.lower[i:], p.prob.N)
	p.at[i] = p.t
}

// vectors writes u_i and L_i for width c into u and l (L_ic at l[c*stride],
// folded into lowerMax) and returns box(u_i), formed as u_i is.
func (p *Policy) vectors(i int, c float64, u, l []float64, stride int) float64 {
	mean := p.Mean[i]
	b := radius(c, p.Count[i])
	ref, u := p.prob.Ref[:len(mean)], u[:len(mean)]
	lowerMax := p.lowerMax[:len(mean)]
	clip := p.clip // read once: the stores below might alias it
	bx := 1.0
	for j, m := range mean {
		v := ucb(m, b, clip)
		u[j] = v
		lo := m - b
		l[j*stride] = lo
		if lo > lowerMax[j] {
			lowerMax[j] = lo
		}
		if v > ref[j] {
			bx *= v - ref[j]
		} else {
			bx = 0
		}
	}
	return bx
}

// dominated reports whether u_i ≤ L_j coordinate-wise for some j ≠ i.
func (p *Policy) dominated(i int) bool {
	switch p.pruned[i] {
	case 1:
		return false
	case 2:
		return true
	}
	u := p.upper[i] // current: i was evaluated exactly before this test
	if j := p.lastDom[i]; j >= 0 && j != i && p.below(u, j) {
		if p.refresh(j); p.below(u, j) {
			p.pruned[i] = 2
			return true
		}
	}
	// Scan the coordinate where u_i is largest first: few arms have a
	// lower bound above it there. A stale L_j is an upper bound on the
	// current one, so it can only let through arms to look at closely:
	// u_i ≤ L_j holds now only if it holds for the stale L_j.
	first := 0
	for c, v := range u {
		if v > u[first] {
			first = c
		}
	}
	uf, n := u[first], p.prob.N
	if uf > p.lowerMax[first] { // no lower bound reaches u_i there
		p.pruned[i] = 1
		return false
	}
	for j, l := range p.lower[first*n : (first+1)*n] {
		if uf <= l && j != i && p.below(u, j) {
			if p.refresh(j); p.below(u, j) {
				p.lastDom[i] = j
				p.pruned[i] = 2
				return true
			}
		}
	}
	p.pruned[i] = 1
	return false
}

// below reports whether u ≤ L_j coordinate-wise.
func (p *Policy) below(u []float64, j int) bool {
	n := p.prob.N
	for c, v := range u {
		if v > p.lower[c*n+j] {
			return false
		}
	}
	return true
}

// box is the volume of the box between ref and u (0 unless u > ref).
func box(u, ref []float64) float64 {
	v := 1.0
	for j := range u {
		if !(u[j] > ref[j]) {
			return 0
		}
		v *= u[j] - ref[j]
	}
	return v
}
