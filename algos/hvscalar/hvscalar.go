// Package hvscalar implements the hypervolume-scalarization baselines of
// Zhang & Golovin (2020) and Zhang (2023) adapted to top-k slates.
//
// Both work on the UCB vectors U_i = μ̂_i + β_i·1 with the standard bonus
// β_i = sqrt(η·ln(n·d·T²) / (2·N_i)) and on directions λ drawn uniformly on
// the positive unit sphere S^{d−1}_+ (|N(0,1)| per coordinate, normalised).
// HVScalarUCB draws one λ per round and plays the k arms of highest
// hypervolume scalarization s_λ(U_i) = (min_ℓ max(0, (U_iℓ − r_ℓ)/λ_ℓ))^d.
// HVScalarUCB+ draws k directions per round and fills slot j with the arm,
// not yet in the slate, of highest min_ℓ (U_iℓ − r_ℓ)/λ^(j)_ℓ.
package hvscalar

import (
	"math"
	"math/big"
	"math/rand/v2"
	"slices"

	"thv/algos"
	"thv/envs/fmath"
)

func init() {
	algos.Register(algos.Spec{
		Name:     "HVScalarUCB",
		Cost:     0.5,
		Learns:   true,
		Family:   "hvscalar",
		Fidelity: algos.Faithful,
		UsesEta:  true,
		Cite:     "zhang2020random",
		Summary:  "top-k by the hypervolume scalarization (min_ℓ max(0, (U_iℓ − r_ℓ)/λ_ℓ))^d, one λ ~ S^{d−1}_+ per round, standard bonus",
		New:      func(cfg algos.Config) algos.Policy { return New(cfg) },
	})
	algos.Register(algos.Spec{
		Name:     "HVScalarUCB+",
		Cost:     1,
		Learns:   true,
		Family:   "hvscalar",
		Fidelity: algos.Faithful,
		UsesEta:  true,
		Cite:     "Zhang2023HypervolumeRegret",
		Summary:  "k directions λ^(j) ~ S^{d−1}_+ per round, slot j takes the remaining arm of highest min_ℓ (U_iℓ − r_ℓ)/λ^(j)_ℓ, standard bonus",
		New:      func(cfg algos.Config) algos.Policy { return NewPlus(cfg) },
	})
}

// Policy is an HVScalarUCB or HVScalarUCB+ learner.
type Policy struct {
	algos.Stats
	n, d   int
	plus   bool
	c      float64 // β_i = sqrt(c / N_i), c = η ln(ndT²)/2
	ref    []float64
	rng    *rand.Rand
	lambda []float64 // the current direction

	gap      []float64 // n×d flat: U_iℓ − r_ℓ
	gapT     []float64 // HVScalarUCB+: the same d×n, gapT[ℓ·n+i], for ruling arms out by one coordinate
	computed bool      // gap holds every arm's (after the first Select)
	taken    []int     // taken[i] == stamp: arm i is already in this round's slate
	stamp    int

	// HVScalarUCB+: an arm provably below the best of a slot is not
	// scored: thr[m] (valid when prove) bounds the gaps in coordinate
	// byLambda[m] that prove it (thresholds, ruledOut). The coordinates
	// go by decreasing λ_ℓ, the largest thresholds first: most arms are
	// ruled out by the first one tried.
	thr      []float64
	byLambda []int
	prove    bool
	top      []float64 // HVScalarUCB: the round's largest achievements (scoreCandidates)
	cand     algos.Candidates
	last     []int // the last round's slate

	// origin: r = 0, where the achievements' rounding errors are relative
	// to them and the proofs of ruledOut hold; floor
	// is errorFloor for the current λ.
	origin bool
	floor  float64

	exp        algos.Expansion // scratch of CompareExact
	ratA, ratB big.Rat
}

// New returns an HVScalarUCB policy.
func New(cfg algos.Config) *Policy { return newPolicy(cfg, false) }

// NewPlus returns an HVScalarUCB+ policy.
func NewPlus(cfg algos.Config) *Policy { return newPolicy(cfg, true) }

