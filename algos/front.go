package algos

import (
	"math"
	"math/bits"
	"slices"
)

// EmpiricalFrontSize returns the number of arms whose empirical mean vector
// is not dominated by another arm's; arms with exactly equal means dominate
// neither each other and are each counted. It allocates its scratch space:
// a policy calling it every round should keep a FrontTracker.
func EmpiricalFrontSize(means [][]float64) int {
	var f FrontTracker
	return f.Size(means)
}

// FrontTracker maintains the non-dominated vectors of a set that changes a
// few vectors at a time, as the empirical means of a bandit do (only the
// arms played in a round move): their number (Size) and which they are
// (OnFront). It keeps a copy of the vectors it last saw and finds the
// changed ones itself, so it stays right whatever the caller changed. The
// zero value is ready to use; it is not safe for concurrent use.
//
// The front is kept as a list of its members with their signatures
// side by side. An update costs O(n·d) to find the changed set C, one test
// per dominated arm whose recorded dominator moved (usually still a
// dominator; a full scan when not), and one pass over the list per changed
// arm. The list is an antichain (no member dominates another), and stays
// one:
//   - the changed arms leave it; the rest of the old front is still an
//     antichain, and only a changed arm can dominate one of its members
//     now (unchanged pairs keep their relation);
//   - an unchanged dominated arm whose dominators all moved away, found by
//     a scan of every arm, joins it; it dominates no member (it was
//     dominated by some arm when they were on the front; transitivity),
//     and no arm dominates it;
//   - each changed arm c then tests the members both ways in one pass: if
//     a member dominates c, c is dominated (and, the list being an
//     antichain, dominates no member); else c removes the members it
//     dominates and joins. A dominated arm is always dominated by some
//     non-dominated one (the set is finite), which is in the list or
//     joins it later and then removes c; so the list ends as the front.
//
// Tests go through a signature filter as in Layers, whose quantisation is
// kept between calls (any fixed monotone quantisation is valid), so only
// the changed vectors are re-quantised, unless one leaves the range.
type FrontTracker struct {
	prev    []float64 // the vectors of the last call, flat
	n, d    int
	nd      []bool // nd[i]: i is not dominated
	wit     []int  // wit[i]: an arm dominating i (when !nd[i])
	changed []int
	moved   []bool   // moved[i]: i is in changed
	list    []int    // the front's members, in no particular order
	lsig    []uint64 // lsig[a] = q.sig[list[a]] while the filter is on
	pos     []int    // pos[i]: i's index in list (when nd[i])
	// dep holds, per arm w, the set of dominated arms whose witness is w
	// (dep[w·words : (w+1)·words], a bit per arm): the arms whose witness
	// moved are read off it, in ascending order, instead of visiting all n.
	dep    []uint64
	words  int
	q      quantiser
	primed bool // a call has compared every vector since Reserve reset the copy
}

// quantiser packs vectors into signatures (see Layers) over a fixed range.
type quantiser struct {
	sig       []uint64
	lo, hi    [8]float64
	scale     [8]float64
	top       float64
	w         int
	high      uint64 // 0: filter off
	ones      uint64 // 1 in every field
	ready     bool   // lo, hi, scale and sig are set
	unusable  bool   // d > 8 or non-finite values: filter off
	dimension int
}

