// Package paretoucb implements the Pareto-layer UCB family of the paper's
// baselines: ParetoUCB, the top-k adaptation of Drugan & Nowé's Pareto UCB1,
// and our variants ParetoUCB+, ParetoUCB-Div and ParetoUCB-Crowd.
// ParetoUCB-Div's tie-break is a Choice of package paretodiv, which
// registers it: code that only it runs is not part of what the other
// three's runs can reach (their code identity).
//
// All four build UCB vectors U_i = μ̂_i + β_i·1 (not clipped) and fill the
// slate with whole Pareto layers of U, best layer first, while they fit;
// the layer that overflows the slate is resolved by the algorithm's
// tie-break:
//
//	ParetoUCB        uniformly at random (the policy's stream)
//	ParetoUCB+       largest Σ_j U_ij
//	ParetoUCB-Div    greedy farthest point: maximin ℓ∞ distance in U space
//	ParetoUCB-Crowd  largest NSGA-II crowding distance within the layer
//
// The lowest arm index wins any remaining tie.
package paretoucb

import (
	"math"
	"math/big"
	"math/rand/v2"

	"thv/algos"
	"thv/envs/fmath"
)

// TieBreak says how arms are chosen within the overflowing Pareto layer.
type TieBreak int

// The tie-breaks of the family.
const (
	Uniform  TieBreak = iota // a uniformly random subset (ParetoUCB)
	SumUCB                   // largest Σ_j U_ij (ParetoUCB+)
	Crowding                 // largest crowding distance, then Σ_j U_ij (ParetoUCB-Crowd)
	Chosen                   // by the Choice given to NewChoosing (ParetoUCB-Div)
)

// A Choice resolves the overflowing layer of a policy made by NewChoosing.
type Choice interface {
	// Choose fills out with members of layer, given the arms of the
	// whole layers taken (chosen). U_i = flat[d·i : d·i+d]; order is the
	// exact order of Σ_j U_ij. U is not NaN.
	Choose(flat []float64, d int, order *algos.SumOrder, chosen, layer, out []int)
}

func init() {
	for _, v := range []struct {
		name, cite, summary string
		fid                 algos.Fidelity
		eta                 bool
		tb                  TieBreak
	}{
		{"ParetoUCB", "Drugan2013MOBandits",
			"Pareto layers of the UCB vectors, radius sqrt(2 ln(t (d|F̂|)^¼)/N_i); uniformly random arms of the overflowing layer",
			algos.Faithful, false, Uniform},
		{"ParetoUCB+", "Drugan2013MOBandits",
			"ParetoUCB with radius sqrt(2η ln(t (d|F̂|)^¼)/N_i) and the largest Σ_j U_ij in the overflowing layer",
			algos.Extension, true, SumUCB},
		{"ParetoUCB-Crowd", "Drugan2013MOBandits,Deb2002NSGA2",
			"ParetoUCB+ with the largest NSGA-II crowding distance in the overflowing layer",
			algos.Extension, true, Crowding},
	} {
		cost := map[string]float64{"ParetoUCB": 4, "ParetoUCB+": 2, "ParetoUCB-Crowd": 4}[v.name]
		algos.Register(algos.Spec{
			Name: v.name, Family: "paretoucb", Fidelity: v.fid, UsesEta: v.eta, Cost: cost, Learns: true,
			Cite: v.cite, Summary: v.summary,
			New: func(cfg algos.Config) algos.Policy {
				eta := 1.0 // ParetoUCB's radius has no η
				if v.eta {
					eta = cfg.Eta
				}
				return New(cfg, eta, v.tb)
			},
		})
	}
}

// Policy is a Pareto-layer UCB learner. Its fields Count and Mean (the
// embedded Stats) may be set directly to put it in a given state.
type Policy struct {
	algos.Stats
	d      int
	eta    float64
	tb     TieBreak
	choice Choice // when tb is Chosen
	rng    *rand.Rand

	upper  [][]float64 // U_i
	sum    []float64   // Σ_j U_ij
	abs    []float64   // Σ_j |U_ij|, for the arms p.order compares
	layers algos.Layers
	front  algos.FrontTracker // |F̂| on μ̂
	crowd  algos.Crowding
	dist   []float64 // per overflow member: crowding distance
	// pickCrowded's scratch: the largest distances, the candidates.
	topDist []float64
	cand    []int
	bound   []int     // positions of the overflow's boundary members (crowding)
	flat    []float64 // U_i = flat[d·i : d·i+d], the backing of upper

	// Exact decisions of near ties (algos.SumOrder for Σ_j U_ij): the set
	// the crowding distances are taken in, and scratch.
	order   algos.SumOrder
	crowdOf []int
	ra, rb  big.Rat
}

