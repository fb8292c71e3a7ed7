package thvucb

import (
	"math"
	"math/rand/v2"
	"slices"
)

// lazyGreedy is the per-arm state of the lazy greedy selection.
//
// key[i] + R_i bounds arm i's gain at the current step, rounding slack
// included, where R_i = rise.now[i] is arm i's rise potential (drift.go).
// Bounds are kept in this shifted form so that a step's bounds can be cached
// by a plain copy and compared with those of a later round by adding the
// drift since. By submodularity a gain only shrinks as the slate grows, so
// a bound stays a bound for every later step of the same Select.
type lazyGreedy struct {
	slack  float64
	call   int64     // greedy calls so far: stamps gainAt
	key    []float64 // key[i] + R_i: upper bound on arm i's gain at this step
	gain   []float64 // exact gain, current when gainAt[i] == the step's stamp
	gainAt []int64
	// gainOf[i] is how many inclusion–exclusion terms gain[i] has
	// subtracted; a gain of an earlier step of the same greedy call
	// (gainAt[i] ≥ first) is continued from there (terms.gainFrom).
	gainOf []int
	first  int64       // the stamp of step 0 of the current greedy call
	out    []bool      // chosen or pruned in this greedy call
	evals  int         // exact gains computed in the current step
	pruned []candidate // arms pruned in this greedy call, with their last keys
	total  int64       // exact gains computed over the policy's life (for tests and benchmarks)
}

func (g *lazyGreedy) init(n int) {
	g.key, g.gain = make([]float64, n), make([]float64, n)
	g.gainAt, g.out = make([]int64, n), make([]bool, n)
	g.gainOf = make([]int, n)
}

// stepCache remembers, per prefix set S of a greedy step, the bounds that
// step ended with. UCB exploration makes the greedy prefix change often but
// return to the same few sets, and a cached bound plus the drift since is
// usually far tighter than anything computed from scratch.
type stepCache struct {
	entries []stepEntry
	zobrist []uint64 // per arm; the XOR over a set names the set
	sorted  []int    // the current prefix, sorted
	face    []float64
	// fall[s] is fallOf for arm s since the snapshot of greedy call
	// fallFrom[s], computed in call fallAt[s]: the entries a round uses
	// were mostly written in one earlier call, and share their snapshots.
	fall             []float64
	fallFrom, fallAt []int64
}

// stepEntry holds one greedy step's bounds for one prefix set.
type stepEntry struct {
	hash uint64
	set  []int     // the prefix set, sorted
	call int64     // the greedy call that wrote it; 0: empty
	snap []float64 // u_s of every s ∈ set, in set order, when written
	next int       // the arm greedy chose after this prefix
	key  []float64 // key[i] + R_i(now) + the falls of set since bound arm i's gain
}

// cachedSets is how many prefix sets are remembered per slate position.
const cachedSets = 16

func (c *stepCache) init(n, d, k int, rng *rand.Rand) {
	c.zobrist = make([]uint64, n)
	for i := range c.zobrist {
		c.zobrist[i] = rng.Uint64()
	}
	c.sorted = make([]int, 0, k)
	c.face = make([]float64, d)
	c.fall, c.fallFrom, c.fallAt = make([]float64, n), make([]int64, n), make([]int64, n)
	if k < 2 {
		return
	}
	c.entries = make([]stepEntry, cachedSets*(k-1))
	keys := make([]float64, len(c.entries)*n)
	for s := range c.entries {
		e := &c.entries[s]
		e.set = make([]int, 0, k)
		e.snap = make([]float64, 0, k*d)
		e.key = keys[s*n : (s+1)*n : (s+1)*n]
	}
}

// lookup returns the entry for the current prefix set, or nil.
func (c *stepCache) lookup(hash uint64) *stepEntry {
	for s := range c.entries {
		e := &c.entries[s]
		if e.hash == hash && e.call > 0 && slices.Equal(e.set, c.sorted) {
			return e
		}
	}
	return nil
}

