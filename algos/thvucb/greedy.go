package thvucb

import (
	"math"
	"math/big"
	"math/bits"
	"math/rand/v2"
	"slices"

	"thv/algos"
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
	// zeroAt[i] is the step at which arm i was found dominated
	// (slateDominates): from there on, in the same greedy call, its gain
	// is exactly 0.
	zeroAt []int64
	// gainOf[i] is how many inclusion–exclusion terms gain[i] has
	// subtracted; a gain of an earlier step of the same greedy call
	// (gainAt[i] ≥ first) is continued from there (terms.gainFrom).
	gainOf []int
	first  int64       // the stamp of step 0 of the current greedy call
	out    []bool      // chosen or pruned in this greedy call
	evals  int         // exact gains computed in the current step
	pruned []candidate // arms pruned in this greedy call, with their last keys
	total  int64       // exact gains computed over the policy's life (for tests and benchmarks)

	errScale      float64 // the step's gains' error bounds per unit of box (terms.errorScale)
	exactCompares int64   // near ties decided in exact arithmetic (for tests)
	ratA, ratB    big.Rat // their scratch
}

func (g *lazyGreedy) init(n int) {
	g.key, g.gain, g.zeroAt = make([]float64, n), make([]float64, n), make([]int64, n)
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
	keys, riseAt := g.key[:len(p.boxes)], p.riseAt[:len(p.boxes)]
	for i, v := range p.boxes {
		keys[i] = v + g.slack - riseAt[i]
	}
	var hash uint64
	full := false // some arm chosen has u = (1, …, 1)
	for j := 0; j < k; j++ {
		stamp := g.call*int64(k+1) + int64(j)
		g.evals = 0
		g.errScale = p.ie.errorScale()
		best := -1
		if full {
			// With clipping every u ≤ (1, …, 1), so every gain is exactly
			// 0 (dominated): the literal algorithm takes the lowest index
			// left in A_t.
			if best = p.lowest(prune); best < 0 {
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
		full = full || p.clip && isFull(p.upper[best])
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
	rise := p.rise.now[:len(g.key)]
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
			keys := g.key[:len(key)]
			for i, v := range key {
				keys[i] = min(keys[i], v+grown)
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
			if bar >= ceil && i > best && isFull(p.upper[best]) {
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

// challenge evaluates arm i exactly and returns it with its gain if it beats
// best, whose gain is bar (ties to the lower index), else best and bar.
func (p *Policy) challenge(i, best int, bar float64, stamp int64) (int, float64) {
	if gi := p.exact(i, stamp); p.beats(i, gi, best, bar) {
		return i, gi
	}
	return best, bar
}

// beats reports whether arm i, of computed gain gi, comes before arm best,
// of computed gain bar, at the current step: a larger gain in exact
// arithmetic, or an equal one and a lower index. The computed gains decide
// unless they are within their error bounds of each other; then the exact
// gains do (exactGain), unless the two UCB vectors are the same.
func (p *Policy) beats(i int, gi float64, best int, bar float64) bool {
	g := &p.lazy
	if algos.Near(gi, bar, g.errorBound(i, p.boxes), g.errorBound(best, p.boxes)) {
		return p.beatsExactly(i, gi, best, bar)
	}
	return gi > bar
}

// beatsExactly is beats for a near tie.
func (p *Policy) beatsExactly(i int, gi float64, best int, bar float64) bool {
	g := &p.lazy
	if slices.Equal(p.upper[i], p.upper[best]) || g.zeroAt[i] >= g.first && g.zeroAt[best] >= g.first {
		return gi > bar || gi == bar && i < best // the same gain, computed alike
	}
	g.exactCompares++
	switch c := p.exactGain(i, &g.ratA).Cmp(p.exactGain(best, &g.ratB)); {
	case c != 0:
		return c > 0
	default:
		return i < best
	}
}

// exact returns arm i's gain at the current step (stamp), computing it once:
// exactly 0 if u_i is weakly dominated by the UCB vector of an arm already
// in the slate (its box then lies inside that arm's) or not above the
// reference point in every coordinate (its box is empty), and otherwise,
// when it is positive in exact arithmetic, the inclusion–exclusion sum, with
// the bound on that sum's rounding error in err[i].
func (p *Policy) exact(i int, stamp int64) float64 {
	g := &p.lazy
	if g.gainAt[i] == stamp {
		return g.gain[i]
	}
	p.refresh(i)
	u := p.upper[i]
	gain := g.gain[i] // kept in a local: the stores below might alias it
	zero := g.zeroAt[i] >= g.first
	switch {
	case zero:
		// Dominated at an earlier step of this call: the slate only
		// grew.
	case g.gainAt[i] >= g.first:
		// Evaluated at an earlier step of this call, on this very u_i
		// (made current once per Select): continued.
		gain = p.ie.gainFrom(gain, u, g.gainOf[i])
	default:
		gain = p.ie.gain(u)
	}
	// A gain that is exactly 0 is computed within its error bound of
	// 0; only then can u_i be dominated, and the test decides.
	if zero || math.Abs(gain) <= g.errScale*p.boxes[i] && p.slateDominates(i) {
		if !zero {
			g.zeroAt[i] = stamp
		}
		gain = 0
	}
	g.gain[i] = gain
	g.gainAt[i] = stamp
	g.gainOf[i] = len(p.ie.signs)
	g.key[i] = min(g.key[i], gain+g.slack-p.rise.now[i])
	g.evals++
	g.total++
	return gain
}

// slateDominates reports whether the gain of arm i (its current u_i) given
// the slate chosen so far is exactly 0: u_i ≤ u_s for some arm s of the
// slate, or u_i not strictly above the reference point in some coordinate.
// For boxes anchored at the reference point this is the only way:
// otherwise u_i's own corner, with a neighbourhood of positive volume, lies
// outside every box of the slate. The boxes filter: a positive box has
// every side positive, and u ≤ v gives box(u) ≤ box(v), rounding being
// monotone.
func (p *Policy) slateDominates(i int) bool {
	u, b := p.upper[i], p.boxes[i]
	if !(b > 0) {
		for j, r := range p.prob.Ref {
			if !(u[j] > r) {
				return true
			}
		}
	}
	for _, s := range p.steps.sorted {
		if b <= p.boxes[s] && weaklyBelow(u, p.upper[s]) {
			return true
		}
	}
	return false
}

// errorBound bounds the rounding error of arm i's gain at the current
// step: 0 for a gain that is exactly 0, else the bound for an
// inclusion–exclusion sum of the step's terms (terms.errorBound).
func (g *lazyGreedy) errorBound(i int, boxes []float64) float64 {
	if g.zeroAt[i] >= g.first {
		return 0
	}
	return g.errScale * boxes[i]
}

// weaklyBelow reports whether u ≤ v coordinate-wise.
func weaklyBelow(u, v []float64) bool {
	v = v[:len(u)]
	for j, x := range u {
		if x > v[j] {
			return false
		}
	}
	return true
}

// exactGain returns, in z, arm i's gain given the slate chosen so far in
// exact arithmetic on the floats u_i, u_s and r: inclusion–exclusion over
// the subsets of the slate, with math/big's rationals. Slow, and called
// only for near ties (beats).
func (p *Policy) exactGain(i int, z *big.Rat) *big.Rat {
	u, ref, set := p.upper[i], p.prob.Ref, p.steps.sorted
	z.SetInt64(0)
	if p.slateDominates(i) {
		return z
	}
	var term, side, r big.Rat
	corner := make([]float64, len(u))
	for mask := 0; mask < 1<<len(set); mask++ {
		copy(corner, u)
		for b, s := range set {
			if mask>>b&1 == 1 {
				for j, v := range p.upper[s] {
					corner[j] = min(corner[j], v)
				}
			}
		}
		term.SetInt64(1)
		for j, c := range corner {
			side.Sub(side.SetFloat64(c), r.SetFloat64(ref[j]))
			if side.Sign() <= 0 {
				term.SetInt64(0)
				break
			}
			term.Mul(&term, &side)
		}
		if bits.OnesCount(uint(mask))%2 == 0 {
			z.Add(z, &term)
		} else {
			z.Sub(z, &term)
		}
	}
	return z
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