// New returns a policy with radius scale eta (1 for ParetoUCB) and
// tie-break tb (for Chosen, NewChoosing gives the Choice). A nil cfg.Rand
// is replaced by a fixed stream.
func New(cfg algos.Config, eta float64, tb TieBreak) *Policy {
	n, d := cfg.N, cfg.D
	p := &Policy{
		Stats: algos.NewStats(n, d),
		d:     d, eta: eta, tb: tb, rng: cfg.Rand,
		upper:   make([][]float64, n),
		sum:     make([]float64, n),
		abs:     make([]float64, n),
		dist:    make([]float64, n),
		cand:    make([]int, 0, n),
		topDist: make([]float64, 0, max(1, cfg.K)),
		bound:   make([]int, 0, 2*d),
	}
	if p.rng == nil {
		p.rng = rand.New(rand.NewPCG(0, 0))
	}
	p.flat = make([]float64, n*d)
	for i := range p.upper {
		p.upper[i] = p.flat[i*d : (i+1)*d : (i+1)*d]
	}
	p.layers.Reserve(n)
	p.layers.Kept = tb == SumUCB // U moves little from round to round
	if p.layers.Ranks = tb != SumUCB; p.layers.Ranks {
		p.layers.ReserveRanks(n, d) // U moves little, and most arms are on the first layer
	}
	p.front.Reserve(n, d)
	p.crowd.Reserve(n, d)
	return p
}

// NewChoosing returns a policy with radius scale eta whose overflowing
// layer is resolved by choice.
func NewChoosing(cfg algos.Config, eta float64, choice Choice) *Policy {
	p := New(cfg, eta, Chosen)
	p.choice = choice
	return p
}

// logTerm is ln(t·(d·|F̂|)^{1/4}), with |F̂| read as at least 1.
func logTerm(t, d, frontSize int) float64 {
	return fmath.Log(float64(t)) + float64(0.25*fmath.Log(float64(d)*float64(max(1, frontSize))))
}

// Radius is the family's confidence radius
// β_i = sqrt(2η·ln(t·(d·|F̂|)^{1/4}) / N_i) at round t with d objectives, an
// empirical Pareto front of frontSize arms (read as at least 1) and N_i =
// pulls (read as at least 1). ParetoUCB uses η = 1.
func Radius(eta float64, t, d, frontSize, pulls int) float64 {
	return math.Sqrt(2 * eta * logTerm(t, d, frontSize) / float64(max(1, pulls)))
}