// store records the bounds of the step just done for the current prefix
// set, over its older entry or else over the least recently written one.
// A step that evaluated only the cached choice, and chose it, learnt
// nothing new: its bounds are the cached ones plus the drift, and the
// cached ones with their older snapshot are at least as tight (the drift is
// a net displacement), so they stay.
func (p *Policy) store(e *stepEntry, hash uint64, next int) {
	g, c := &p.lazy, &p.steps
	if e != nil && g.evals <= 1 && next == e.next {
		return
	}
	if e == nil {
		e = &c.entries[0]
		for s := range c.entries {
			if c.entries[s].call < e.call {
				e = &c.entries[s]
			}
		}
		e.hash = hash
		e.set = append(e.set[:0], c.sorted...)
	}
	e.call = g.call
	e.next = next
	e.snap = e.snap[:0]
	for _, s := range c.sorted {
		e.snap = append(e.snap, p.upper[s]...)
	}
	copy(e.key, g.key)
	for _, q := range g.pruned {
		e.key[q.arm] = q.bound // still a bound, for rounds where the arm is not pruned
	}
}

// exclude takes arm i out of this greedy call, chosen or pruned. Its key
// becomes −Inf, so that the passes skip it without a test; a pruned arm's
// last bound is kept for the cached steps, where it may be a candidate.
func (g *lazyGreedy) exclude(i int, pruned bool) {
	if pruned {
		g.pruned = append(g.pruned, candidate{g.key[i], i})
	}
	g.out[i] = true
	g.key[i] = math.Inf(-1)
}

// greedy runs lazy greedy selection on the UCB vectors. With prune set, a
// candidate is tested for confident domination only when it would be chosen,
// which selects exactly what greedy over A_t selects. It reports false when
// fewer than k arms survive pruning.
//
// At every step the arm chosen after the same prefix set last time (or else
// the arm of largest bound) is evaluated exactly first, and its gain is the
// bar; one pass then folds in the bounds cached for the set (plus the drift
// since) and evaluates exactly every arm whose bound still reaches the bar,
// raising the bar as it goes. Step 0 is the same with the empty prefix,
// whose gains are the boxes.
func (p *Policy) greedy(slate []int, prune bool) bool {
	g, c := &p.lazy, &p.steps
	k := len(slate)
	g.call++
	g.first = g.call * int64(k+1)
	p.ie.reset()
	c.sorted = c.sorted[:0]
	clear(g.out)
	g.pruned = g.pruned[:0]
	// Step 0's bounds: box(u_i) as last computed, plus the rise since.
	for i, v := range p.boxes {
		g.key[i] = v + g.slack - p.riseAt[i]
	}
	var hash uint64
	full := 0 // how many of the first arms chosen have u = (1, …, 1)
	for j := 0; j < k; j++ {
		stamp := g.call*int64(k+1) + int64(j)
		g.evals = 0
		best := -1
		if j > 0 && full >= max(1, j-1) {
			// Every gain is exactly 0 (see zeroGains): the literal
			// algorithm takes the lowest index left in A_t.
			if best = p.lowest(prune); best < 0 {
				return false
			}
		} else if j == 3 && full == 1 && p.prob.D == 3 && len(p.ie.signs) == 7 {
			// Only the first arm is full: every gain is formed from two
			// boxes (see twoBoxGain), computed for every arm left.
			if best = p.twoBoxBest(prune); best < 0 {
				return false
			}
		} else {
			var cached *stepEntry
			if j > 0 {
				cached = c.lookup(hash)
			}
			ceil := math.Inf(1)
			if j == 0 && p.clip {
				ceil = p.fullBox
			}
			for try := 0; ; try++ {
				switch {
				case try == 0:
					best = p.bestGain(stamp, cached, ceil)
				default:
					best = p.bestGain(stamp, nil, ceil) // cached bounds already folded in
				}
				if best < 0 {
					return false
				}
				if !prune || !p.dominated(best) {
					break
				}
				g.exclude(best, true)
			}
			if j > 0 {
				p.store(cached, hash, best)
			}
		}
		if full == j && p.clip && isFull(p.upper[best]) {
			full++
		}
		slate[j] = best
		g.exclude(best, false)
		p.ie.add(p.upper[best])
		hash ^= c.zobrist[best]
		at, _ := slices.BinarySearch(c.sorted, best)
		c.sorted = slices.Insert(c.sorted, at, best)
	}
	return true
}

