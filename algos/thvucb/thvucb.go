// Package thvucb implements THV-UCB (the paper's Algorithm 1): coordinate-wise
// UCB boxes, safe pruning of confidently dominated arms, and greedy slate
// construction on optimistic marginal hypervolume gains.
package thvucb

import (
	"container/heap"
	"math"
	"slices"

	"thv/algos"
)

func init() {
	algos.Register(algos.Spec{
		Name:     "THV-UCB",
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

	upper, lower [][]float64 // u_i(t) and L_i(t)
	pruned       []int8      // per round: 0 unknown, 1 kept, 2 pruned
	lastDom      []int       // the arm that last proved i dominated: checked first
	h            lazyHeap
	// Inclusion–exclusion terms of the slate S chosen so far: for every
	// non-empty T ⊆ S, min_{s∈T} u_s (flattened, d each) and (−1)^{|T|+1}.
	// The gain of u_i is box(u_i) − Σ_T sign_T · box(min(u_i, m_T)).
	terms []float64
	signs []float64

	// Bounds carried over from the previous round. The UCB vectors move
	// little between rounds, and the gain of arm i given S grows with u_i
	// and shrinks with every u_s, s ∈ S, at rates bounded by face areas:
	// ∂gain/∂u_ic ≤ Π_{l≠c}(u_il − r_l) and |∂gain/∂u_sc| ≤
	// Π_{l≠c}(min(u_il, u_sl) − r_l) (taking the larger of the two rounds'
	// values). So when this round's greedy prefix equals last round's, last
	// round's bound at that step plus that drift bounds this round's gain:
	// far tighter than the pairwise bounds.
	prev, next carried
	prevUpper  [][]float64
	hiUpper    [][]float64 // max(u(t−1), u(t)) per coordinate
	rise, fall [][]float64 // per arm and coordinate: max(0, ±(u(t) − u(t−1)))
	riseDrift  []float64   // per arm: Σ_c rise_ic · face_c(hiUpper_i)
	drift      []float64   // per arm: riseDrift plus the falls of the chosen arms so far
}

// carried is what one greedy run leaves for the next round.
type carried struct {
	valid bool
	slate []int     // the slate in selection order
	key   []float64 // key[j*n+i]: a bound on arm i's gain at step j (given slate[:j])
}

// New returns a THV-UCB policy.
func New(cfg algos.Config) *Policy {
	n, d := cfg.N, cfg.D
	p := &Policy{
		Stats: algos.NewStats(n, d),
		prob:  cfg.Problem,
		eta:   cfg.Eta,
		delta: cfg.Params["delta"],
		clip:  cfg.Params["clip"] != 0,
		upper: matrix(n, d), lower: matrix(n, d),
		pruned: make([]int8, n), lastDom: make([]int, n),
	}
	if p.delta <= 0 {
		p.delta = 1 / float64(cfg.T)
	}
	if p.prob.Ref == nil {
		p.prob.Ref = make([]float64, d)
	}
	p.prevUpper, p.hiUpper = matrix(n, d), matrix(n, d)
	p.rise, p.fall = matrix(n, d), matrix(n, d)
	p.riseDrift, p.drift = make([]float64, n), make([]float64, n)
	for _, c := range []*carried{&p.prev, &p.next} {
		c.slate = make([]int, cfg.K)
		c.key = make([]float64, cfg.K*n)
	}
	for i := range p.lastDom {
		p.lastDom[i] = -1
	}
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
	return math.Sqrt(2 * eta * math.Log(float64(n)*float64(d)*float64(t)*float64(t)/delta) / float64(max(1, pulls)))
}

// Select builds S_t greedily on optimistic marginal gains among the arms that
// are not confidently dominated (all arms if fewer than k remain).
func (p *Policy) Select(t int, slate []int) {
	n, d := p.prob.N, p.prob.D
	c := 2 * p.eta * math.Log(float64(n)*float64(d)*float64(t)*float64(t)/p.delta)
	for i := 0; i < n; i++ {
		b := math.Sqrt(c / float64(max(1, p.Count[i])))
		for j, m := range p.Mean[i] {
			u := m + b
			if p.clip {
				u = min(1, max(0, u))
			}
			p.upper[i][j] = u
			p.lower[i][j] = m - b
		}
		p.pruned[i] = 0
	}
	if p.prev.valid {
		ref := p.prob.Ref
		for i, u := range p.upper {
			for j, v := range u {
				old := p.prevUpper[i][j]
				p.hiUpper[i][j] = max(v, old)
				p.rise[i][j], p.fall[i][j] = max(0, v-old), max(0, old-v)
			}
			p.riseDrift[i] = faceDot(p.rise[i], p.hiUpper[i], nil, ref)
		}
	}
	if !p.greedy(slate, true) {
		p.greedy(slate, false) // |A_t| < k: A_t = [n]
	}
	// Keep this round's bounds for the next one.
	p.prev, p.next = p.next, p.prev
	p.prev.valid = len(slate) == len(p.prev.slate)
	copy(p.prev.slate, slate)
	for i, u := range p.upper {
		copy(p.prevUpper[i], u)
	}
}

// greedy runs lazy greedy selection on the UCB vectors. With prune set, a
// candidate is tested for confident domination only when it would be chosen,
// which selects exactly what greedy over A_t selects. It reports false when
// fewer than k arms survive pruning.
//
// Bounds: by submodularity a candidate's gain only shrinks as S grows, so its
// last computed gain bounds it; so does its gain against each selected arm
// alone, box(u_i) − box(min(u_i, u_s)), which costs O(d) and is far tighter
// than the first. Only candidates whose bound beats the best exact gain are
// evaluated exactly.
func (p *Policy) greedy(slate []int, prune bool) bool {
	ref := p.prob.Ref
	h := &p.h
	h.items = h.items[:0]
	scale := 0.0
	for i, u := range p.upper {
		v := box(u, ref)
		h.items = append(h.items, entry{key: v, box: v, arm: i, fresh: true})
		scale = max(scale, v)
	}
	slack := 1e-12 * scale
	heap.Init(h)
	p.terms, p.signs = p.terms[:0], p.signs[:0]
	k := len(slate)
	n := len(p.upper)
	record := len(p.next.key) >= k*n // keep bounds for the next round
	if record {
		// Arms that leave the heap early (chosen or pruned) get no bound at
		// later steps: +Inf, never a stale value from an older round.
		for i := range p.next.key[:k*n] {
			p.next.key[i] = math.Inf(1)
		}
	}
	samePrefix := p.prev.valid && len(p.prev.slate) == k
	if samePrefix {
		copy(p.drift, p.riseDrift)
	}
	for chosen := 0; chosen < k; {
		if h.Len() == 0 {
			return false
		}
		top := &h.items[0]
		if !top.fresh {
			top.key = p.Gain(p.upper[top.arm])
			top.fresh = true
			heap.Fix(h, 0)
			continue
		}
		e := heap.Pop(h).(entry)
		if record && chosen > 0 {
			p.next.key[chosen*n+e.arm] = e.key
		}
		if prune && p.dominated(e.arm) {
			continue
		}
		arm := e.arm
		if record && chosen > 0 {
			for _, it := range h.items {
				p.next.key[chosen*n+it.arm] = it.key
			}
		}
		slate[chosen] = arm
		chosen++
		us := p.upper[arm]
		p.addTerm(us)
		samePrefix = samePrefix && p.prev.slate[chosen-1] == arm
		// Every remaining gain is now a bound: tighten it with the gain
		// against the new arm alone and, if last round's greedy had the
		// same prefix, with last round's bound plus the drift; inflate it
		// by a slack so that a rounding error never lets it hide below a
		// fresh gain it may tie.
		carry := samePrefix && chosen < k
		fallArm := slices.ContainsFunc(p.fall[arm], func(v float64) bool { return v > 0 })
		for e := range h.items {
			it := &h.items[e]
			ui := p.upper[it.arm]
			bound := it.box - boxMin(ui, us, ref)
			if carry {
				if fallArm {
					p.drift[it.arm] += faceDot(p.fall[arm], p.hiUpper[it.arm], p.hiUpper[arm], ref)
				}
				bound = min(bound, p.prev.key[chosen*n+it.arm]+p.drift[it.arm])
			}
			if it.fresh {
				it.key += slack
				it.fresh = false
			}
			it.key = min(it.key, bound+slack)
		}
		heap.Init(h)
	}
	return true
}

// addTerm extends the inclusion–exclusion terms with a newly chosen arm.
func (p *Policy) addTerm(u []float64) {
	d := len(u)
	n := len(p.signs)
	for t := 0; t < n; t++ {
		m := p.terms[t*d : (t+1)*d]
		for j := range u {
			p.terms = append(p.terms, min(m[j], u[j]))
		}
		p.signs = append(p.signs, -p.signs[t])
	}
	p.terms = append(p.terms, u...)
	p.signs = append(p.signs, 1)
}

// Gain returns the optimistic marginal gain HV(S ∪ {u}) − HV(S) of the
// current greedy step, by inclusion–exclusion over the terms of S (at most
// 2^(k−1) − 1 of them, 31 for k = 6).
func (p *Policy) Gain(u []float64) float64 {
	ref := p.prob.Ref
	g := box(u, ref)
	d := len(u)
	for t, sign := range p.signs {
		m := p.terms[t*d : (t+1)*d]
		v := 1.0
		for j := range u {
			c := min(u[j], m[j]) - ref[j]
			if !(c > 0) {
				v = 0
				break
			}
			v *= c
		}
		g -= sign * v
	}
	return g
}

// faceDot returns Σ_c delta_c · Π_{l≠c} (m_l − r_l), with m = min(a, b)
// (m = a if b is nil), negative factors read as 0: how much a box's volume
// can change when its corner moves by delta. With every side positive it is
// P · Σ_c delta_c/side_c, P the box volume: O(d).
func faceDot(delta, a, b, ref []float64) float64 {
	var side [16]float64
	if len(a) > len(side) {
		return faceDotSlow(delta, a, b, ref)
	}
	vol := 1.0
	for l := range a {
		m := a[l]
		if b != nil {
			m = min(m, b[l])
		}
		side[l] = m - ref[l]
		if !(side[l] > 0) {
			return faceDotSlow(delta, a, b, ref)
		}
		vol *= side[l]
	}
	var s float64
	for c, dc := range delta {
		s += dc / side[c]
	}
	// The division rounds: inflate by a relative 1e-12 so the bound stays
	// a bound.
	return vol * s * (1 + 1e-12)
}

func faceDotSlow(delta, a, b, ref []float64) float64 {
	var s float64
	for c, dc := range delta {
		if dc == 0 {
			continue
		}
		f := dc
		for l := range a {
			if l == c {
				continue
			}
			m := a[l]
			if b != nil {
				m = min(m, b[l])
			}
			f *= max(0, m-ref[l])
		}
		s += f
	}
	return s
}

// boxMin is the volume of box(min(a, b)) above ref.
func boxMin(a, b, ref []float64) float64 {
	v := 1.0
	for j := range a {
		m := min(a[j], b[j])
		if !(m > ref[j]) {
			return 0
		}
		v *= m - ref[j]
	}
	return v
}

// dominated reports whether u_i ≤ L_j coordinate-wise for some j ≠ i.
func (p *Policy) dominated(i int) bool {
	switch p.pruned[i] {
	case 1:
		return false
	case 2:
		return true
	}
	u := p.upper[i]
	if j := p.lastDom[i]; j >= 0 && j != i && weaklyBelow(u, p.lower[j]) {
		p.pruned[i] = 2
		return true
	}
	for j, l := range p.lower {
		if j != i && weaklyBelow(u, l) {
			p.lastDom[i] = j
			p.pruned[i] = 2
			return true
		}
	}
	p.pruned[i] = 1
	return false
}

func weaklyBelow(a, b []float64) bool {
	for j := range a {
		if a[j] > b[j] {
			return false
		}
	}
	return true
}

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

// entry is a candidate: key is its exact marginal gain when fresh (computed
// for the current S), an upper bound on it otherwise.
type entry struct {
	key   float64
	box   float64 // gain against the empty set: the volume of its UCB box
	arm   int
	fresh bool
}

// lazyHeap orders candidates by (key, lowest arm) so that exact ties are
// broken as plain greedy breaks them.
type lazyHeap struct {
	items []entry
}

func (h *lazyHeap) Less(a, b int) bool {
	x, y := &h.items[a], &h.items[b]
	if x.key != y.key {
		return x.key > y.key
	}
	return x.arm < y.arm
}
func (h *lazyHeap) Len() int      { return len(h.items) }
func (h *lazyHeap) Swap(a, b int) { h.items[a], h.items[b] = h.items[b], h.items[a] }
func (h *lazyHeap) Push(x any)    { h.items = append(h.items, x.(entry)) }
func (h *lazyHeap) Pop() any {
	e := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	return e
}