// Select builds U, takes whole Pareto layers of U while they fit and
// resolves the overflowing layer with the policy's tie-break.
func (p *Policy) Select(t int, slate []int) {
	moved, all := p.Observed()
	c := 2 * p.eta * logTerm(t, p.d, p.front.SizeAfter(p.Mean, moved, all))
	// U_i and Σ_j U_ij, written out for d = 2–5 (the same operations in
	// the same order: the sum starts from +0, which turns a −0 into +0).
	// Σ_j |U_ij|, the scale of a sum's rounding error, only orders work in
	// algos.SumOrder: but for the farthest-point choice it is formed later
	// for the few arms compared there.
	count, sum, abs := p.Count[:len(p.Mean)], p.sum[:len(p.Mean)], p.abs[:len(p.Mean)]
	withAbs := p.tb == Chosen // most arms are compared: the overflowing layer is large
	switch p.d {
	case 2:
		for i, m := range p.Mean {
			b := math.Sqrt(c / float64(max(1, count[i])))
			m, u := m[:2], p.flat[2*i:2*i+2:2*i+2]
			u[0], u[1] = m[0]+b, m[1]+b
			sum[i] = 0.0 + u[0] + u[1]
			if withAbs {
				abs[i] = math.Abs(u[0]) + math.Abs(u[1])
			}
		}
	case 3:
		for i, m := range p.Mean {
			b := math.Sqrt(c / float64(max(1, count[i])))
			m, u := m[:3], p.flat[3*i:3*i+3:3*i+3]
			u[0], u[1], u[2] = m[0]+b, m[1]+b, m[2]+b
			sum[i] = 0.0 + u[0] + u[1] + u[2]
			if withAbs {
				abs[i] = math.Abs(u[0]) + math.Abs(u[1]) + math.Abs(u[2])
			}
		}
	case 4:
		for i, m := range p.Mean {
			b := math.Sqrt(c / float64(max(1, count[i])))
			m, u := m[:4], p.flat[4*i:4*i+4:4*i+4]
			u[0], u[1], u[2], u[3] = m[0]+b, m[1]+b, m[2]+b, m[3]+b
			sum[i] = 0.0 + u[0] + u[1] + u[2] + u[3]
			if withAbs {
				abs[i] = math.Abs(u[0]) + math.Abs(u[1]) + math.Abs(u[2]) + math.Abs(u[3])
			}
		}
	case 5:
		for i, m := range p.Mean {
			b := math.Sqrt(c / float64(max(1, count[i])))
			m, u := m[:5], p.flat[5*i:5*i+5:5*i+5]
			u[0], u[1], u[2], u[3], u[4] = m[0]+b, m[1]+b, m[2]+b, m[3]+b, m[4]+b
			sum[i] = 0.0 + u[0] + u[1] + u[2] + u[3] + u[4]
			if withAbs {
				abs[i] = math.Abs(u[0]) + math.Abs(u[1]) + math.Abs(u[2]) + math.Abs(u[3]) + math.Abs(u[4])
			}
		}
	default:
		for i, m := range p.Mean {
			b := math.Sqrt(c / float64(max(1, count[i])))
			u := p.upper[i][:len(m)]
			s, a := 0.0, 0.0
			for j, x := range m {
				u[j] = x + b
				s += u[j]
				a += math.Abs(u[j])
			}
			sum[i], abs[i] = s, a
		}
	}
	p.order = algos.SumOrder{Points: p.upper, Sums: p.sum, Abs: p.abs}
	if p.tb == SumUCB { // the same choice as Peel + PickLargest, found early
		// Sums as CoordSums forms them; the few near ties form their
		// scale themselves.
		p.layers.TopBySumOf(p.upper, p.sum, nil, slate)
		return
	}
	full, over := p.layers.PeelFlat(p.flat, p.d, len(slate)) // U in place
	n := copy(slate, full)
	if n == len(slate) {
		return
	}
	rest := slate[n:]
	switch p.tb {
	case Uniform:
		algos.PickUniform(over, rest, p.rng)
	case Crowding:
		p.crowding(over, rest)
	case Chosen:
		p.choice.Choose(p.flat, p.d, &p.order, full, over, rest)
	}
}

// absSums sets abs[i] = Σ_j |U_ij| for the given arms, the scale of their
// sums' rounding errors that p.order reads.
func (p *Policy) absSums(arms ...int) {
	d := p.d
	for _, i := range arms {
		a := 0.0
		for _, x := range p.flat[d*i : d*i+d] {
			a += math.Abs(x)
		}
		p.abs[i] = a
	}
}

// crowding fills out with the members of layer of largest crowding distance
// (computed on U within the layer), then largest Σ_j U_ij, then lowest index.
//
// When the boundary members (distance +Inf) are enough, the others'
// distances cannot matter: the choice is among the boundary members, by
// Σ_j U_ij, then index. In two dimensions the layer is an antichain, whose
// first on one objective is the last on the other: two boundary members
// (more only with equal values), so more than two are not looked for.
func (p *Policy) crowding(layer, out []int) {
	if p.d > 2 || len(out) <= 2 {
		bound, ok := p.crowd.Boundary(p.upper, layer, p.bound[:0])
		if ok && len(bound) >= len(out) {
			dist := p.dist[:len(bound)]
			for c, at := range bound {
				bound[c], dist[c] = layer[at], math.Inf(1)
			}
			p.absSums(bound...) // equal distances: Σ_j U_ij decides
			p.pickCrowded(bound, dist, out)
			return
		}
	}
	dist := p.dist[:len(layer)]
	p.crowd.Distance(p.upper, layer, dist)
	p.crowdOf = layer
	p.pickCrowded(layer, dist, out)
}

// crowdedCandidates returns the positions c, ascending, of the members of
// dist (crowding distances, ≥ 0) that can be among the k first by
// crowdedBefore, or nil when all can: the others' computed distances lie
// below k computed distances by far more than their rounding errors (2⁻³⁰
// relatively, against crowdError's 2⁻⁵⁰ or so), so that the k come
// before each of them by their computed distances alone, whatever the
// exact ones; an order of the arms in exact arithmetic then finds the same
// k first among the candidates as among all.
func (p *Policy) crowdedCandidates(dist []float64, k int) []int {
	if len(dist) <= 2*k {
		return nil
	}
	// The k-th largest distance, from the k largest so far, descending.
	top := p.topDist[:0]
	for _, x := range dist {
		if x != x {
			return nil // NaN: not ordered
		}
		if len(top) == k && !(x > top[k-1]) {
			continue
		}
		if len(top) < k {
			top = append(top, x)
		} else {
			top[k-1] = x
		}
		for a := len(top) - 1; a > 0 && top[a] > top[a-1]; a-- {
			top[a], top[a-1] = top[a-1], top[a]
		}
	}
	p.topDist = top
	t := top[k-1]
	cand := p.cand[:0]
	for c, y := range dist {
		// +Inf comes before every finite distance by its computed value.
		if y >= t || !math.IsInf(t, 1) && algos.Near(t, y, float64(0x1p-30*t), float64(0x1p-30*y)) {
			cand = append(cand, c)
		}
	}
	p.cand = cand
	return cand
}