// bestGain returns the remaining arm of largest exact gain at the current
// step, lowest index on ties, or −1 if none remains. If cached is not nil,
// its bounds plus the drift since are folded in. No exact gain of the step
// can exceed ceil, so once the bar reaches it no arm after the best can win.
func (p *Policy) bestGain(stamp int64, cached *stepEntry, ceil float64) int {
	g, c := &p.lazy, &p.steps
	rise := p.rise.now
	var key []float64
	grown := 0.0 // the falls of the prefix arms since cached was written
	if cached != nil {
		key = cached.key
		d := p.prob.D
		grown = g.slack
		for x, s := range c.sorted {
			grown += p.fallSince(s, cached.call, cached.snap[x*d:(x+1)*d])
		}
	}
	best := -1
	if cached != nil && !g.out[cached.next] {
		best = cached.next
	} else {
		if key != nil {
			for i, v := range key {
				g.key[i] = min(g.key[i], v+grown)
			}
			key = nil
		}
		top := math.Inf(-1)
		for i, v := range g.key {
			if b := v + rise[i]; b > top {
				best, top = i, b
			}
		}
		if best < 0 {
			return -1
		}
	}
	// One pass folds the cached bounds in and evaluates exactly every arm
	// whose bound reaches the best gain found so far. Visiting the arms in
	// decreasing order of bound (a heap) evaluates fewer gains but costs
	// more than it saves: 66 ms against 57 ms for a whole d = 5 run.
	// Arms out of the call have key −Inf and never reach the bar.
	bar := p.exact(best, stamp)
	keys := g.key
	rise = rise[:len(keys)]
	if key != nil {
		key = key[:len(keys)]
		for i := range keys {
			v := min(keys[i], key[i]+grown)
			keys[i] = v
			if v+rise[i] >= bar {
				best, bar = p.challenge(i, best, bar, stamp)
			}
		}
		return best
	}
	for i, v := range keys {
		if v+rise[i] >= bar {
			if bar >= ceil && i > best {
				break // a tie at most, and best has the lower index
			}
			best, bar = p.challenge(i, best, bar, stamp)
		}
	}
	return best
}

// lowest returns the lowest-index arm left in this greedy call (not
// confidently dominated, if prune), or −1 if none is: the choice of a step
// whose gains are all exactly 0. Its UCB vector is made current, as an
// exact evaluation would have.
func (p *Policy) lowest(prune bool) int {
	g := &p.lazy
	for i, out := range g.out {
		if out {
			continue
		}
		p.refresh(i)
		if !prune || !p.dominated(i) {
			return i
		}
		g.exclude(i, true)
	}
	return -1
}

// isFull reports whether u = (1, …, 1): with clipping, the largest UCB
// vector there is, above every other coordinate-wise.
func isFull(u []float64) bool {
	for _, v := range u {
		if v != 1 {
			return false
		}
	}
	return true
}

// zeroGains: with clipping every u_i ≤ (1, …, 1). If the first m − 1 arms
// of S (m = |S| ≥ 2), or all of them, are at (1, …, 1), the exact gain of
// every u given S, as terms.gain forms it, is exactly 0, not merely up to
// rounding. Every term box(min(u, corner_T)) is then B = box(u) if
// s_m ∉ T and X = box(min(u, u_{s_m})) if s_m ∈ T, the very same bits (the
// minima and products are formed alike). The terms of the first m − 1 arms
// come first with signs +, −, …, + and subtract from B in turn: B, 0, B,
// …, 0. Their twins with s_m alternate −, +, …, −: 0, X, 0, …, X. The term
// {s_m} (+) last: X − X = 0. Every step is exact (x − x = 0, 0 + x = x).
// If all m arms are at (1, …, 1), X = B and the same holds for m = 1.

