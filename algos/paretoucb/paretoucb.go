// Package paretoucb implements the Pareto-layer UCB family of the paper's
// baselines: ParetoUCB, the top-k adaptation of Drugan & Nowé's Pareto UCB1,
// and our variants ParetoUCB+, ParetoUCB-Div and ParetoUCB-Crowd.
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

// The tie-breaks of the four algorithms.
const (
	Uniform  TieBreak = iota // a uniformly random subset (ParetoUCB)
	SumUCB                   // largest Σ_j U_ij (ParetoUCB+)
	Farthest                 // greedy farthest point in ℓ∞ (ParetoUCB-Div)
	Crowding                 // largest crowding distance, then Σ_j U_ij (ParetoUCB-Crowd)
)

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
		{"ParetoUCB-Div", "Drugan2013MOBandits",
			"ParetoUCB+ with a greedy farthest-point (maximin ℓ∞ in UCB space) choice in the overflowing layer",
			algos.Extension, true, Farthest},
		{"ParetoUCB-Crowd", "Drugan2013MOBandits,Deb2002NSGA2",
			"ParetoUCB+ with the largest NSGA-II crowding distance in the overflowing layer",
			algos.Extension, true, Crowding},
	} {
		cost := map[string]float64{"ParetoUCB": 4, "ParetoUCB+": 2, "ParetoUCB-Div": 7, "ParetoUCB-Crowd": 4}[v.name]
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
	d   int
	eta float64
	tb  TieBreak
	rng *rand.Rand

	upper  [][]float64 // U_i
	sum    []float64   // Σ_j U_ij
	abs    []float64   // Σ_j |U_ij|
	layers algos.Layers
	front  algos.FrontTracker // |F̂| on μ̂
	crowd  algos.Crowding
	dist   []float64 // per overflow member: crowding distance
	gap    []int64   // per overflow member: maximin distance's bits (farthest)
	bound  []int     // positions of the overflow's boundary members (crowding)
	flat   []float64 // U_i = flat[d·i : d·i+d], the backing of upper

	// Exact decisions of near ties (algos.SumOrder for Σ_j U_ij): the arms
	// folded into the maximin distances so far (farthest), the set the
	// crowding distances are taken in, and scratch.
	order   algos.SumOrder
	folded  []int
	crowdOf []int
	fa, fb  big.Float
	ra, rb  big.Rat
}