// pickCrowded fills out with the arms of largest distance (arms[c] has
// dist[c] ≥ 0), then largest Σ_j U_ij, then lowest index. It overwrites
// dist.
func (p *Policy) pickCrowded(arms []int, dist []float64, out []int) {
	cand := p.crowdedCandidates(dist, len(out))
	for a := range out {
		best := -1
		if cand != nil {
			for _, c := range cand {
				if dist[c] >= 0 && (best < 0 || p.crowdedBefore(arms, dist, c, best)) {
					best = c
				}
			}
		} else {
			for c := range arms {
				if dist[c] < 0 {
					continue
				}
				if best < 0 || p.crowdedBefore(arms, dist, c, best) {
					best = c
				}
			}
		}
		out[a] = arms[best]
		dist[best] = -1 // taken (distances are ≥ 0)
	}
	p.crowdOf = nil
}

// crowdedBefore reports whether arms[c] comes before arms[b] in exact
// arithmetic: a larger crowding distance, or an equal one and a larger
// Σ_j U_ij (SumOrder), or equal both and a lower index. Computed distances
// decide unless they lie within their rounding errors of each other (each
// interior member's a sum of d non-negative terms, each formed by three
// roundings); then the exact distances do.
func (p *Policy) crowdedBefore(arms []int, dist []float64, c, b int) bool {
	x, y := dist[c], dist[b]
	if x == y || !math.IsInf(x, 1) && !math.IsInf(y, 1) && algos.Near(x, y, float64(crowdError(p.d)*x), float64(crowdError(p.d)*y)) {
		cmp := 0
		if x != y || !math.IsInf(x, 1) {
			cmp = p.exactCrowding(arms, c, &p.ra).Cmp(p.exactCrowding(arms, b, &p.rb))
		}
		if cmp != 0 {
			return cmp > 0
		}
		if p.crowdOf != nil { // else absSums ran on arms
			p.absSums(arms[c], arms[b])
		}
		return p.order.Before(arms[c], arms[b])
	}
	return x > y
}

func crowdError(d int) float64 { return algos.ErrorBound(d+3, 1) }

// exactCrowding returns, in z, the crowding distance of arms[c] within
// p.crowdOf (the set the distances were computed in: Crowding.Distance's
// members) in exact arithmetic on U; its callers compare finite ones only.
func (p *Policy) exactCrowding(arms []int, c int, z *big.Rat) *big.Rat {
	z.SetInt64(0)
	i := arms[c]
	members := p.crowdOf
	var t, u, span big.Rat
	for j := range p.d {
		lo, hi, prev, next := -1, -1, -1, -1
		vi := p.upper[i][j]
		for _, m := range members {
			v := p.upper[m][j]
			if lo < 0 || v < p.upper[lo][j] || v == p.upper[lo][j] && m < lo {
				lo = m
			}
			if hi < 0 || v > p.upper[hi][j] || v == p.upper[hi][j] && m > hi {
				hi = m
			}
			if m == i {
				continue
			}
			if v < vi || v == vi && m < i { // before i in (value, index) order
				if prev < 0 || v > p.upper[prev][j] || v == p.upper[prev][j] && m > prev {
					prev = m
				}
			} else if next < 0 || v < p.upper[next][j] || v == p.upper[next][j] && m < next {
				next = m
			}
		}
		if prev < 0 || next < 0 {
			return z.SetInt64(1 << 62) // a boundary member: +Inf, beyond any finite distance
		}
		span.Sub(algos.Rat(&span, p.upper[hi][j]), algos.Rat(&t, p.upper[lo][j]))
		if span.Sign() <= 0 {
			continue
		}
		t.Sub(algos.Rat(&t, p.upper[next][j]), algos.Rat(&u, p.upper[prev][j]))
		z.Add(z, t.Quo(&t, &span))
	}
	return z
}
