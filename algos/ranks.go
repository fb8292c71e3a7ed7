package algos

import (
	"cmp"
	"math/bits"
	"slices"
)

// The layers of Peel for d ≥ 4 when the points move little between calls
// (Layers.Ranks), by dominance relations kept between calls instead of the
// archive of maximal. In the paper's d = 4, 5 settings most UCB vectors are
// on the first layer (90–140 of 150 at d = 5), so the archive costs about
// |L|²/2 signature tests a round, although from one round to the next only
// a few pairs of arms change places in any coordinate.
//
// Every coordinate j keeps the arms in ascending order of coordinate j,
// and for every ordered pair of arms the state counts the coordinates in
// which a is ≥ i; geq(i) is the set of arms a ≠ i with that count at d,
// the arms ≥ i everywhere: its dominators and exact duplicates. A call
// repairs each order by insertion sort. Against the order alone ("a comes
// after i"), insertion sort swaps exactly the pairs whose order changed,
// and each swap moves two counts by one; equal values, which ≥ holds both
// ways, are one count more for the pair that comes first, taken off
// before the sort and put back after it for the groups of equal values
// there are then (few, and usually none). So a call costs O(n·d) plus the
// swaps and the equal pairs, and the layer is the arms whose geq, less the
// arms taken by earlier layers, holds no arm that Dominates them (an arm
// in geq is a dominator unless an exact duplicate, which the exact test
// tells). When too many arms moved for insertion sort to pay, the counts
// are formed again from the coordinates (O(n²·d)). Only comparisons of the
// coordinates are made, so the layers are the same sets as maximal's, to
// the last tie.

// rankMaxArms bounds the arms for which relations are kept: the counts
// take n² bytes and geq n²/8 (288 KiB at n = 512); past it, and past
// d = rankMaxDims, Peel takes the archive pass.
const (
	rankMaxArms = 512
	rankMaxDims = 64
)

// rankSets is the state of the rank pass.
type rankSets struct {
	n, d, words int
	// ready: the orders, keys, counts and ties hold for the last call's
	// points.
	ready bool
	ord   []int32 // ord[j·n : j·n+n]: arms by coordinate j ascending
	// off[j·n + r] = d·ord[j·n + r] + j: where the key of rank r of
	// coordinate j is in the points' coordinates, read in one step.
	off []int32
	// key[j·n + r]: coordinate j of arm ord[j·n + r], as of the last call
	// for the coordinates that had equal keys (tied: the next call takes
	// their equal pairs off before the order moves), and the full sort's
	// scratch.
	key  []float64
	tied []bool // tied[j]: coordinate j has equal keys
	// distinct: no coordinate has equal keys, so an arm ≥ another in every
	// coordinate is > it in every one: a dominator, no exact test needed.
	distinct bool
	count    []uint8  // count[i·n + a]: coordinates in which arm a ≥ arm i (0 for a = i)
	geq      []uint64 // geq[i·words : i·words+words]: the arms a with count[i·n + a] = d
	geqSize  []int32  // geqSize[i]: the number of arms in geq(i); 0 puts i on the first layer at once
	taken    []uint64 // the arms of the layers Peel returned whole so far, as a bitset
	none     bool     // taken is empty
}

// reset sizes the state for n arms of d coordinates, every order the
// identity and no relation known.
func (r *rankSets) reset(n, d int) {
	r.n, r.d, r.words = n, d, (n+63)/64
	r.ready = false
	r.ord = slices.Grow(r.ord[:0], n*d)[:n*d]
	r.off = slices.Grow(r.off[:0], n*d)[:n*d]
	for j := range d {
		for i := range n {
			r.ord[j*n+i] = int32(i)
			r.off[j*n+i] = int32(d*i + j)
		}
	}
	r.key = slices.Grow(r.key[:0], n*d)[:n*d]
	r.tied = slices.Grow(r.tied[:0], d)[:d]
	r.count = slices.Grow(r.count[:0], n*n)[:n*n]
	r.geq = slices.Grow(r.geq[:0], n*r.words)[:n*r.words]
	r.geqSize = slices.Grow(r.geqSize[:0], n)[:n]
	r.taken = slices.Grow(r.taken[:0], r.words)[:r.words]
}

// ReserveRanks preallocates the state Ranks keeps for n arms of d
// coordinates, so that Peel does not allocate for them; it does nothing
// when Peel would not keep relations for such points.
func (l *Layers) ReserveRanks(n, d int) {
	if n < 1 || n > rankMaxArms || d < 4 || d > rankMaxDims {
		return
	}
	if r := &l.ranks; r.n != n || r.d != d {
		r.reset(n, d)
	}
	l.flat = slices.Grow(l.flat[:0], n*d) // Peel's copy
	l.rows = slices.Grow(l.rows[:0], n)   // PeelFlat's rows
}