// reset recomputes the range and every signature.
func (q *quantiser) reset(points [][]float64) {
	q.ready, q.high = true, 0
	n := len(points)
	d := q.dimension
	if n == 0 || d == 0 || d > 8 {
		return
	}
	copy(q.lo[:], points[0])
	q.hi = q.lo
	for _, p := range points {
		for j, x := range p[:d] {
			q.lo[j] = min(q.lo[j], x)
			q.hi[j] = max(q.hi[j], x)
		}
	}
	// A margin of a quarter of the range on each side, so that vectors
	// moving near its ends rarely force a reset.
	for j := range d {
		m := float64((q.hi[j] - q.lo[j]) / 4) // rounded: / 4 becomes * 0.25, fusable
		q.lo[j] -= m
		q.hi[j] += m
	}
	q.w = min(32, 64/d)
	q.top = float64(uint64(1)<<(q.w-1) - 1)
	var high uint64
	for j := range d {
		span := q.hi[j] - q.lo[j]
		if span != span || span > math.MaxFloat64 {
			return // NaN or infinite: filter off
		}
		q.scale[j] = 0
		if span > 0 {
			if q.scale[j] = q.top / span; q.scale[j] > math.MaxFloat64 {
				return
			}
		}
		high |= uint64(1) << (q.w*j + q.w - 1)
	}
	q.ones = 0
	for j := range d {
		q.ones |= uint64(1) << (q.w * j)
	}
	for i, p := range points {
		q.sig[i] = q.pack(p)
	}
	q.high = high
}

// inRange reports whether p lies within the quantiser's range.
func (q *quantiser) inRange(p []float64) bool {
	for j, x := range p[:q.dimension] {
		if !(x >= q.lo[j] && x <= q.hi[j]) {
			return false
		}
	}
	return true
}

func (q *quantiser) pack(p []float64) uint64 {
	var sg uint64
	for j, x := range p[:q.dimension] {
		v := (x - q.lo[j]) * q.scale[j]
		// The clamp written as comparisons, cheaper than min and max: the
		// same value for every v (a NaN stays NaN, −0 converts as +0).
		if v < 0 {
			v = 0
		}
		if v > q.top {
			v = q.top
		}
		sg |= uint64(int64(v)) << (q.w * j)
	}
	return sg
}

// mayDominate reports whether the signatures allow m to dominate i
// (always when the filter is off: with h = 0 the test reads 0 == 0).
func (q *quantiser) mayDominate(m, i int) bool {
	h := q.high
	return ((q.sig[m]|h)-q.sig[i])&h == h
}

// above reports whether the signatures tell that m is above i in every
// coordinate (so m dominates i): every level of m is above i's, as every
// field of sig[m]|high minus the field of sig[i] plus one keeps its guard
// bit exactly when it is (no field borrows: a level plus one is at most
// the guard bit). The quantisation being monotone, a higher level is a
// larger value. Never with the filter off.
func (q *quantiser) above(m, i int) bool {
	h := q.high
	return h != 0 && ((q.sig[m]|h)-(q.sig[i]+q.ones))&h == h
}

// Reserve preallocates for n vectors of d coordinates.
func (f *FrontTracker) Reserve(n, d int) {
	if f.n == n && f.d == d && f.nd != nil {
		return
	}
	f.n, f.d = n, d
	f.primed = false
	f.prev = make([]float64, n*d)
	f.nd = make([]bool, n)
	f.wit = make([]int, n)
	f.changed = make([]int, 0, n)
	f.moved = make([]bool, n)
	f.list = make([]int, n)
	f.lsig = make([]uint64, n)
	f.pos = make([]int, n)
	f.words = (n + 63) / 64
	f.dep = make([]uint64, n*f.words)
	for i := range f.nd {
		f.nd[i] = true // the zero vectors: all equal, none dominated
		f.list[i], f.pos[i] = i, i
	}
	f.q = quantiser{sig: make([]uint64, n), dimension: d}
}

// dominates is the filtered exact test, which the signatures alone
// decide when they tell m is above i everywhere.
func (f *FrontTracker) dominates(points [][]float64, m, i int) bool {
	return f.q.mayDominate(m, i) && (f.q.above(m, i) || Dominates(points[m], points[i]))
}

// Size returns the number of vectors of points that no other vector
// dominates (exact duplicates each count). Points must not contain NaN.
func (f *FrontTracker) Size(points [][]float64) int { return f.update(points, nil, true) }

// SizeAfter is Size when only the vectors of moved (any order, repeats
// allowed) can have changed since the last call, unless all is set: it
// compares only those with its copy. The first call, and one after the
// number or length of the vectors changed, compares every vector.
func (f *FrontTracker) SizeAfter(points [][]float64, moved []int, all bool) int {
	return f.update(points, moved, all)
}

