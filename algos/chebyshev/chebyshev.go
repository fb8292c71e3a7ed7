// Package chebyshev implements the Chebyshev-scalarization baselines of
// Mandow et al. (2023) adapted to top-k slates.
//
// Both score an arm by the Chebyshev (min-form) scalarization of its UCB
// vector U_i = μ̂_i + β_i·1 relative to the estimated nadir point z, the
// coordinate-wise minimum of the empirical means over the empirical Pareto
// front, and play the k best arms:
//
//	score_i = min_ℓ w_ℓ·(U_iℓ − z_ℓ).
//
// ChebyshevUCB follows their Algorithm C2: a weight vector is drawn
// uniformly each round from a Das–Dennis lattice on the simplex, with the
// UCB1 bonus β_i = sqrt(2η·ln t / N_i). ChebyshevUCB+ fixes w = 1/d and
// uses the standard bonus β_i = sqrt(η·ln(n·d·T²) / (2·N_i)).
package chebyshev

import (
	"math"
	"math/rand/v2"

	"thv/algos"
	"thv/envs/fmath"
)

func init() {
	algos.Register(algos.Spec{
		Name:     "ChebyshevUCB",
		Cost:     1,
		Learns:   true,
		Family:   "chebyshev",
		Fidelity: algos.Faithful,
		UsesEta:  true,
		Params: []algos.Param{
			{Name: "divisions", Default: 4, Doc: "H of the Das–Dennis simplex lattice: the C(H+d−1, d−1) weight vectors (a+1)/(H+d), a ∈ ℕ^d, Σa = H (rounded, negative means 0)"},
		},
		Cite:    "Mandow2023ChebyshevMAB",
		Summary: "Algorithm C2: top-k by min_ℓ w_ℓ(U_iℓ − z_ℓ), w drawn each round from a simplex lattice, z the empirical nadir, UCB1 bonus",
		New:     func(cfg algos.Config) algos.Policy { return New(cfg) },
	})
	algos.Register(algos.Spec{
		Name:     "ChebyshevUCB+",
		Cost:     1,
		Learns:   true,
		Family:   "chebyshev",
		Fidelity: algos.Extension,
		UsesEta:  true,
		Cite:     "Mandow2023ChebyshevMAB",
		Summary:  "top-k by min_ℓ (U_iℓ − z_ℓ)/d with fixed uniform weights, z the empirical nadir, standard bonus sqrt(η ln(ndT²)/(2N_i))",
		New:      func(cfg algos.Config) algos.Policy { return NewPlus(cfg) },
	})
}

// Policy is a ChebyshevUCB or ChebyshevUCB+ learner.
type Policy struct {
	algos.Stats
	n, d    int
	eta     float64
	ucb1    bool        // ChebyshevUCB: β = sqrt(2η ln t / N); else the standard bonus
	c       float64     // standard bonus: β_i = sqrt(c / N_i), c = η ln(ndT²)/2
	weights [][]float64 // the scalarizations: the lattice, or the single w = 1/d
	rng     *rand.Rand

	scores []float64
	nadir  []float64
	front  frontScanner
}

// New returns a ChebyshevUCB policy (Algorithm C2 of Mandow et al.): its
// weights are the Das–Dennis lattice with H = cfg.Params["divisions"].
func New(cfg algos.Config) *Policy {
	h := 4
	if v, ok := cfg.Params["divisions"]; ok {
		h = max(0, int(math.Round(v)))
	}
	p := newPolicy(cfg, Lattice(cfg.D, h))
	p.ucb1 = true
	return p
}

// NewPlus returns a ChebyshevUCB+ policy: fixed weights w = 1/d and the
// standard bonus.
func NewPlus(cfg algos.Config) *Policy {
	w := make([]float64, cfg.D)
	for l := range w {
		w[l] = 1 / float64(cfg.D)
	}
	return newPolicy(cfg, [][]float64{w})
}

func newPolicy(cfg algos.Config, weights [][]float64) *Policy {
	n, d := cfg.N, cfg.D
	T := float64(cfg.T)
	return &Policy{
		Stats:   algos.NewStats(n, d),
		n:       n,
		d:       d,
		eta:     cfg.Eta,
		c:       cfg.Eta * fmath.Log(float64(n)*float64(d)*T*T) / 2,
		weights: weights,
		rng:     cfg.Rand,
		scores:  make([]float64, n),
		nadir:   make([]float64, d),
		front:   newFrontScanner(n, d),
	}
}

// Lattice returns the Das–Dennis simplex lattice {a ∈ ℕ^d : Σa = h}, in
// lexicographic order of a, mapped to the strictly positive weight vectors
// w = (a + 1)/(h + d), which sum to 1. It has C(h+d−1, d−1) points.
func Lattice(d, h int) [][]float64 {
	var out [][]float64
	a := make([]int, d)
	var rec func(pos, left int)
	rec = func(pos, left int) {
		if pos == d-1 {
			a[pos] = left
			w := make([]float64, d)
			for l, v := range a {
				w[l] = float64(v+1) / float64(h+d)
			}
			out = append(out, w)
			return
		}
		for v := 0; v <= left; v++ {
			a[pos] = v
			rec(pos+1, left-v)
		}
	}
	if d > 0 {
		rec(0, h)
	}
	return out
}

