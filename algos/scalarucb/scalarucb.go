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

	// ScalarUCB: every arm by decreasing index in exact arithmetic, the
	// lowest index first on exact ties (ranked: once built). Only the arms
	// observed since the last Select (Observed) have new indices, so only
	// they (out[i] == stamp) move in it.
	order  []int
	ranked bool
	out    []int
	stamp  int
	moved  []int // scratch of rerank
	merged []int

	// meanMax is at least every |μ̂_iℓ|: an arm's means change only with
	// its count (or a Touch), and each such arm is looked at. rel bounds
	// the relative rounding of an index's terms.
	meanMax    float64
	rel        float64
	top        []float64       // ScalarUCB-RandW's scratch: the round's k largest scores
	exp        algos.Expansion // scratch of CompareExact
	sumA, sumB algos.Sum
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
		order:   make([]int, cfg.N),
		out:     make([]int, cfg.N),
		moved:   make([]int, 0, cfg.N),
		merged:  make([]int, 0, cfg.N),
		rel:     algos.ErrorBound(2*cfg.D+2, 1),
		top:     make([]float64, 0, cfg.K),
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
	if !p.randW {
		p.selectRanked(slate)
		return
	}
	Dirichlet(p.rng, p.w)
	k := len(slate)
	top := p.top[:0] // the k largest scores
	for i, m := range p.Mean {
		if p.bonusAt[i] != p.Count[i] {
			p.bonusAt[i] = p.Count[i]
			p.bonus[i] = math.Sqrt(p.c / float64(max(1, p.Count[i])))
			for _, mu := range m {
				p.meanMax = max(p.meanMax, math.Abs(mu))
			}
		}
		b := p.bonus[i]
		var s float64
		if len(m) == 5 {
			s = randWScore5(p.w, m, b)
		} else {
			for l, mu := range m {
				s += float64(p.w[l] * (mu + b))
			}
		}
		p.scores[i] = s
		if len(top) < k || s > top[k-1] {
			top = algos.InsertDecreasing(top, k, s)
		}
	}
	p.top = top
	bar := math.Inf(-1) // k scores reach top's last
	if len(top) == k && k > 0 {
		bar = top[k-1]
	}
	// Each index is within rel·(Σ_ℓ w_ℓ·(|μ̂_ℓ| + β) + β) of the exact one
	// (a sum of d products and the bonus, or of d products of sums, every
	// operation rounded once), and Σ w = 1 up to rounding: at most
	// rel·(2·(max|μ̂| + β_max)) with β_max that of one pull.
	algos.TopKExactAbove(p.scores, 0, p.indexError(), bar, slate, p)
}

// randWScore5 is ScalarUCB-RandW's loop w·(m + b), summed from 0 in
// coordinate order, written out for d = 5: its operations in its order.
func randWScore5(w, m []float64, b float64) float64 {
	w, m = w[:5], m[:5]
	s := 0 + float64(w[0]*(m[0]+b)) // from +0, as the loop: −0 terms sum to +0
	s += float64(w[1] * (m[1] + b))
	s += float64(w[2] * (m[2] + b))
	s += float64(w[3] * (m[3] + b))
	return s + float64(w[4]*(m[4]+b))
}

// selectRanked is ScalarUCB's Select: the fixed w makes an arm's index
// move only with its statistics, so the ranking of all arms is kept and
// only the observed arms are scored and moved in it; the slate is its
// first arms, what TopKExact would choose (the same exact order).
func (p *Policy) selectRanked(slate []int) {
	moved, all := p.Observed()
	if all || !p.ranked { // the first Select: means may have been set directly
		p.ranked = true
		for i := range p.scores {
			p.score(i)
			p.order[i] = i
		}
		abs := p.indexError()
		for a := range p.order { // insertion sort, once
			x := p.order[a]
			b := a
			for ; b > 0 && p.before(x, p.order[b-1], abs); b-- {
				p.order[b] = p.order[b-1]
			}
			p.order[b] = x
		}
	} else {
		for _, i := range moved {
			p.score(i)
		}
		p.rerank(moved, p.indexError())
	}
	copy(slate, p.order)
}

// score computes ScalarUCB's index of arm i, w·μ̂_i + β_i, and keeps meanMax.
func (p *Policy) score(i int) {
	if p.bonusAt[i] != p.Count[i] {
		p.bonusAt[i] = p.Count[i]
		p.bonus[i] = math.Sqrt(p.c / float64(max(1, p.Count[i])))
	}
	var s float64
	for l, mu := range p.Mean[i] {
		p.meanMax = max(p.meanMax, math.Abs(mu))
		s += float64(p.w[l] * mu)
	}
	p.scores[i] = s + p.bonus[i]
}

// indexError bounds every computed index's error (Select's comment).
func (p *Policy) indexError() float64 {
	return float64(p.rel * 2 * (p.meanMax + math.Sqrt(p.c)))
}

// before reports whether arm i ranks before arm j: a larger index in exact
// arithmetic, or an equal one and a lower index (TopKExact's rule, each
// index within abs of its exact value).
func (p *Policy) before(i, j int, abs float64) bool {
	s, t := p.scores[i], p.scores[j]
	if algos.Near(s, t, abs, abs) {
		c := p.CompareExact(i, j)
		return c > 0 || c == 0 && i < j
	}
	return s > t
}

// rerank puts the arms of moved (repeats allowed), whose indices changed,
// back in their places in order. They are sorted among themselves, then
// merged with the others, which stay in exact order among themselves:
// only the prefix of order up to the last arm taken out or put back
// changes (the played arms are at the top, and mostly land near it).
func (p *Policy) rerank(moved []int, abs float64) {
	p.stamp++
	m := p.moved[:0]
	for _, i := range moved {
		if p.out[i] == p.stamp {
			continue // a repeat
		}
		p.out[i] = p.stamp
		a := len(m)
		m = append(m, i)
		for ; a > 0 && p.before(i, m[a-1], abs); a-- {
			m[a] = m[a-1]
		}
		m[a] = i
	}
	o, merged := p.order, p.merged[:0]
	r, put, taken := 0, 0, 0
	for put < len(m) || taken < len(m) {
		switch {
		case r == len(o): // every moved arm taken out: the rest go last
			merged = append(merged, m[put])
			put++
		case p.out[o[r]] == p.stamp: // a moved arm at its old place
			taken++
			r++
		case put < len(m) && p.before(m[put], o[r], abs):
			merged = append(merged, m[put])
			put++
		default:
			merged = append(merged, o[r])
			r++
		}
	}
	copy(o, merged) // as many put back as taken out: o[r:] is unchanged
	p.moved, p.merged = m, merged
}

// CompareExact compares the indices of arms i and j in exact arithmetic on
// w, μ̂ and β: w·μ̂_i + β_i (ScalarUCB), w·(μ̂_i + β_i) (ScalarUCB-RandW).
func (p *Policy) CompareExact(i, j int) int {
	x := p.exp.Reset()
	p.addScore(x, i, 1)
	p.addScore(x, j, -1)
	if x.Ok() {
		return x.Sign()
	}
	return p.exactScore(i, &p.sumA).Cmp(p.exactScore(j, &p.sumB))
}

// addScore adds sign·(arm i's index) (sign ±1) to x.
func (p *Policy) addScore(x *algos.Expansion, i int, sign float64) {
	b := sign * p.bonus[i]
	for l, mu := range p.Mean[i] {
		w := sign * p.w[l]
		x.AddProduct(w, mu)
		if p.randW {
			x.AddProduct(p.w[l], b)
		}
	}
	if !p.randW {
		x.Add(b)
	}
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