// update is Size, comparing only the vectors of moved unless all is set.
func (f *FrontTracker) update(points [][]float64, moved []int, all bool) int {
	n := len(points)
	d := 0
	if n > 0 {
		d = len(points[0])
	}
	f.Reserve(n, d)
	f.changed = f.changed[:0]
	prev := f.prev[:n*d]
	if !all && f.primed {
		for _, i := range moved {
			p, old := points[i][:d], prev[d*i:d*i+d:d*i+d]
			for j, x := range p {
				if x != old[j] {
					f.change(i, p, old)
					break
				}
			}
		}
		slices.Sort(f.changed) // the order a comparison of all would find them in
	} else {
		f.compareAll(points, prev, d)
	}
	f.primed = true
	return f.settle(points)
}

// compareAll finds the changed vectors among all.
func (f *FrontTracker) compareAll(points [][]float64, prev []float64, d int) {
	// Changed vectors (compared with ==, as slices.Equal: −0 equals +0),
	// unrolled for the paper's d = 2–5.
	switch d {
	case 2:
		for i, p := range points {
			p, old := p[:2], prev[2*i:2*i+2:2*i+2]
			if p[0] != old[0] || p[1] != old[1] {
				f.change(i, p, old)
			}
		}
	case 3:
		for i, p := range points {
			p, old := p[:3], prev[3*i:3*i+3:3*i+3]
			if p[0] != old[0] || p[1] != old[1] || p[2] != old[2] {
				f.change(i, p, old)
			}
		}
	case 4:
		for i, p := range points {
			p, old := p[:4], prev[4*i:4*i+4:4*i+4]
			if p[0] != old[0] || p[1] != old[1] || p[2] != old[2] || p[3] != old[3] {
				f.change(i, p, old)
			}
		}
	case 5:
		for i, p := range points {
			p, old := p[:5], prev[5*i:5*i+5:5*i+5]
			if p[0] != old[0] || p[1] != old[1] || p[2] != old[2] || p[3] != old[3] || p[4] != old[4] {
				f.change(i, p, old)
			}
		}
	default:
		for i, p := range points {
			p, old := p[:d], prev[d*i:d*i+d:d*i+d]
			for j, x := range p {
				if x != old[j] {
					f.change(i, p, old)
					break
				}
			}
		}
	}
}

// settle brings the front up to date with the changed vectors.
func (f *FrontTracker) settle(points [][]float64) int {
	if len(f.changed) == 0 {
		return len(f.list)
	}
	// Signatures: the changed vectors only, unless one leaves the range.
	rescale := !f.q.ready
	for _, c := range f.changed {
		if rescale = rescale || f.q.high != 0 && !f.q.inRange(points[c]); rescale {
			break
		}
	}
	if rescale {
		f.q.reset(points)
		for a, m := range f.list {
			f.lsig[a] = f.q.sig[m]
		}
	} else if f.q.high != 0 {
		for _, c := range f.changed {
			f.q.sig[c] = f.q.pack(points[c])
		}
	}
	for _, c := range f.changed {
		if f.nd[c] {
			f.leave(c)
		}
	}
	// Unchanged dominated arms: one whose dominator did not move stays
	// dominated; if it moved, it is checked again (a full scan only when
	// the old dominator no longer dominates). Those arms are the sets dep
	// of the changed arms, visited in ascending order as a loop over all
	// arms would (scan changes only the arm it is given, in its own word,
	// which is read before).
	for wd := range f.words {
		var set uint64
		for _, c := range f.changed {
			set |= f.dep[c*f.words+wd]
		}
		for set != 0 {
			i := wd*64 + bits.TrailingZeros64(set)
			set &= set - 1
			if f.moved[i] {
				continue
			}
			if w := f.wit[i]; !f.dominates(points, w, i) {
				f.undep(w, i)
				if f.scan(points, i) {
					f.join(i)
				}
			}
		}
	}
	// Changed arms, each in one pass over the list. A changed arm that
	// its witness still dominates stays dominated and needs no pass: a
	// member it dominates is dominated by the witness too, and so by some
	// non-dominated arm, whose own pass (if it changed) or whose presence
	// on the front before (if not: then the member changed, and its own
	// pass finds it) keeps the member out.
	h := f.q.high
	for _, c := range f.changed {
		if !f.nd[c] {
			if f.dominates(points, f.wit[c], c) {
				continue
			}
			f.undep(f.wit[c], c)
		}
		f.nd[c] = true
		// The filter passes every pair when it is off: with h = 0 both
		// tests read 0 == 0.
		sc, pc := f.q.sig[c], points[c]
		for a := 0; ; {
			if a = f.related(sc, a); a == len(f.list) {
				break
			}
			sm := f.lsig[a]
			below, above := ((sc|h)-sm)&h == h, ((sm|h)-sc)&h == h
			m := f.list[a]
			if below && Dominates(pc, points[m]) {
				f.nd[m], f.wit[m] = false, c
				f.redep(c, m)
				f.remove(a) // the last member moves to a
				continue
			}
			if above && Dominates(points[m], pc) {
				f.nd[c], f.wit[c] = false, m
				f.redep(m, c)
				break
			}
			a++
		}
		if f.nd[c] {
			f.join(c)
		}
	}
	for _, c := range f.changed {
		f.moved[c] = false
	}
	return len(f.list)
}