// prepareRanks brings the relations up to date for points. It reports
// false, doing nothing else, unless l.Ranks is set and there are 1 to
// rankMaxArms points of 4 to rankMaxDims coordinates each.
func (l *Layers) prepareRanks(points [][]float64) bool {
	n := len(points)
	if n == 0 || !l.rankable(n, len(points[0])) {
		return false
	}
	d := len(points[0])
	f := slices.Grow(l.flat[:0], d*n)[:d*n]
	for i, p := range points {
		if len(p) != d {
			return false
		}
		copy(f[d*i:d*i+d], p)
	}
	l.flat = f
	l.ranksFrom(points, f, d)
	return true
}

// rankable reports whether Peel keeps relations for n points of d
// coordinates.
func (l *Layers) rankable(n, d int) bool {
	return l.Ranks && n >= 1 && n <= rankMaxArms && d >= 4 && d <= rankMaxDims
}

// ranksFrom brings the relations up to date for points, whose coordinates
// coords holds one point after the other (point i at coords[d·i:d·i+d]),
// which the insertion sort reads: one index per coordinate.
func (l *Layers) ranksFrom(points [][]float64, coords []float64, d int) {
	n := len(points)
	l.size(n)
	clear(l.taken)
	r := &l.ranks
	if r.n != n || r.d != d {
		r.reset(n, d)
	}
	update := r.ready
	r.distinct = true
	for j := range d {
		ord, off, key := r.ord[j*n:j*n+n:j*n+n], r.off[j*n:j*n+n:j*n+n], r.key[j*n:j*n+n:j*n+n]
		if update && r.tied[j] {
			r.ties(key, ord, r.lose) // the counts as of the order alone
		}
		sorted, tied := r.repair(coords, off, ord, update)
		if !sorted {
			update = false
			for a, o := range off {
				key[a] = coords[o]
			}
			sortKeyed(key, ord)
			for a, i := range ord {
				off[a] = int32(d*int(i) + j)
			}
			tied = false
			for a := 1; a < n && !tied; a++ {
				tied = key[a] == key[a-1]
			}
		}
		r.distinct = r.distinct && !tied
		if r.tied[j] = tied; tied {
			for a, o := range off { // for the next call's ties
				key[a] = coords[o]
			}
			if update {
				r.ties(key, ord, r.gain) // and the equal pairs of now
			}
		}
	}
	if !update {
		r.recount(points)
	}
	r.ready = true
	clear(r.taken)
	r.none = true
}

// repair sorts the ranks of one coordinate ascending, permuting ord (the
// arms) and off (where their keys are in coords) alike, by insertion sort
// from the last call's order (most arms keep their place), and when update
// is set moves the counts of every pair it swaps: the arm moving down no
// longer comes after the other, which now comes after it. It reports
// whether it sorted (false, leaving the order unsorted and the counts
// partly moved, when too many arms moved for insertion sort to pay) and
// whether two keys are equal.
func (r *rankSets) repair(coords []float64, off, ord []int32, update bool) (sorted, tied bool) {
	if len(off) == 0 {
		return true, false
	}
	ord = ord[:len(off)]
	budget := 16 * len(off)
	top := coords[off[0]] // the largest key of the sorted prefix, its last
	for a := 1; ; a++ {
		// In place: most arms, most rounds.
		if a, top = ascending(coords, off, a, top); a == len(off) {
			break
		}
		o, i := off[a], ord[a]
		x := coords[o]
		if !(x < top) { // in place too: equal (or NaN, which keys are not)
			tied = tied || x == top
			top = x
			continue
		}
		b := a
		for b > 0 {
			ob := off[b-1]
			if !(x < coords[ob]) {
				break
			}
			y := ord[b-1]
			if update {
				r.lose(int(y), int(i)) // i comes after y no more
				r.gain(int(i), int(y)) // y comes after i
			}
			off[b], ord[b] = ob, y
			b--
		}
		off[b], ord[b] = o, i
		// The keys before x are ≤ x, the largest last: an earlier key
		// equal to x is the one before it. top is still the prefix's
		// largest.
		tied = tied || b > 0 && coords[off[b-1]] == x
		if budget -= a - b; budget < 0 {
			return false, tied
		}
	}
	return true, tied
}