func newPolicy(cfg algos.Config, plus bool) *Policy {
	n, d := cfg.N, cfg.D
	T := float64(cfg.T)
	ref := make([]float64, d)
	copy(ref, cfg.Ref) // nil Ref: the origin
	p := &Policy{
		Stats:  algos.NewStats(n, d),
		n:      n,
		d:      d,
		plus:   plus,
		c:      cfg.Eta * fmath.Log(float64(n)*float64(d)*T*T) / 2,
		ref:    ref,
		rng:    cfg.Rand,
		lambda: make([]float64, d),
		gap:    make([]float64, n*d),
		gapT:   make([]float64, n*d),
		taken:  make([]int, n),
		thr:    make([]float64, d),
		top:    make([]float64, 0, cfg.K),
		last:   make([]int, 0, cfg.K),
	}
	p.cand = algos.Candidates{Arms: make([]int, 0, n), Scores: make([]float64, 0, n), X: p}
	p.byLambda = make([]int, d)
	for l := range p.byLambda {
		p.byLambda[l] = l
	}
	return p
}

// Direction fills lambda with a direction drawn uniformly on the positive
// unit sphere S^{d−1}_+: |N(0,1)| per coordinate, normalised to unit
// Euclidean norm. A draw with a zero coordinate (probability 0, but
// possible in floating point) is redrawn, so every λ_ℓ is > 0.
func Direction(rng *rand.Rand, lambda []float64) {
	for {
		var ss float64
		for l := range lambda {
			x := math.Abs(fmath.NormFloat64(rng))
			lambda[l] = x
			ss += float64(x * x)
		}
		if !(ss > 0) {
			continue
		}
		norm := math.Sqrt(ss)
		ok := true
		for l := range lambda {
			lambda[l] /= norm
			ok = ok && lambda[l] > 0
		}
		if ok {
			return
		}
	}
}

// Select fills slate for round t.
func (p *Policy) Select(t int, slate []int) {
	p.origin = !slices.ContainsFunc(p.ref, func(r float64) bool { return r != 0 })
	// U_i moves only with arm i's statistics (the standard bonus does not
	// depend on t): the arms observed since the last Select are
	// recomputed, the others kept.
	if moved, all := p.Observed(); all || !p.computed { // the first Select: means may have been set directly
		p.computed = true
		for i := range p.Mean {
			p.computeGap(i)
		}
	} else {
		for _, i := range moved {
			p.computeGap(i)
		}
	}
	if p.plus {
		p.selectPlus(slate)
		return
	}
	Direction(p.rng, p.lambda)
	// The scalarization s^d of s = max(0, achievement) is increasing in
	// s, so the arms are ranked by s itself: the same order in exact
	// arithmetic, without the power's roundings, which can make unequal
	// scores equal.
	p.scoreCandidates(len(slate))
	bar := math.Inf(-1) // k candidates reach max(0, top's last), their score
	if k := len(slate); len(p.top) == k && k > 0 {
		bar = max(0, p.top[k-1])
	}
	algos.TopKExactAbove(p.cand.Scores, achievementError, p.errorFloor(), bar, slate, &p.cand)
	for j, c := range slate {
		slate[j] = p.cand.Arms[c]
	}
	p.last = append(p.last[:0], slate...)
}

// scoreCandidates collects the round's candidates: every arm but those
// that ruledOut proves below k arms scored before them, which are in no
// top k, in exact arithmetic too, and need no divisions. top holds the k
// largest achievements computed so far, the bar of the thresholds its
// last.
func (p *Policy) scoreCandidates(k int) {
	p.prove = false
	if p.origin {
		p.orderByLambda()
	}
	c := &p.cand
	c.Reset()
	top := p.top[:0]
	// Arms whose gap in the coordinate of largest λ (column first) is at
	// most thr0 are ruled out there (ruledOut's first test; NaN: none is).
	l0 := p.byLambda[0]
	first, thr0 := p.gapT[l0*p.n:(l0+1)*p.n], math.NaN()
	// The last round's slate, likely near the top for this λ too, sets
	// the first bar; its arms (marked taken) enter top once.
	p.stamp++
	for _, i := range p.last {
		top = algos.InsertDecreasing(top, k, p.achievement(i))
		p.taken[i] = p.stamp
	}
	if len(top) == k && p.origin {
		p.thresholds(top[k-1])
		if p.prove {
			thr0 = p.thr[0]
		}
	}
	for i := 0; ; i++ {
		if i = nextAbove(first, i, thr0); i == len(first) {
			break
		}
		if p.ruledOut(i) {
			continue
		}
		v := p.achievement(i)
		c.Add(i, max(0, v)) // HVScalarUCB's score
		if p.taken[i] == p.stamp || len(top) == k && !(v > top[k-1]) {
			continue
		}
		top = algos.InsertDecreasing(top, k, v)
		if len(top) == k && p.origin {
			p.thresholds(top[k-1])
			thr0 = math.NaN()
			if p.prove {
				thr0 = p.thr[0]
			}
		}
	}
	p.top = top
}