// Select plays the len(slate) arms of highest Chebyshev score.
func (p *Policy) Select(t int, slate []int) {
	w := p.weights[0]
	c := p.c
	if p.ucb1 {
		w = p.weights[p.rng.IntN(len(p.weights))]
		c = 2 * p.eta * fmath.Log(float64(t))
	}
	z := p.nadir
	p.front.nadir(p.Mean, z)
	for i, m := range p.Mean {
		b := math.Sqrt(c / float64(max(1, p.Count[i])))
		s := math.Inf(1)
		for l, mu := range m {
			u := mu + b
			s = min(s, w[l]*(u-z[l]))
		}
		p.scores[i] = s
	}
	algos.TopK(p.scores, slate)
}

// frontScanner maintains the empirical Pareto front (the arms whose mean
// vector no other arm's dominates) and its nadir from round to round,
// without allocating.
//
// Between two rounds only the k played arms change their means, so the
// front is updated rather than recomputed: a front arm whose mean did not
// change can only have become dominated by a changed arm (k checks); a
// dominated arm whose mean did not change stays dominated while the arm
// that last dominated it still does (1 check; otherwise a scan of all
// arms); a changed arm is dominated iff some arm of the new front
// dominates it, and the new front lies among the unchanged front arms and
// the changed arms (|F| + k checks). Every check is an early-exit dominance
// test. Cost per round: O(n·d) to detect the changed arms, plus
// O((|F|·k + n)·d) checks, against O(n²·d) for the naive definition (and
// O(n²·d) on the first call, or when every mean changed).
type frontScanner struct {
	d         int
	snap      []float64 // n×d: the means at the last update
	init      bool      // whether snap holds a previous state
	onFront   []bool
	lastDom   []int // an arm that dominated i when last checked, or −1
	isChanged []bool
	changed   []int // arms whose means changed since the last update
	cand      []int // the unchanged arms on the new front
	front     []int // the empirical Pareto front, by increasing index
}

func newFrontScanner(n, d int) frontScanner {
	f := frontScanner{
		d: d, snap: make([]float64, n*d),
		onFront: make([]bool, n), lastDom: make([]int, n), isChanged: make([]bool, n),
		changed: make([]int, 0, n), cand: make([]int, 0, n), front: make([]int, 0, n),
	}
	for i := range f.lastDom {
		f.lastDom[i] = -1
	}
	return f
}

// nadir writes into z the coordinate-wise minimum of means over the
// empirical Pareto front of means.
func (f *frontScanner) nadir(means [][]float64, z []float64) {
	f.update(means)
	for l := range z {
		z[l] = math.Inf(1)
	}
	for _, i := range f.front {
		for l, v := range means[i] {
			z[l] = min(z[l], v)
		}
	}
}

// update leaves the empirical Pareto front of means in f.front.
func (f *frontScanner) update(means [][]float64) {
	d := f.d
	f.changed = f.changed[:0]
	for i, m := range means {
		s := f.snap[i*d : (i+1)*d]
		ch := !f.init
		for l := 0; l < d && !ch; l++ {
			ch = m[l] != s[l]
		}
		if ch {
			copy(s, m)
			f.changed = append(f.changed, i)
		}
		f.isChanged[i] = ch
	}
	f.init = true
	if len(f.changed) == 0 {
		return
	}
	f.cand = f.cand[:0]
	for i, mi := range means {
		if f.isChanged[i] {
			continue
		}
		if f.onFront[i] {
			for _, c := range f.changed {
				if dominates(means[c], mi) {
					f.onFront[i] = false
					f.lastDom[i] = c
					break
				}
			}
		} else if j := f.lastDom[i]; j < 0 || !dominates(means[j], mi) {
			// Its dominators may have moved: any arm may dominate it now,
			// including unchanged arms whose status is not yet updated.
			f.onFront[i] = true
			for j, mj := range means {
				if dominates(mj, mi) {
					f.onFront[i] = false
					f.lastDom[i] = j
					break
				}
			}
		}
		if f.onFront[i] {
			f.cand = append(f.cand, i)
		}
	}
	for _, i := range f.changed {
		f.onFront[i] = !f.dominated(means, i)
	}
	f.front = f.front[:0]
	for i, on := range f.onFront {
		if on {
			f.front = append(f.front, i)
		}
	}
}

// dominated reports whether a changed arm i is dominated, checking the arm
// that last dominated it, then the unchanged front arms and the changed
// arms, among which lies the whole new front.
func (f *frontScanner) dominated(means [][]float64, i int) bool {
	mi := means[i]
	if j := f.lastDom[i]; j >= 0 && dominates(means[j], mi) {
		return true
	}
	for _, j := range f.cand {
		if dominates(means[j], mi) {
			f.lastDom[i] = j
			return true
		}
	}
	for _, j := range f.changed {
		if dominates(means[j], mi) {
			f.lastDom[i] = j
			return true
		}
	}
	return false
}

// dominates reports whether a Pareto-dominates b: a ≥ b everywhere and
// a > b somewhere.
func dominates(a, b []float64) bool {
	strict := false
	for l, v := range a {
		if v < b[l] {
			return false
		}
		if v > b[l] {
			strict = true
		}
	}
	return strict
}