// ascending is repair's common case as a tight loop: from position a on,
// it reads the keys of the ranks while each is above the one before (top,
// the largest key so far), and returns the position of the first that is
// not (len(off) if none) and the largest key before it.
func ascending(coords []float64, off []int32, a int, top float64) (int, float64) {
	for ; a < len(off); a++ {
		x := coords[off[a]]
		if !(x > top) {
			return a, top
		}
		top = x
	}
	return a, top
}

// ties calls move(b, a) for every pair of arms a before b in a group of
// equal keys of a sorted coordinate: the pairs where a ≥ b holds although
// a comes first.
func (r *rankSets) ties(key []float64, ord []int32, move func(i, a int)) {
	for g := 0; g < len(key); {
		e := g + 1
		for e < len(key) && key[e] == key[g] {
			e++
		}
		for x := g; x < e; x++ {
			for y := x + 1; y < e; y++ {
				move(int(ord[y]), int(ord[x]))
			}
		}
		g = e
	}
}

// gain counts one more coordinate in which arm a ≥ arm i.
func (r *rankSets) gain(i, a int) {
	c := &r.count[i*r.n+a]
	if *c++; int(*c) == r.d {
		r.geq[i*r.words+a>>6] |= 1 << (a & 63)
		r.geqSize[i]++
	}
}

// lose counts one coordinate fewer in which arm a ≥ arm i.
func (r *rankSets) lose(i, a int) {
	c := &r.count[i*r.n+a]
	if int(*c) == r.d {
		r.geq[i*r.words+a>>6] &^= 1 << (a & 63)
		r.geqSize[i]--
	}
	*c--
}

// recount forms every count and geq from the points.
func (r *rankSets) recount(points [][]float64) {
	n, d, w := r.n, r.d, r.words
	clear(r.geq)
	for i, p := range points {
		p = p[:d]
		row := r.count[i*n : i*n+n : i*n+n]
		set := r.geq[i*w : i*w+w : i*w+w]
		size := int32(0)
		for a, q := range points {
			q = q[:d]
			c := 0
			for j, x := range p {
				if q[j] >= x {
					c++
				}
			}
			if a == i {
				c = 0
			}
			row[a] = uint8(c)
			if c == d {
				set[a>>6] |= 1 << (a & 63)
				size++
			}
		}
		r.geqSize[i] = size
	}
}

// maximalRanks returns the non-dominated arms among those not taken, in
// ascending index order (so appendAscending needs no stamps).
func (l *Layers) maximalRanks(points [][]float64) []int {
	layer := l.layer[:0]
	r := &l.ranks
	w := r.words
	taken := r.taken[:w]
	if r.none && r.distinct { // the first layer of distinct keys: every arm of geq dominates
		for i, size := range r.geqSize[:r.n] {
			if size == 0 {
				layer = append(layer, i)
			}
		}
		l.layer = layer
		return layer
	}
	if r.none { // the first layer, the common case: an empty geq is in it
		for i, size := range r.geqSize[:r.n] {
			if size == 0 || !r.dominated(points, i) {
				layer = append(layer, i)
			}
		}
		l.layer = layer
		return layer
	}
	for i := range r.n {
		if taken[i>>6]&(1<<(i&63)) == 0 && !r.dominated(points, i) {
			layer = append(layer, i)
		}
	}
	l.layer = layer
	return layer
}

// dominated reports whether an arm of geq(i) not taken dominates arm i:
// one that is not an exact duplicate of it.
func (r *rankSets) dominated(points [][]float64, i int) bool {
	w := r.words
	for x, s := range r.geq[i*w : i*w+w] {
		if s &^= r.taken[x]; s != 0 && r.distinct {
			return true
		}
		for ; s != 0; s &= s - 1 {
			if Dominates(points[x*64+bits.TrailingZeros64(s)], points[i]) {
				return true
			}
		}
	}
	return false
}

// take marks arm i taken by a layer Peel returns whole.
func (r *rankSets) take(i int) {
	r.taken[i>>6] |= 1 << (i & 63)
	r.none = false
}

// sortKeyed sorts key ascending, permuting ord alongside. Keys must not be
// NaN; the order among equal keys is unspecified.
func sortKeyed(key []float64, ord []int32) {
	type pair struct {
		key float64
		arm int32
	}
	var buf [rankMaxArms]pair // n ≤ rankMaxArms here: no allocation
	ps := buf[:len(key)]
	for a := range ps {
		ps[a] = pair{key[a], ord[a]}
	}
	slices.SortFunc(ps, func(p, q pair) int { return cmp.Compare(p.key, q.key) })
	for a, p := range ps {
		key[a], ord[a] = p.key, p.arm
	}
}