// nextAbove returns the first i from i on with column[i] not at most thr
// (every i when thr is NaN), or len(column). Apart from its callers, whose
// calls would keep this loop's values out of registers.
//
//go:noinline
func nextAbove(column []float64, i int, thr float64) int {
	for ; i+4 <= len(column); i += 4 { // four at a time: fewer loop tests
		c := column[i : i+4 : i+4]
		switch {
		case !(c[0] <= thr):
			return i
		case !(c[1] <= thr):
			return i + 1
		case !(c[2] <= thr):
			return i + 2
		case !(c[3] <= thr):
			return i + 3
		}
	}
	for ; i < len(column); i++ {
		if !(column[i] <= thr) {
			return i
		}
	}
	return i
}

// computeGap sets arm i's gaps U_iℓ − r_ℓ (and its column entries) from
// its statistics.
func (p *Policy) computeGap(i int) {
	d := p.d
	b := math.Sqrt(p.c / float64(max(1, p.Count[i])))
	g := p.gap[i*d : (i+1)*d]
	for l, mu := range p.Mean[i] {
		u := mu + b
		g[l] = u - p.ref[l]
	}
	for l, x := range g {
		p.gapT[l*p.n+i] = x
	}
}

// achievementError bounds the relative error of a computed achievement
// when r = 0: μ̂ + β and the quotient by λ are rounded once each, and the
// minimum of values each within that error of its own is within it of
// the exact minimum (twice, for the value it is taken from).
var achievementError = algos.ErrorBound(4, 1)

// errorFloor is what the rounding of (μ̂ + β) − r can add to an
// achievement's error beyond achievementError when r ≠ 0: the first
// rounding is relative to |U| and the subtraction's to |U| + |r|, not to
// the difference; 0 when r = 0.
func (p *Policy) errorFloor() float64 {
	if p.origin {
		return 0
	}
	umax, rmax, lmin := 0.0, 0.0, math.Inf(1)
	for _, g := range p.gap {
		umax = max(umax, math.Abs(g))
	}
	for l, r := range p.ref {
		rmax, lmin = max(rmax, math.Abs(r)), min(lmin, p.lambda[l])
	}
	return achievementError * (umax + 2*rmax) / lmin
}

// CompareExact compares HVScalarUCB's scores max(0, achievement) of arms
// i and j (HVScalarUCB+'s achievements) for the current λ in exact
// arithmetic on μ̂, β, r and λ.
func (p *Policy) CompareExact(i, j int) int {
	if c, ok := p.compareByExpansions(i, j); ok {
		return c
	}
	a, b := p.exactAchievement(i, &p.ratA), p.exactAchievement(j, &p.ratB)
	if !p.plus {
		if a.Sign() < 0 {
			a.SetInt64(0)
		}
		if b.Sign() < 0 {
			b.SetInt64(0)
		}
	}
	return a.Cmp(b)
}

// compareByExpansions is CompareExact with floating-point expansions
// (algos.Expansion): λ > 0, so (μ̂_a + β_a − r_ℓ)/λ_ℓ against
// (μ̂_b + β_b − r_m)/λ_m is the sign of (μ̂_a + β_a − r_ℓ)·λ_m −
// (μ̂_b + β_b − r_m)·λ_ℓ. It reports false when the expansions cannot hold
// the sums exactly (math/big then decides).
func (p *Policy) compareByExpansions(i, j int) (int, bool) {
	li, ok1 := p.exactArgmin(i)
	lj, ok2 := p.exactArgmin(j)
	if !ok1 || !ok2 {
		return 0, false
	}
	if !p.plus { // max(0, ·): both at most 0 tie at 0
		si, oki := p.gapSign(i, li)
		sj, okj := p.gapSign(j, lj)
		if !oki || !okj {
			return 0, false
		}
		if si <= 0 || sj <= 0 {
			switch {
			case si > 0:
				return 1, true
			case sj > 0:
				return -1, true
			}
			return 0, true
		}
	}
	x := p.exp.Reset()
	p.addGap(x, i, li, p.lambda[lj], 1)
	p.addGap(x, j, lj, p.lambda[li], -1)
	return x.Sign(), x.Ok()
}