// New returns a policy with radius scale eta (1 for ParetoUCB) and
// tie-break tb. A nil cfg.Rand is replaced by a fixed stream.
func New(cfg algos.Config, eta float64, tb TieBreak) *Policy {
	n, d := cfg.N, cfg.D
	p := &Policy{
		Stats: algos.NewStats(n, d),
		d:     d, eta: eta, tb: tb, rng: cfg.Rand,
		upper:  make([][]float64, n),
		sum:    make([]float64, n),
		abs:    make([]float64, n),
		dist:   make([]float64, n),
		gap:    make([]int64, n),
		folded: make([]int, 0, n),
		bound:  make([]int, 0, 2*d),
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
	// U_i, Σ_j U_ij and Σ_j |U_ij| (the scale of the sum's rounding
	// error: algos.SumOrder), written out for d = 2–5 (the same
	// operations in the same order: the sum starts from +0, which turns a
	// −0 into +0).
	count, sum, abs := p.Count[:len(p.Mean)], p.sum[:len(p.Mean)], p.abs[:len(p.Mean)]
	switch p.d {
	case 2:
		for i, m := range p.Mean {
			b := math.Sqrt(c / float64(max(1, count[i])))
			m, u := m[:2], p.flat[2*i:2*i+2:2*i+2]
			u[0], u[1] = m[0]+b, m[1]+b
			sum[i] = 0.0 + u[0] + u[1]
			abs[i] = math.Abs(u[0]) + math.Abs(u[1])
		}
	case 3:
		for i, m := range p.Mean {
			b := math.Sqrt(c / float64(max(1, count[i])))
			m, u := m[:3], p.flat[3*i:3*i+3:3*i+3]
			u[0], u[1], u[2] = m[0]+b, m[1]+b, m[2]+b
			sum[i] = 0.0 + u[0] + u[1] + u[2]
			abs[i] = math.Abs(u[0]) + math.Abs(u[1]) + math.Abs(u[2])
		}
	case 4:
		for i, m := range p.Mean {
			b := math.Sqrt(c / float64(max(1, count[i])))
			m, u := m[:4], p.flat[4*i:4*i+4:4*i+4]
			u[0], u[1], u[2], u[3] = m[0]+b, m[1]+b, m[2]+b, m[3]+b
			sum[i] = 0.0 + u[0] + u[1] + u[2] + u[3]
			abs[i] = math.Abs(u[0]) + math.Abs(u[1]) + math.Abs(u[2]) + math.Abs(u[3])
		}
	case 5:
		for i, m := range p.Mean {
			b := math.Sqrt(c / float64(max(1, count[i])))
			m, u := m[:5], p.flat[5*i:5*i+5:5*i+5]
			u[0], u[1], u[2], u[3], u[4] = m[0]+b, m[1]+b, m[2]+b, m[3]+b, m[4]+b
			sum[i] = 0.0 + u[0] + u[1] + u[2] + u[3] + u[4]
			abs[i] = math.Abs(u[0]) + math.Abs(u[1]) + math.Abs(u[2]) + math.Abs(u[3]) + math.Abs(u[4])
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
		p.layers.TopBySumOf(p.upper, p.sum, p.abs, slate) // sum as CoordSums forms it
		return
	}
	var full, over []int
	if p.d == 2 || p.d == 3 {
		full, over = p.layers.PeelFlat(p.flat, p.d, len(slate)) // U in place
	} else {
		full, over = p.layers.Peel(p.upper, len(slate))
	}
	n := copy(slate, full)
	if n == len(slate) {
		return
	}
	rest := slate[n:]
	switch p.tb {
	case Uniform:
		algos.PickUniform(over, rest, p.rng)
	case Farthest:
		p.farthest(full, over, rest)
	case Crowding:
		p.crowding(over, rest)
	}
}

// farthest fills out greedily: each slot takes the member of layer whose
// minimum ℓ∞ distance in U space to the arms already chosen (chosen, then
// the earlier slots) is largest, the lowest index on ties; with nothing
// chosen yet the first pick is the largest Σ_j U_ij (lowest index on ties).
//
// Distances are kept as their bit patterns (gap): for floats ≥ 0 that are
// not NaN, the order and equality of the bit patterns, read as integers,
// are those of the values (|x| turns −0 into +0), so integer min and max
// give the bits of the float min and max, branch-free and without the
// builtin's NaN and signed-zero handling. A taken member holds −1, which
// min keeps. Each slot folds in the distances to the previous pick and
// finds its best in the same pass. U must not be NaN.
func (p *Policy) farthest(chosen, layer, out []int) {
	dist := p.gap[:len(layer)]
	for c := range dist {
		dist[c] = inf
	}
	p.folded = p.folded[:0]
	last := -1 // the chosen arm whose distances are not folded in yet
	for _, s := range chosen {
		if last >= 0 {
			p.fold(layer, dist, last)
		}
		last = s
	}
	for a := range out {
		best := -1
		if last < 0 {
			for c, i := range layer {
				if best < 0 || p.order.Before(i, layer[best]) {
					best = c
				}
			}
		} else {
			var tied bool
			if best, tied = p.fold(layer, dist, last); tied {
				best = p.breakTies(layer, dist, best)
			}
		}
		out[a] = layer[best]
		dist[best] = -1 // taken (distances are ≥ 0)
		last = layer[best]
	}
}

// breakTies returns the member of layer, among those whose maximin
// distance is best's to the bit, of largest exact maximin distance, the
// lowest index on exact ties. A computed distance is the exact one
// rounded (max and min are exact, |a − b| rounded once, rounding is
// monotone), so only equal computed distances can be in another order, or
// equal, exactly; those are compared with math/big.
func (p *Policy) breakTies(layer []int, dist []int64, best int) int {
	top := dist[best]
	for c, x := range dist[:len(layer)] {
		if x != top || c == best {
			continue
		}
		if cmp := p.exactMaximin(layer[c], &p.fa).Cmp(p.exactMaximin(layer[best], &p.fb)); cmp > 0 || cmp == 0 && layer[c] < layer[best] {
			best = c
		}
	}
	return best
}

// exactMaximin returns, in z, arm i's minimum over the folded arms of its
// ℓ∞ distance to them in U space, exactly.
func (p *Policy) exactMaximin(i int, z *big.Float) *big.Float {
	d := p.d
	ui := p.flat[d*i : d*i+d]
	var x, y, m big.Float
	for a, s := range p.folded {
		us := p.flat[d*s : d*s+d]
		m.SetPrec(exactPrec).SetInt64(0)
		for j := range ui {
			x.SetPrec(exactPrec).SetFloat64(ui[j])
			y.SetPrec(exactPrec).SetFloat64(us[j])
			x.Sub(&x, &y).Abs(&x)
			if x.Cmp(&m) > 0 {
				m.Set(&x)
			}
		}
		if a == 0 || m.Cmp(z) < 0 {
			z.SetPrec(exactPrec).Set(&m)
		}
	}
	return z
}

// exactPrec makes sums and differences of two floats exact (algos.Sum's).
const exactPrec = 1 << 13

// inf is the bit pattern of +Inf, the distance to nothing.
const inf = int64(0x7ff0000000000000)

// gapBits is the bit pattern of |x|.
func gapBits(x float64) int64 { return int64(math.Float64bits(x) &^ (1 << 63)) }

// fold lowers dist[c] to the ℓ∞ distance between U_layer[c] and U_s (as
// bit patterns, see farthest) and returns the member not taken of largest
// distance, the lowest index on ties (−1 if all are taken), and whether
// another member's distance equals it (breakTies then decides exactly). For d = 2–5
// (the paper's settings) the distance is written out in the loop.
func (p *Policy) fold(layer []int, dist []int64, s int) (best int, tied bool) {
	p.folded = append(p.folded, s)
	dist = dist[:len(layer)]
	best, top := -1, int64(-1)
	d := p.d
	us := p.flat[d*s : d*s+d : d*s+d]
	switch d {
	case 2:
		b0, b1 := us[0], us[1]
		for c, i := range layer {
			a := p.flat[2*i : 2*i+2 : 2*i+2]
			x := min(dist[c], max(gapBits(a[0]-b0), gapBits(a[1]-b1)))
			dist[c] = x
			if x > top {
				best, top, tied = c, x, false
			} else if x == top && x >= 0 {
				tied = true
				if layer[c] < layer[best] {
					best = c
				}
			}
		}
	case 3:
		b0, b1, b2 := us[0], us[1], us[2]
		for c, i := range layer {
			a := p.flat[3*i : 3*i+3 : 3*i+3]
			x := min(dist[c], max(gapBits(a[0]-b0), gapBits(a[1]-b1), gapBits(a[2]-b2)))
			dist[c] = x
			if x > top {
				best, top, tied = c, x, false
			} else if x == top && x >= 0 {
				tied = true
				if layer[c] < layer[best] {
					best = c
				}
			}
		}
	case 4:
		b0, b1, b2, b3 := us[0], us[1], us[2], us[3]
		for c, i := range layer {
			a := p.flat[4*i : 4*i+4 : 4*i+4]
			x := min(dist[c], max(gapBits(a[0]-b0), gapBits(a[1]-b1), gapBits(a[2]-b2), gapBits(a[3]-b3)))
			dist[c] = x
			if x > top {
				best, top, tied = c, x, false
			} else if x == top && x >= 0 {
				tied = true
				if layer[c] < layer[best] {
					best = c
				}
			}
		}
	case 5:
		b0, b1, b2, b3, b4 := us[0], us[1], us[2], us[3], us[4]
		for c, i := range layer {
			a := p.flat[5*i : 5*i+5 : 5*i+5]
			x := min(dist[c], max(gapBits(a[0]-b0), gapBits(a[1]-b1), gapBits(a[2]-b2), gapBits(a[3]-b3), gapBits(a[4]-b4)))
			dist[c] = x
			if x > top {
				best, top, tied = c, x, false
			} else if x == top && x >= 0 {
				tied = true
				if layer[c] < layer[best] {
					best = c
				}
			}
		}
	default:
		for c, i := range layer {
			a := p.flat[d*i : d*i+d : d*i+d]
			g := int64(0)
			for j, y := range us {
				g = max(g, gapBits(a[j]-y))
			}
			x := min(dist[c], g)
			dist[c] = x
			if x > top {
				best, top, tied = c, x, false
			} else if x == top && x >= 0 {
				tied = true
				if layer[c] < layer[best] {
					best = c
				}
			}
		}
	}
	return best, tied
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
			p.pickCrowded(bound, dist, out)
			return
		}
	}
	dist := p.dist[:len(layer)]
	p.crowd.Distance(p.upper, layer, dist)
	p.crowdOf = layer
	p.pickCrowded(layer, dist, out)
}

// pickCrowded fills out with the arms of largest distance (arms[c] has
// dist[c] ≥ 0), then largest Σ_j U_ij, then lowest index. It overwrites
// dist.
func (p *Policy) pickCrowded(arms []int, dist []float64, out []int) {
	for a := range out {
		best := -1
		for c := range arms {
			if dist[c] < 0 {
				continue
			}
			if best < 0 || p.crowdedBefore(arms, dist, c, best) {
				best = c
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