// related returns the index of the first member from a on whose
// signature allows it to dominate, or be dominated by, the vector of
// signature sc (len(f.list) if none): the common case, neither, is this
// tight loop over the signatures alone.
func (f *FrontTracker) related(sc uint64, a int) int {
	h := f.q.high
	lsig := f.lsig[:len(f.list)]
	below := sc | h
	for ; a < len(lsig); a++ {
		sm := lsig[a]
		if (below-sm)&h == h || ((sm|h)-sc)&h == h {
			return a
		}
	}
	return a
}

// change records that vector i moved from old to p.
func (f *FrontTracker) change(i int, p, old []float64) {
	copy(old, p)
	f.changed = append(f.changed, i)
	f.moved[i] = true
}

// redep records that w is the witness of the dominated arm i.
func (f *FrontTracker) redep(w, i int) { f.dep[w*f.words+i>>6] |= 1 << (i & 63) }

// undep removes that record.
func (f *FrontTracker) undep(w, i int) { f.dep[w*f.words+i>>6] &^= 1 << (i & 63) }

// join adds i, non-dominated, to the list.
func (f *FrontTracker) join(i int) {
	f.pos[i] = len(f.list)
	f.lsig[len(f.list)] = f.q.sig[i]
	f.list = append(f.list, i)
}

// leave takes i out of the list (its status is then set by the caller).
func (f *FrontTracker) leave(i int) { f.remove(f.pos[i]) }

// remove takes the member at index a out of the list, moving the last
// member to a.
func (f *FrontTracker) remove(a int) {
	last := len(f.list) - 1
	m := f.list[last]
	f.list[a], f.lsig[a], f.pos[m] = m, f.lsig[last], a
	f.list = f.list[:last]
}

// OnFront reports whether vector i of the points of the last Size call is
// non-dominated (exact duplicates are each on the front).
func (f *FrontTracker) OnFront(i int) bool { return f.nd[i] }

// Front returns the non-dominated vectors of the last Size call, in no
// particular order; the slice is overwritten by the next Size call.
func (f *FrontTracker) Front() []int { return f.list }

// scan sets the status of arm i by looking for a dominator among all arms,
// and reports whether i is non-dominated.
func (f *FrontTracker) scan(points [][]float64, i int) bool {
	for j := range points {
		if j != i && f.dominates(points, j, i) {
			f.nd[i], f.wit[i] = false, j
			f.redep(j, i)
			return false
		}
	}
	f.nd[i] = true
	return true
}