// exactArgmin returns the coordinate of arm i's least quotient in exact
// arithmetic, and whether the expansions held it.
func (p *Policy) exactArgmin(i int) (int, bool) {
	best := 0
	for l := 1; l < p.d; l++ {
		x := p.exp.Reset()
		p.addGap(x, i, l, p.lambda[best], 1)
		p.addGap(x, i, best, p.lambda[l], -1)
		if !x.Ok() {
			return 0, false
		}
		if x.Sign() < 0 {
			best = l
		}
	}
	return best, true
}

// addGap adds sign·(μ̂_iℓ + β_i − r_ℓ)·f (sign ±1) to x.
func (p *Policy) addGap(x *algos.Expansion, i, l int, f, sign float64) {
	f *= sign // exact
	x.AddProduct(f, p.Mean[i][l])
	x.AddProduct(f, math.Sqrt(p.c/float64(max(1, p.Count[i]))))
	x.AddProduct(-f, p.ref[l])
}

// gapSign is the sign of μ̂_iℓ + β_i − r_ℓ, that of arm i's quotient in ℓ,
// and whether the expansion held it.
func (p *Policy) gapSign(i, l int) (int, bool) {
	x := p.exp.Reset()
	p.addGap(x, i, l, 1, 1)
	return x.Sign(), x.Ok()
}

// exactAchievement returns min_ℓ (μ̂_iℓ + β_i − r_ℓ)/λ_ℓ exactly, in s.
func (p *Policy) exactAchievement(i int, s *big.Rat) *big.Rat {
	var b, x, y big.Rat
	algos.Rat(&b, math.Sqrt(p.c/float64(max(1, p.Count[i]))))
	for l, mu := range p.Mean[i] {
		x.Add(algos.Rat(&x, mu), &b)
		x.Sub(&x, algos.Rat(&y, p.ref[l]))
		x.Quo(&x, algos.Rat(&y, p.lambda[l]))
		if l == 0 || x.Cmp(s) < 0 {
			s.Set(&x)
		}
	}
	return s
}

// thresholds sets, for the current λ, the thresholds below which a gap
// proves an arm's achievement strictly below bar (ruledOut), if bar is far
// enough from underflow and overflow for the proof to hold.
func (p *Policy) thresholds(bar float64) {
	p.prove = p.origin && bar >= 0x1p-300 && bar <= 0x1p300
	if !p.prove {
		return
	}
	thr, lambda := p.thr[:len(p.byLambda)], p.lambda // locals: no reloads through p
	for m, l := range p.byLambda {
		// g_l ≤ fl(fl(bar·λ_l)·(1 − 2⁻⁴⁰)) gives g_l/λ_l < bar·(1 − 2⁻⁴¹):
		// below bar, and below the exact value bar was computed for,
		// whatever the roundings of either (achievementError).
		thr[m] = float64(float64(bar*lambda[l]) * (1 - 0x1p-40))
	}
}

// orderByLambda sorts byLambda by decreasing λ_ℓ for the current λ (the
// order ruledOut tries the coordinates in; any order proves the same).
func (p *Policy) orderByLambda() {
	o := p.byLambda
	for a := 1; a < len(o); a++ {
		x := o[a]
		b := a
		for ; b > 0 && p.lambda[o[b-1]] < p.lambda[x]; b-- {
			o[b] = o[b-1]
		}
		o[b] = x
	}
}

// ruledOut reports whether the thresholds prove arm i's achievement
// strictly below their bar, without dividing: its minimum is at most any
// one of its quotients.
func (p *Policy) ruledOut(i int) bool {
	d := p.d
	return p.prove && provedBelow(p.gap[i*d:(i+1)*d], p.byLambda, p.thr)
}