// twoBoxGain: at d = 3 with S = (s₁, s₂, s₃) and only u_{s₁} at (1, …, 1),
// terms.gain's value for u is fl(fl(fl(X₃ − X₂₃) + X₂₃) − X₃), where
// X₃ = box(min(u, u_{s₃})) and X₂₃ = box(min(u, u_{s₂} ∧ u_{s₃})) are
// its terms {s₃} and {s₂, s₃} as it forms them. Its terms come in the
// order {s₁} +, {s₁,s₂} −, {s₂} +, {s₁,s₃} −, {s₁,s₂,s₃} +, {s₂,s₃} −,
// {s₃} + (terms.add), and a corner with s₁ is the corner without it to
// the last bit (min(1 − r, x − r) = x − r for x ≤ 1, rounding being
// monotone), so the terms are B, X₂, X₂, X₃, X₂₃, X₂₃, X₃ with B = box(u),
// its start. The running sum is then exactly B − B = +0, +0 + X₂ = X₂,
// X₂ − X₂ = +0, +0 + X₃ = X₃ (x − x = +0, 0 + x = x), then X₃ − X₂₃,
// + X₂₃, − X₃ as above. If u is not above r in some coordinate, the gain
// is box(u) = +0, and so is the formula (X₃ = X₂₃ = +0).
func (ts *terms) twoBoxGain(u []float64) float64 {
	r := ts.ref[:3]
	v0, v1, v2 := u[0]-r[0], u[1]-r[1], u[2]-r[2]
	if !(v0 > 0 && v1 > 0 && v2 > 0) {
		return box(u, ts.ref)
	}
	x3 := ts.term3(ts.corners[18:21:21], v0, v1, v2)
	x23 := ts.term3(ts.corners[15:18:18], v0, v1, v2)
	g := float64(x3 - x23)
	g = float64(g + x23)
	return float64(g - x3)
}

// term3 is one term of gain3 (or of gainLoop, which gives 0 when a minimum
// is not > 0) for v = u − r > 0: the same value to the last bit.
func (ts *terms) term3(m []float64, v0, v1, v2 float64) float64 {
	c0, c1, c2 := min(m[0], v0), min(m[1], v1), min(m[2], v2)
	if !(c0 > 0 && c1 > 0 && c2 > 0) {
		return 0
	}
	return float64((c0 * c1) * c2)
}

// twoBoxBest is the step of twoBoxGain: the arm left of largest gain,
// lowest index on ties, not confidently dominated if prune (−1 if none).
// It neither reads nor writes bounds: the step is exact.
func (p *Policy) twoBoxBest(prune bool) int {
	g := &p.lazy
	for {
		best, bar := -1, 0.0
		for i, out := range g.out {
			if out {
				continue
			}
			p.refresh(i)
			if v := p.ie.twoBoxGain(p.upper[i]); best < 0 || v > bar {
				best, bar = i, v
			}
		}
		if best < 0 || !prune || !p.dominated(best) {
			return best
		}
		g.exclude(best, true)
	}
}

// challenge evaluates arm i exactly and returns it with its gain if it beats
// best, whose gain is bar (ties to the lower index), else best and bar.
func (p *Policy) challenge(i, best int, bar float64, stamp int64) (int, float64) {
	if gi := p.exact(i, stamp); gi > bar || gi == bar && i < best {
		return i, gi
	}
	return best, bar
}

// exact returns arm i's gain at the current step (stamp), computing it once.
func (p *Policy) exact(i int, stamp int64) float64 {
	g := &p.lazy
	if g.gainAt[i] != stamp {
		p.refresh(i)
		if g.gainAt[i] >= g.first {
			// Evaluated at an earlier step of this call, on this very u_i
			// (made current once per Select).
			g.gain[i] = p.ie.gainFrom(g.gain[i], p.upper[i], g.gainOf[i])
		} else {
			g.gain[i] = p.ie.gain(p.upper[i])
		}
		g.gainAt[i] = stamp
		g.gainOf[i] = len(p.ie.signs)
		g.key[i] = min(g.key[i], g.gain[i]+g.slack-p.rise.now[i])
		g.evals++
		g.total++
	}
	return g.gain[i]
}

// candidate is an arm with a bound.
type candidate struct {
	bound float64
	arm   int
}

// fallSince returns fallOf for arm s from its snapshot old, taken in greedy
// call from, to now, computed once per call and snapshot.
func (p *Policy) fallSince(s int, from int64, old []float64) float64 {
	c := &p.steps
	if c.fallAt[s] != p.lazy.call || c.fallFrom[s] != from {
		c.fallAt[s], c.fallFrom[s] = p.lazy.call, from
		c.fall[s] = fallOf(c.face, p.upper[s], old, p.prob.Ref)
	}
	return c.fall[s]
}
