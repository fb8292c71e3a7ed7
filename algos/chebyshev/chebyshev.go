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
	"math/big"
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
		Limit:   checkLattice,
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

// maxSlots bounds the memo slots of a lattice's weights (Policy.last):
// a large lattice's weights share them.
const maxSlots = 1024

// Policy is a ChebyshevUCB or ChebyshevUCB+ learner.
type Policy struct {
	algos.Stats
	n, d    int
	eta     float64
	ucb1    bool        // ChebyshevUCB: β = sqrt(2η ln t / N); else the standard bonus
	c       float64     // standard bonus: β_i = sqrt(c / N_i), c = η ln(ndT²)/2
	weights [][]float64 // the scalarizations: the lattice, or the single w = 1/d
	rng     *rand.Rand

	meanMax float64 // at least every |μ̂_iℓ| (trackMeans)
	tracked bool
	nadir   []float64
	front   algos.FrontTracker // the empirical Pareto front, kept between rounds

	w    []float64 // the current Select's weights and bonus numerator
	cNow float64
	cand algos.Candidates // the current Select's arms not ruled out
	top  []float64        // scratch of scoreCandidates
	// Per memo slot (weights[wi] has slot wi % slots), the slate of the
	// last round whose weights had it, and per arm the coordinate whose
	// term last ruled the arm out then: guesses that make most arms
	// cheap to rule out (scoreCandidates), right or wrong.
	slot, slots int
	k           int
	last        []int // slot·k…: the slate, lastLen[slot] arms
	lastLen     []int
	first       []uint8 // slot·n…
	taken       []int   // taken[i] == stamp: arm i is in the slot's last slate

	// ChebyshevUCB+ (fixed weights and bonus numerator): per arm, its
	// term of coordinate first[i], kept while its statistics and z do not
	// change (firstZ: the z they were computed for; valid: once they are).
	firstTerm []float64
	firstZ    []float64
	valid     bool
	stamp     int

	exp        algos.Expansion // scratch of CompareExact
	ratA, ratB big.Rat
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
	p := &Policy{
		Stats:   algos.NewStats(n, d),
		n:       n,
		d:       d,
		eta:     cfg.Eta,
		c:       cfg.Eta * fmath.Log(float64(n)*float64(d)*T*T) / 2,
		weights: weights,
		rng:     cfg.Rand,
		nadir:   make([]float64, d),
		top:     make([]float64, 0, cfg.K),
		slots:   min(len(weights), maxSlots),
		k:       cfg.K,
		taken:   make([]int, n),
	}
	p.last = make([]int, p.slots*p.k)
	p.lastLen = make([]int, p.slots)
	p.first = make([]uint8, p.slots*n)
	p.firstTerm = make([]float64, n)
	p.firstZ = make([]float64, d)
	p.cand = algos.Candidates{Arms: make([]int, 0, n), Scores: make([]float64, 0, n), X: p}
	p.front.Reserve(n, d)
	return p
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

// Select plays the len(slate) arms of highest Chebyshev score, in exact
// arithmetic on μ̂, β, w and z (the lowest index on exact ties): the
// computed scores decide unless they lie within their rounding errors of
// each other (CompareExact). An arm that sets the nadir in coordinate ℓ
// scores at most w_ℓ·β_i there, exactly w_ℓ·β_i when that is its minimum:
// such arms of equal counts tie, however U_i = μ̂_i + β_i was rounded.
func (p *Policy) Select(t int, slate []int) {
	wi, c := 0, p.c
	if p.ucb1 {
		wi = p.rng.IntN(len(p.weights))
		c = 2 * p.eta * fmath.Log(float64(t))
	}
	w := p.weights[wi]
	p.slot = wi % p.slots
	p.w, p.cNow = w, c
	z := p.nadir
	moved, all := p.Observed()
	nadir(&p.front, p.Mean, moved, all, z)
	// Each computed score is within kw·(|U_i|∞ + |z|∞) of the exact one: a
	// term w_ℓ·((μ̂_ℓ + β) − z_ℓ) is formed by three roundings, the first
	// two of values at most |U_ℓ| + |z_ℓ|, and the minimum of values each
	// within e of its own is within e of theirs. |U_i|∞ ≤ max|μ̂| + β_i,
	// with β_i at most that of one pull.
	p.trackMeans(moved, all)
	zmax, wmax := 0.0, 0.0
	for l := range z {
		zmax, wmax = max(zmax, math.Abs(z[l])), max(wmax, w[l])
	}
	kw := float64(algos.ErrorBound(3, 1) * wmax)
	abs := float64(kw * (p.meanMax + math.Sqrt(c) + zmax))
	if !p.ucb1 {
		p.keepFirstTerms(moved, all)
	}
	p.scoreCandidates(len(slate), abs)
	bar := math.Inf(-1) // k candidates reach top's last
	if len(p.top) == len(slate) && len(slate) > 0 {
		bar = p.top[len(slate)-1]
	}
	algos.TopKExactAbove(p.cand.Scores, 0, abs, bar, slate, &p.cand)
	for j, a := range slate {
		slate[j] = p.cand.Arms[a]
	}
	p.lastLen[p.slot] = copy(p.last[p.slot*p.k:(p.slot+1)*p.k], slate)
}

// scoreCandidates collects the round's candidates, in p.cand: every arm
// but those whose score one term proves below k arms scored before them,
// which are in no top k, in exact arithmetic too; the minimum's other
// terms are not computed. A term is within abs of its exact value as the
// score is (the score is one of them), and the score is at most each.
// top holds the k largest scores so far; the slate of the last round with
// these weights, likely near the top again, sets the first bar.
func (p *Policy) scoreCandidates(k int, abs float64) {
	c := &p.cand
	c.Reset()
	top := p.top[:0]
	p.stamp++
	for _, i := range p.last[p.slot*p.k : p.slot*p.k+p.lastLen[p.slot]] {
		s := p.score(i)
		p.taken[i] = p.stamp
		top = algos.InsertDecreasing(top, k, s)
	}
	lim := math.NaN() // a term below lim rules its arm out (NaN: none does)
	if len(top) == k {
		lim = algos.BelowBar(top[k-1], abs)
	}
	d := p.d
	w, z := p.w[:d], p.nadir[:d]
	first := p.first[p.slot*len(p.Mean) : (p.slot+1)*len(p.Mean)]
	for i := 0; ; i++ {
		var s float64
		if p.ucb1 {
			i, s = nextCandidate(p.Mean, p.Count, first, w, z, p.cNow, lim, i)
		} else {
			i, s = nextCandidateKept(p.Mean, p.Count, first, p.firstTerm, w, z, p.cNow, lim, i)
		}
		if i == len(p.Mean) {
			break
		}
		c.Add(i, s)
		if p.taken[i] == p.stamp {
			continue // in top already
		}
		if len(top) < k || s > top[k-1] {
			top = algos.InsertDecreasing(top, k, s)
			if len(top) == k {
				lim = algos.BelowBar(top[k-1], abs)
			}
		}
	}
	p.top = top
}

// score returns arm i's score min_ℓ w_ℓ·((μ̂_iℓ + β_i) − z_ℓ), from +Inf
// in coordinate order, for the current Select's w, bonus and z.
func (p *Policy) score(i int) float64 {
	d := p.d
	w, z, m := p.w[:d], p.nadir[:d], p.Mean[i][:d]
	b := math.Sqrt(p.cNow / float64(max(1, p.Count[i])))
	s := math.Inf(1)
	for l, mu := range m {
		s = min(s, w[l]*((mu+b)-z[l]))
	}
	return s
}

// nextCandidate returns the first arm from i on that has no term
// w_ℓ·((μ̂_iℓ + β_i) − z_ℓ) below lim, with its score, or len(means) (and
// NaN). The term of coordinate first[i], which ruled arm i out last, is
// tried first, and first[i] is kept the coordinate of the term that does.
// The minimum of the terms does not depend on their order (min is exact,
// −0 below +0, NaN kept): the score is score's bit for bit. Apart from
// scoreCandidates, whose calls would keep this loop's values out of
// registers.
//
//go:noinline
func nextCandidate(means [][]float64, count []int, first []uint8, w, z []float64, c, lim float64, i int) (int, float64) {
	d := len(w)
	z = z[:d]
	count, first = count[:len(means)], first[:len(means)]
arms:
	for ; i < len(means); i++ {
		b := math.Sqrt(c / float64(max(1, count[i])))
		m := means[i][:d]
		if f := int(first[i]); f < d && w[f]*((m[f]+b)-z[f]) < lim {
			continue
		}
		s := math.Inf(1)
		for l, mu := range m {
			t := w[l] * ((mu + b) - z[l])
			if t < lim {
				first[i] = uint8(l)
				continue arms
			}
			s = min(s, t)
		}
		return i, s
	}
	return i, math.NaN()
}

// nextCandidateKept is nextCandidate with the terms of coordinates
// first[i] kept in firstTerm (keepFirstTerms), and kept up to date when
// another coordinate's term rules an arm out.
//
//go:noinline
func nextCandidateKept(means [][]float64, count []int, first []uint8, firstTerm, w, z []float64, c, lim float64, i int) (int, float64) {
	d := len(w)
	z = z[:d]
	count, first, firstTerm = count[:len(means)], first[:len(means)], firstTerm[:len(means)]
arms:
	for ; i < len(means); i++ {
		if firstTerm[i] < lim {
			continue
		}
		b := math.Sqrt(c / float64(max(1, count[i])))
		s := math.Inf(1)
		for l, mu := range means[i][:d] {
			t := w[l] * ((mu + b) - z[l])
			if t < lim {
				first[i], firstTerm[i] = uint8(l), t
				continue arms
			}
			s = min(s, t)
		}
		return i, s
	}
	return i, math.NaN()
}

// keepFirstTerms brings firstTerm up to date for ChebyshevUCB+'s Select:
// the arms of moved (all, if all) changed, and every arm's term changes
// with z (compared bit for bit: −0 and +0 differ in x − z).
func (p *Policy) keepFirstTerms(moved []int, all bool) {
	same := p.valid && !all
	for l, v := range p.nadir {
		same = same && math.Float64bits(v) == math.Float64bits(p.firstZ[l])
	}
	if !same {
		p.valid = true
		copy(p.firstZ, p.nadir)
		for i := range p.Mean {
			p.firstTerm[i] = p.term(i, int(p.first[i]))
		}
		return
	}
	for _, i := range moved {
		p.firstTerm[i] = p.term(i, int(p.first[i]))
	}
}

// term returns arm i's term of coordinate l, w_ℓ·((μ̂_iℓ + β_i) − z_ℓ),
// for the current Select (NaN for l outside the coordinates).
func (p *Policy) term(i, l int) float64 {
	if l >= p.d {
		return math.NaN()
	}
	b := math.Sqrt(p.cNow / float64(max(1, p.Count[i])))
	return p.w[l] * ((p.Mean[i][l] + b) - p.nadir[l])
}

// trackMeans keeps meanMax ≥ every |μ̂_iℓ|: the arms of moved (all, if
// all) are the only ones whose means changed since the last Select.
func (p *Policy) trackMeans(moved []int, all bool) {
	if all || !p.tracked { // the first Select looks at every arm: means may have been set directly
		p.tracked = true
		for _, m := range p.Mean {
			for _, mu := range m {
				p.meanMax = max(p.meanMax, math.Abs(mu))
			}
		}
		return
	}
	for _, i := range moved {
		for _, mu := range p.Mean[i] {
			p.meanMax = max(p.meanMax, math.Abs(mu))
		}
	}
}

// CompareExact compares the scores of arms i and j of the current Select
// in exact arithmetic on μ̂, β, w and z: each arm's minimum term found by
// exact comparisons, then the two compared, each comparison the sign of a
// difference of terms w_ℓ·μ̂ + w_ℓ·β − w_ℓ·z as an algos.Expansion
// (math/big when out of its range).
func (p *Policy) CompareExact(i, j int) int {
	li, ok1 := p.exactArgmin(i)
	lj, ok2 := p.exactArgmin(j)
	if ok1 && ok2 {
		x := p.exp.Reset()
		p.addTerm(x, i, li, 1)
		p.addTerm(x, j, lj, -1)
		if x.Ok() {
			return x.Sign()
		}
	}
	return p.exactScore(i, &p.ratA).Cmp(p.exactScore(j, &p.ratB))
}

// exactArgmin returns the coordinate of arm i's least term in exact
// arithmetic, and whether the expansions held it.
func (p *Policy) exactArgmin(i int) (int, bool) {
	best := 0
	for l := 1; l < p.d; l++ {
		x := p.exp.Reset()
		p.addTerm(x, i, l, 1)
		p.addTerm(x, i, best, -1)
		if !x.Ok() {
			return 0, false
		}
		if x.Sign() < 0 {
			best = l
		}
	}
	return best, true
}

// addTerm adds sign·w_ℓ·(μ̂_iℓ + β_i − z_ℓ) (sign ±1) to x.
func (p *Policy) addTerm(x *algos.Expansion, i, l int, sign float64) {
	w := sign * p.w[l] // exact
	b := math.Sqrt(p.cNow / float64(max(1, p.Count[i])))
	x.AddProduct(w, p.Mean[i][l])
	x.AddProduct(w, b)
	x.AddProduct(-w, p.nadir[l])
}

// exactScore returns min_ℓ w_ℓ·(μ̂_iℓ + β_i − z_ℓ) exactly, in s.
func (p *Policy) exactScore(i int, s *big.Rat) *big.Rat {
	var b, x, y big.Rat
	algos.Rat(&b, math.Sqrt(p.cNow/float64(max(1, p.Count[i]))))
	for l, mu := range p.Mean[i] {
		x.Add(algos.Rat(&x, mu), &b)
		x.Sub(&x, algos.Rat(&y, p.nadir[l]))
		x.Mul(&x, algos.Rat(&y, p.w[l]))
		if l == 0 || x.Cmp(s) < 0 {
			s.Set(&x)
		}
	}
	return s
}

// nadir writes into z the coordinate-wise minimum of means over the
// empirical Pareto front of means (the arms whose mean vector no other
// arm's dominates), which f updates from the previous round's: only the
// arms of moved (all, if all is set) can have changed since.
func nadir(f *algos.FrontTracker, means [][]float64, moved []int, all bool, z []float64) {
	f.SizeAfter(means, moved, all)
	// min is exact and ignores the order (−0 below +0, NaN kept). Written
	// out for d = 2–5, the minima in registers.
	switch len(z) {
	case 2:
		z0, z1 := math.Inf(1), math.Inf(1)
		for _, i := range f.Front() {
			m := means[i][:2]
			z0, z1 = min(z0, m[0]), min(z1, m[1])
		}
		z[0], z[1] = z0, z1
		return
	case 3:
		z0, z1, z2 := math.Inf(1), math.Inf(1), math.Inf(1)
		for _, i := range f.Front() {
			m := means[i][:3]
			z0, z1, z2 = min(z0, m[0]), min(z1, m[1]), min(z2, m[2])
		}
		z[0], z[1], z[2] = z0, z1, z2
		return
	case 4:
		z0, z1, z2, z3 := math.Inf(1), math.Inf(1), math.Inf(1), math.Inf(1)
		for _, i := range f.Front() {
			m := means[i][:4]
			z0, z1, z2, z3 = min(z0, m[0]), min(z1, m[1]), min(z2, m[2]), min(z3, m[3])
		}
		z[0], z[1], z[2], z[3] = z0, z1, z2, z3
		return
	case 5:
		z0, z1, z2, z3, z4 := math.Inf(1), math.Inf(1), math.Inf(1), math.Inf(1), math.Inf(1)
		for _, i := range f.Front() {
			m := means[i][:5]
			z0, z1, z2, z3, z4 = min(z0, m[0]), min(z1, m[1]), min(z2, m[2]), min(z3, m[3]), min(z4, m[4])
		}
		z[0], z[1], z[2], z[3], z[4] = z0, z1, z2, z3, z4
		return
	}
	for l := range z {
		z[l] = math.Inf(1)
	}
	for _, i := range f.Front() {
		for l, v := range means[i] {
			z[l] = min(z[l], v)
		}
	}
}