// provedBelow reports whether some gap g[order[m]] is at most thr[m].
func provedBelow(g []float64, order []int, thr []float64) bool {
	thr = thr[:len(order)]
	for m, l := range order {
		if g[l] <= thr[m] {
			return true
		}
	}
	return false
}

// beats reports whether arm i, of computed achievement v, comes before arm
// best, of computed achievement bestV, in exact arithmetic: a larger
// achievement, or an equal one and a lower index.
func (p *Policy) beats(i int, v float64, best int, bestV float64) bool {
	if algos.Near(v, bestV, float64(achievementError*math.Abs(v))+p.floor, float64(achievementError*math.Abs(bestV))+p.floor) {
		c := p.CompareExact(i, best)
		return c > 0 || c == 0 && i < best
	}
	return v > bestV
}

// selectPlus assigns one arm per direction: slot j takes the arm of highest
// min_ℓ (U_iℓ − r_ℓ)/λ^(j)_ℓ among those not yet chosen, lowest index first
// on ties. The last round's slate, likely near the top for this λ too, is
// tried first: the thresholds of the best of it rule most arms out by the
// column of largest λ alone. Every comparison is exact (beats) and every
// arm ruled out is below the best in exact arithmetic, so the order of the
// visit does not change the choice.
func (p *Policy) selectPlus(slate []int) {
	p.stamp++
	for j := range slate {
		Direction(p.rng, p.lambda)
		p.floor = p.errorFloor()
		if p.origin {
			p.orderByLambda()
		}
		best, bestV := -1, 0.0
		p.prove = false
		for _, i := range p.last {
			if p.taken[i] != p.stamp {
				if v := p.achievement(i); best < 0 || p.beats(i, v, best, bestV) {
					best, bestV = i, v
				}
			}
		}
		if best >= 0 {
			p.thresholds(bestV)
		}
		// Arms whose gap in the coordinate of largest λ (column first) is
		// at most thr0 are ruled out there (ruledOut's first test; NaN:
		// none is).
		thr0 := math.NaN()
		if p.prove {
			thr0 = p.thr[0]
		}
		l0 := p.byLambda[0]
		first := p.gapT[l0*p.n : (l0+1)*p.n]
		for i := 0; ; i++ {
			if i = nextAbove(first, i, thr0); i == len(first) {
				break
			}
			if i == best || p.taken[i] == p.stamp || p.ruledOut(i) { // ruled out: below bestV, exactly too
				continue
			}
			if v := p.achievement(i); best < 0 || p.beats(i, v, best, bestV) {
				if v != bestV {
					p.thresholds(v)
				}
				best, bestV = i, v
				thr0 = math.NaN()
				if p.prove {
					thr0 = p.thr[0]
				}
			}
		}
		slate[j] = best
		p.taken[best] = p.stamp
	}
	p.last = append(p.last[:0], slate...)
}

// achievement returns min_ℓ (U_iℓ − r_ℓ)/λ_ℓ for the current λ.
// Written out for d = 2–5: the loop's operations in its order.
func (p *Policy) achievement(i int) float64 {
	switch p.d {
	case 2:
		g, lam := p.gap[2*i:2*i+2:2*i+2], p.lambda[:2]
		return min(min(math.Inf(1), g[0]/lam[0]), g[1]/lam[1])
	case 3:
		g, lam := p.gap[3*i:3*i+3:3*i+3], p.lambda[:3]
		return min(min(min(math.Inf(1), g[0]/lam[0]), g[1]/lam[1]), g[2]/lam[2])
	case 4:
		g, lam := p.gap[4*i:4*i+4:4*i+4], p.lambda[:4]
		return min(min(min(min(math.Inf(1), g[0]/lam[0]), g[1]/lam[1]), g[2]/lam[2]), g[3]/lam[3])
	case 5:
		g, lam := p.gap[5*i:5*i+5:5*i+5], p.lambda[:5]
		return min(min(min(min(min(math.Inf(1), g[0]/lam[0]), g[1]/lam[1]), g[2]/lam[2]), g[3]/lam[3]), g[4]/lam[4])
	}
	s := math.Inf(1)
	for l, g := range p.gap[i*p.d : (i+1)*p.d] {
		s = min(s, g/p.lambda[l])
	}
	return s
}
