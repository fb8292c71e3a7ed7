package algos

import (
	"cmp"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
)

// Dominates reports whether a Pareto-dominates b under maximisation:
// a ≥ b in every coordinate and a ≠ b. The vectors must have equal length.
func Dominates(a, b []float64) bool {
	b = b[:len(a)]
	strict := false
	for j, x := range a {
		if x < b[j] {
			return false
		}
		if x > b[j] {
			strict = true
		}
	}
	return strict
}

// Layers peels Pareto layers (non-dominated sorting under maximisation) of a
// set of vectors, only as far as a slate of k arms needs: layer 1 is the set
// of vectors no other vector dominates, layer 2 the same among the rest, and
// so on. Exact duplicates dominate neither each other and share a layer.
// Coordinates must not be NaN.
//
// Arms are visited by decreasing coordinate sum (ties by index): a
// dominator's exact sum is larger than its victim's, and rounding keeps
// that order up to ties, which are checked both ways; so a visited arm can
// only be dominated by arms visited before it. Each layer is then one pass
// keeping an archive of the layer's members found so far; no full O(n²)
// non-dominated sort is done when only the first layer or two are needed.
// What keeps the pass cheap when it runs every round on vectors that change
// little:
//   - the visiting order of the previous call is repaired by insertion sort,
//     close to linear time when few sums moved past each other;
//   - each arm remembers the arm that last dominated it, tried first, so a
//     dominated arm usually costs one test;
//   - once the archive is large, a 64-bit signature per vector packs its
//     coordinates quantised monotonically (up to d = 8), and one subtraction
//     tests, for all coordinates at once, the necessary condition that every
//     level of m is ≥ that of i (SWAR); only pairs that pass get the exact
//     test, and the archive's signatures are scanned as a contiguous array;
//   - TopBySum, which serves the Σ tie-breaks, visits arms lazily from a
//     binary heap and stops as soon as the answer is known.
//
// Hints, signatures and the kept order only order and filter work: results
// never depend on them. The zero value is ready to use; Reserve
// preallocates. A Layers is not safe for concurrent use, and the slices it
// returns are overwritten by its next call.
type Layers struct {
	taken []bool // in a layer already returned whole by the current call
	hint  []int  // hint[i]: an arm that dominated i when last seen, or −1
	sum   []float64
	order []int // arms by (sum desc, index asc), kept between Peel calls

	sig     []uint64   // quantised coordinates, one field per coordinate
	lo, hi  [8]float64 // coordinate ranges of the current points
	high    uint64     // the guard bit of every field; 0: filter off
	sigDone bool       // signatures computed for the current call

	layer    []int    // the layer being built, in visiting order
	layerSig []uint64 // layerSig[a] = sig[layer[a]] once sigDone
	stamp    []uint32 // stamp[i] == pass: i is in the layer being built
	pass     uint32
	asc      []int // the overflowing layer, ascending
	full     []int
	starts   []int // starts[r]: offset in full of full layer r

	heap []int // TopBySum: arms not yet visited, a max-heap on (sum, −index)
	seq  []int // TopBySum: arms visited so far, in visiting order
	// seqBuf backs seq when it is not order.
	seqBuf []int
	// Kept: TopBySum visits the arms in the order kept from its last call
	// (repaired by insertion sort) instead of a heap built anew; cheaper
	// when the sums move little between calls (UCB vectors).
	Kept bool
	// Ranks: Peel keeps, for d ≥ 4, the dominance relations between calls
	// and moves only the pairs that changed places (ranks.go); much
	// cheaper than the archive pass when the points move little between
	// calls and the first layer is large (UCB vectors), dearer when they
	// are drawn anew (samples). The same layers either way.
	Ranks bool

	// The sweep of Peel for d = 2, 3 (sweep.go).
	flat   []float64    // Peel's copy of the points' coordinates, d per arm
	coords []float64    // the coordinates the sweep reads: flat, or PeelFlat's
	lex    []int        // arms lexicographically descending, kept between calls
	stair  []stairPoint // d = 3: the staircase of the (y, z) seen so far

	ranks rankSets // the rank sets of Peel for d ≥ 4 (ranks.go)

	sums SumOrder // TopBySum's order of the overflowing layer's members
}

// sigThreshold is the archive size from which signatures pay for their
// O(n·d) cost.
const sigThreshold = 16

// Reserve preallocates scratch space for n arms, so that later calls with
// at most n arms do not allocate.
func (l *Layers) Reserve(n int) {
	if cap(l.taken) >= n {
		return
	}
	l.taken = make([]bool, 0, n)
	l.hint = make([]int, 0, n)
	l.sum = make([]float64, 0, n)
	l.order = make([]int, 0, n)
	l.sig = make([]uint64, 0, n)
	l.layer = make([]int, 0, n)
	l.layerSig = make([]uint64, n)
	l.stamp = make([]uint32, 0, n)
	l.asc = make([]int, 0, n)
	l.full = make([]int, 0, n)
	l.starts = make([]int, 0, n)
	l.heap = make([]int, 0, n)
	l.seqBuf = make([]int, 0, n)
	l.flat = make([]float64, 0, 3*n)
	l.lex = make([]int, 0, n)
	l.stair = make([]stairPoint, 0, n)
}

// prepare sizes the scratch space for points, resets the per-call state
// and computes the sums.
func (l *Layers) prepare(points [][]float64) {
	n := len(points)
	l.size(n)
	clear(l.taken)
	l.sigDone = false
	l.high = 0
	// Sums and, for the signatures, the range of every coordinate, in one
	// pass.
	d := 0
	if n > 0 {
		d = len(points[0])
	}
	if n == 0 || d > 8 {
		CoordSums(points, l.sum)
		return
	}
	copy(l.lo[:], points[0])
	l.hi = l.lo
	for i, p := range points {
		p = p[:d]
		s := 0.0
		for j, x := range p {
			s += x
			if x < l.lo[j] {
				l.lo[j] = x
			}
			if x > l.hi[j] {
				l.hi[j] = x
			}
		}
		l.sum[i] = s
	}
}

// size sizes the per-arm scratch space for n arms, resetting the kept
// state (hints, orders) when n changed.
func (l *Layers) size(n int) {
	if len(l.hint) != n {
		l.Reserve(n)
		l.taken = l.taken[:n]
		l.sum = l.sum[:n]
		l.sig = l.sig[:n]
		l.stamp = l.stamp[:n]
		l.hint = l.hint[:n]
		l.order = l.order[:n]
		l.lex = l.lex[:n]
		for i := range n {
			l.hint[i] = -1
			l.order[i] = i
			l.lex[i] = i
		}
	}
}

// above is the visiting order: larger sum first, then lower index.
func (l *Layers) above(x, y int) bool {
	sx, sy := l.sum[x], l.sum[y]
	return sx > sy || sx == sy && x < y
}

// sortOrder repairs the previous visiting order by insertion sort, and
// falls back to a full sort when too many arms moved.
func (l *Layers) sortOrder() {
	order := l.order
	budget := 16 * len(order)
	for a := 1; a < len(order); a++ {
		x := order[a]
		b := a
		for b > 0 && l.above(x, order[b-1]) {
			order[b] = order[b-1]
			b--
		}
		order[b] = x
		if budget -= a - b; budget < 0 {
			sum := l.sum
			slices.SortFunc(order, func(x, y int) int {
				if c := cmp.Compare(sum[y], sum[x]); c != 0 {
					return c
				}
				return x - y
			})
			return
		}
	}
}

// signatures quantises coordinate j of every point to a level in
// [0, 2^(w−1)) over the range of the points (from prepare), monotonically
// (x ≤ y ⇒ level(x) ≤ level(y)), and packs a point's levels into fields of
// w = 64/d bits whose top bit is a guard. It leaves the filter off
// (high = 0) when d > 8 or a coordinate is not finite.
func (l *Layers) signatures(points [][]float64) {
	l.sigDone = true
	l.high = 0
	if len(points) == 0 {
		return
	}
	d := len(points[0])
	if d == 0 || d > 8 {
		return
	}
	var scale [8]float64
	lo, hi := &l.lo, &l.hi // computed by prepare
	w := min(32, 64/d)
	top := float64(uint64(1)<<(w-1) - 1)
	var high uint64
	for j := range d {
		span := hi[j] - lo[j]
		if span != span || span > math.MaxFloat64 { // NaN or infinite
			return
		}
		if span > 0 { // else one level for the whole coordinate
			scale[j] = top / span
			if scale[j] > math.MaxFloat64 {
				return
			}
		}
		high |= uint64(1) << (w*j + w - 1)
	}
	for i, p := range points {
		p = p[:d]
		var sg uint64
		shift := uint(0)
		for j, x := range p {
			q := (x - lo[j]) * scale[j]            // in [0, top] up to rounding: x ≥ lo
			q = min(q, top)                        // q is not NaN: lo, scale are finite
			sg |= uint64(int64(q)) << (shift & 63) // w·j < 64
			shift += uint(w)
		}
		l.sig[i] = sg
	}
	l.high = high
}

// dominates is the exact test behind the signature filter: every field of
// sig[m]|high minus the field of sig[i] keeps its guard bit exactly when
// the level of m is ≥ that of i.
func (l *Layers) dominates(points [][]float64, m, i int) bool {
	if h := l.high; h != 0 && ((l.sig[m]|h)-l.sig[i])&h != h {
		return false
	}
	return Dominates(points[m], points[i])
}

// hinted reports whether the arm that last dominated i still does; any arm
// outside the earlier layers that dominates i keeps i out of this one.
func (l *Layers) hinted(points [][]float64, i int) bool {
	h := l.hint[i]
	return h >= 0 && h < len(points) && h != i && !l.taken[h] && l.dominates(points, h, i)
}

// nextPass starts the stamps of a new layer.
func (l *Layers) nextPass() {
	l.pass++
	if l.pass == 0 { // wrapped: old stamps could collide
		clear(l.stamp)
		l.pass = 1
	}
}

// maximal returns the non-dominated arms among those not taken, visiting
// them in l.order, and stamps them with the current pass.
func (l *Layers) maximal(points [][]float64) []int {
	layer := l.layer[:0]
	l.nextPass()
	sum := l.sum
	for _, i := range l.order {
		if l.taken[i] || l.hinted(points, i) {
			continue
		}
		if !l.sigDone && len(layer) >= sigThreshold {
			l.signatures(points)
			for a, m := range layer {
				l.layerSig[a] = l.sig[m]
			}
		}
		p := points[i]
		dominated := false
		if h := l.high; h != 0 {
			si := l.sig[i]
			for a, sm := range l.layerSig[:len(layer)] {
				if ((sm|h)-si)&h == h && Dominates(points[layer[a]], p) {
					l.hint[i] = layer[a]
					dominated = true
					break
				}
			}
		} else {
			for _, m := range layer {
				if Dominates(points[m], p) {
					l.hint[i] = m
					dominated = true
					break
				}
			}
		}
		if dominated {
			continue
		}
		// Members with the same rounded sum may be dominated by i.
		for a := len(layer) - 1; a >= 0 && sum[layer[a]] == sum[i]; a-- {
			if m := layer[a]; l.dominates(points, i, m) {
				l.hint[m] = i
				l.stamp[m] = 0
				layer = slices.Delete(layer, a, a+1)
				copy(l.layerSig[a:], l.layerSig[a+1:len(layer)+1])
			}
		}
		if l.sigDone {
			l.layerSig[len(layer)] = l.sig[i]
		}
		layer = append(layer, i)
		l.stamp[i] = l.pass
	}
	l.layer = layer
	return layer
}

// appendAscending appends the members of the layer just built to dst in
// ascending index order: by sorting when the layer is small, else by a scan
// of the stamps.
func (l *Layers) appendAscending(dst []int) []int {
	if m := len(l.layer); m*m < 4*len(l.stamp) {
		start := len(dst)
		dst = append(dst, l.layer...)
		slices.Sort(dst[start:])
		return dst
	}
	for i, s := range l.stamp {
		if s == l.pass {
			dst = append(dst, i)
		}
	}
	return dst
}

// Peel peels the Pareto layers of points until at least k arms are
// collected. It returns full, the arms of the whole layers that fit in k
// (layer after layer, each in ascending arm index), and overflow, the
// members of the first layer that does not fit whole (ascending arm index;
// nil when whole layers give exactly k arms or when there are at most k
// arms, all then in full). The caller completes its slate with
// k − len(full) arms of overflow by its own tie-break rule; it may reorder
// overflow in place. For d = 2 and 3 each layer is found by a sweep
// (sweep.go), and for d ≥ 4 with Ranks set by relations kept between calls
// (ranks.go), instead of the archive pass described above: the same sets.
func (l *Layers) Peel(points [][]float64, k int) (full, overflow []int) {
	if l.prepareSweep(points) {
		return l.peel(nil, bySweep, len(points[0]), k)
	}
	if l.prepareRanks(points) {
		return l.peel(points, byRanks, 0, k)
	}
	l.prepare(points)
	l.sortOrder()
	return l.peel(points, byArchive, 0, k)
}

// PeelFlat is Peel for the n = len(coords)/d points of d = 2 or 3
// coordinates stored one after the other in coords (point i at
// coords[d·i:d·i+d]), read in place; the same layers as Peel on those
// points, without Peel's copy.
func (l *Layers) PeelFlat(coords []float64, d, k int) (full, overflow []int) {
	if d != 2 && d != 3 || len(coords)%d != 0 {
		panic("algos: PeelFlat needs d = 2 or 3 and whole points")
	}
	if len(coords) == 0 {
		return l.Peel(nil, k)
	}
	l.sweepFrom(coords, d)
	return l.peel(nil, bySweep, d, k)
}

// peelBy names the ways peel finds a layer.
type peelBy int

const (
	byArchive peelBy = iota // maximal on points, after prepare and sortOrder
	bySweep                 // maximalSweep(d), after prepareSweep or sweepFrom (sweep.go)
	byRanks                 // maximalRanks on points, after prepareRanks (ranks.go)
)

// peel collects the layers once the pass named by by is prepared.
func (l *Layers) peel(points [][]float64, by peelBy, d, k int) (full, overflow []int) {
	n := len(l.taken)
	l.full = l.full[:0]
	l.starts = l.starts[:0]
	for len(l.full) < k && len(l.full) < n {
		var layer []int
		switch by {
		case bySweep:
			layer = l.maximalSweep(d)
		case byRanks:
			layer = l.maximalRanks(points)
		default:
			layer = l.maximal(points)
		}
		if len(layer) == 0 {
			break // impossible: a finite set has maximal elements
		}
		if len(l.full)+len(layer) > k {
			l.asc = l.appendAscending(l.asc[:0])
			return l.full, l.asc
		}
		l.starts = append(l.starts, len(l.full))
		for _, i := range layer {
			l.taken[i] = true
			if by == byRanks {
				l.ranks.take(i)
			}
		}
		l.full = l.appendAscending(l.full)
	}
	return l.full, nil
}

// FullLayers returns the number of whole layers the last Peel returned.
func (l *Layers) FullLayers() int { return len(l.starts) }

// FullLayer returns whole layer r (0-based) of the last Peel, a subslice of
// its full result.
func (l *Layers) FullLayer(r int) []int {
	end := len(l.full)
	if r+1 < len(l.starts) {
		end = l.starts[r+1]
	}
	return l.full[l.starts[r]:end]
}

// FrontSize returns the number of points that no other point dominates
// (exact duplicates each count), the size of the first layer.
func (l *Layers) FrontSize(points [][]float64) int {
	l.prepare(points)
	l.sortOrder()
	return len(l.maximal(points))
}

// TopBySum fills slate with what Peel followed by PickLargest on the
// coordinate sums (CoordSums) of the overflowing layer chooses: the whole
// layers that fit, then the members of the overflowing layer of largest
// Σ_j points[i][j], the lowest index first on ties. It gets there without
// peeling whole layers: arms are visited by decreasing sum (ties by index),
// and a dominator's exact sum is larger than its victim's (rounding keeps
// the order up to ties, which are checked both ways), so a visited arm that
// no earlier one dominates is in the layer, and once enough members are
// found no arm of smaller sum can displace them. The slate is in visiting
// order: layer by layer, by decreasing sum. len(slate) must not exceed
// len(points). After it, FullLayers and FullLayer are not meaningful.
func (l *Layers) TopBySum(points [][]float64, slate []int) {
	l.prepare(points)
	l.sums = SumOrder{Points: points, Sums: l.sum}
	l.topBySum(points, slate)
}

// TopBySumOf is TopBySum with the coordinate sums given: sums[i] must be
// CoordSums' value for points[i], bit for bit (the same additions in the
// same order, from +0), which the caller has formed already; abs[i], if
// not nil, Σ_j |points[i][j]| (the scale of the sums' rounding errors).
func (l *Layers) TopBySumOf(points [][]float64, sums, abs []float64, slate []int) {
	l.size(len(points))
	clear(l.taken)
	l.sigDone = false
	l.high = 0 // no signatures: dominates is the exact test
	copy(l.sum, sums[:len(points)])
	l.sums = SumOrder{Points: points, Sums: l.sum, Abs: abs}
	l.topBySum(points, slate)
}

// topBySum is TopBySum once the sums are in l.sum.
func (l *Layers) topBySum(points [][]float64, slate []int) {
	n := len(points)
	if l.Kept {
		// The visiting order kept from the last call, repaired: it is
		// the order the heap pops, (sum desc, index asc), a strict order.
		l.sortOrder()
		l.heap = l.heap[:0]
		l.seq = l.order
	} else {
		l.heap = l.heap[:n]
		for i := range l.heap {
			l.heap[i] = i
		}
		for a := n/2 - 1; a >= 0; a-- {
			l.siftDown(a)
		}
		l.seq = l.seqBuf[:0]
	}
	got := 0
	for got < len(slate) {
		layer := l.maximalBySum(points, len(slate)-got)
		if len(layer) == 0 {
			return // only when len(slate) > len(points)
		}
		if got+len(layer) >= len(slate) {
			// The layer is in visiting order, by computed sum; the
			// members taken are those of largest exact sum.
			l.sums.sort(layer)
			copy(slate[got:], layer)
			return
		}
		for _, i := range layer {
			l.taken[i] = true
		}
		got += copy(slate[got:], layer)
	}
}

// maximalBySum returns, in visiting order, the non-dominated arms among
// those not taken, stopping once it holds at least enough members and the
// next arm's sum is strictly below the enough-th member's: the first enough
// members are then final.
func (l *Layers) maximalBySum(points [][]float64, enough int) []int {
	layer := l.layer[:0]
	sum := l.sum
	for v := 0; ; v++ {
		if v == len(l.seq) {
			if len(l.heap) == 0 {
				break
			}
			l.seq = append(l.seq, l.pop())
		}
		i := l.seq[v]
		if l.taken[i] {
			continue
		}
		if len(layer) >= enough && sum[i] < sum[layer[enough-1]] && !l.sums.near(i, layer[enough-1]) {
			break // below the enough-th member in exact arithmetic too
		}
		if l.hinted(points, i) {
			continue
		}
		p := points[i]
		dominated := false
		for _, m := range layer {
			if Dominates(points[m], p) {
				l.hint[i] = m
				dominated = true
				break
			}
		}
		if dominated {
			continue
		}
		// Members with the same rounded sum may be dominated by i.
		for a := len(layer) - 1; a >= 0 && sum[layer[a]] == sum[i]; a-- {
			if m := layer[a]; Dominates(p, points[m]) {
				l.hint[m] = i
				layer = slices.Delete(layer, a, a+1)
			}
		}
		layer = append(layer, i)
	}
	l.layer = layer
	return layer
}

func (l *Layers) siftDown(a int) {
	h := l.heap
	x := h[a]
	for {
		c := 2*a + 1
		if c >= len(h) {
			break
		}
		if c+1 < len(h) && l.above(h[c+1], h[c]) {
			c++
		}
		if !l.above(h[c], x) {
			break
		}
		h[a] = h[c]
		a = c
	}
	h[a] = x
}

func (l *Layers) pop() int {
	top := l.heap[0]
	last := len(l.heap) - 1
	l.heap[0] = l.heap[last]
	l.heap = l.heap[:last]
	if last > 0 {
		l.siftDown(0)
	}
	return top
}

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
		v = min(q.top, max(0, v))
		sg |= uint64(int64(v)) << (q.w * j)
	}
	return sg
}

// mayDominate reports whether the signatures allow m to dominate i.
func (q *quantiser) mayDominate(m, i int) bool {
	h := q.high
	return h == 0 || ((q.sig[m]|h)-q.sig[i])&h == h
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

// dominates is the filtered exact test.
func (f *FrontTracker) dominates(points [][]float64, m, i int) bool {
	return f.q.mayDominate(m, i) && Dominates(points[m], points[i])
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
		sc, pc := f.q.sig[c], points[c]
		for a := 0; a < len(f.list); {
			m, sm := f.list[a], f.lsig[a]
			if (h == 0 || ((sc|h)-sm)&h == h) && Dominates(pc, points[m]) {
				f.nd[m], f.wit[m] = false, c
				f.redep(c, m)
				f.remove(a) // the last member moves to a
				continue
			}
			if (h == 0 || ((sm|h)-sc)&h == h) && Dominates(points[m], pc) {
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

// Crowding computes NSGA-II crowding distances with reusable scratch space.
// When it is called repeatedly on similar points (a bandit's UCB vectors),
// it keeps, per objective, the order of all points between calls, repairs
// it by insertion sort (close to linear time when little moved) and reads
// the members off it; for a set much smaller than the points it sorts the
// members instead. The zero value is ready to use; it is not safe for
// concurrent use.
type Crowding struct {
	items  []crowdItem
	orders [][]int // orders[j]: all points by (coordinate j, index), kept
	pos    []int   // pos[i]: position of point i in members, or −1
}

type crowdItem struct {
	v   float64 // the member's value on the current objective
	arm int     // its arm index, the tie-break
	pos int     // its position in members
}

// Reserve preallocates scratch space for sets of up to n members of n
// points with d objectives.
func (c *Crowding) Reserve(n, d int) {
	c.items = slices.Grow(c.items[:0], n)
	c.pos = slices.Grow(c.pos[:0], n)
	c.prepareOrders(n, d)
}

// Distance writes into out[a] the crowding distance of members[a] within
// the set members (distinct indices into points), as in NSGA-II (Deb et al.
// 2002): for each objective the members are sorted by value (ties by arm
// index), the first and last get +Inf, and each interior member adds
// (next − prev)/(max − min), its normalised inter-neighbour gap; an
// objective on which all members are equal adds nothing to interior members
// (its boundary members still get +Inf, as in Deb's algorithm). out must
// have len(members) entries. Values must not be NaN.
func (c *Crowding) Distance(points [][]float64, members []int, out []float64) {
	m := len(members)
	out = out[:m]
	clear(out)
	if m == 0 {
		return
	}
	d := len(points[members[0]])
	items := slices.Grow(c.items[:0], m)[:m]
	c.items = items
	n := len(points)
	// Reading n entries beats sorting m members when m is a good part of
	// n; the kept orders need every point to have d coordinates (points
	// outside members may be anything otherwise).
	useOrders := 4*m >= n
	for _, p := range points {
		if !useOrders {
			break
		}
		useOrders = len(p) == d
	}
	if useOrders {
		c.prepareOrders(n, d)
		c.pos = slices.Grow(c.pos[:0], n)[:n]
		for i := range c.pos {
			c.pos[i] = -1
		}
		for a, i := range members {
			c.pos[i] = a
		}
	}
	for j := range d {
		if useOrders {
			order := c.orders[j]
			repairOrder(points, order, j)
			k := 0
			for _, i := range order {
				if a := c.pos[i]; a >= 0 {
					items[k] = crowdItem{v: points[i][j], arm: i, pos: a}
					k++
				}
			}
		} else {
			for a, i := range members {
				items[a] = crowdItem{v: points[i][j], arm: i, pos: a}
			}
			sortCrowd(items)
		}
		out[items[0].pos] = math.Inf(1)
		out[items[m-1].pos] = math.Inf(1)
		span := items[m-1].v - items[0].v
		if !(span > 0) {
			continue
		}
		for a := 1; a < m-1; a++ {
			out[items[a].pos] += (items[a+1].v - items[a-1].v) / span
		}
	}
}

// Boundary appends to dst, and returns, the positions in members of the
// members Distance gives +Inf: for each objective, the first and the last
// by (value, index), each once, in the order found. It reports false, with
// dst unchanged, when it cannot tell without Distance: when the members'
// values on some objective are not all finite or span more than a float64
// holds (an interior member's distance could then overflow), or when there
// are more than 8 objectives. Otherwise every other member's distance is
// finite (a sum of d ratios ≤ 1).
func (c *Crowding) Boundary(points [][]float64, members []int, dst []int) ([]int, bool) {
	if len(members) == 0 {
		return dst, true
	}
	d := len(points[members[0]])
	if d > 8 {
		return dst, false
	}
	// Per objective, the first and the last so far: positions and values.
	var lo, hi [8]int
	var vlo, vhi [8]float64
	copy(vlo[:d], points[members[0]])
	copy(vhi[:d], points[members[0]])
	for a, i := range members {
		p := points[i][:d]
		for j, v := range p {
			if v < vlo[j] || v == vlo[j] && i < members[lo[j]] {
				lo[j], vlo[j] = a, v
			}
			if v > vhi[j] || v == vhi[j] && i > members[hi[j]] {
				hi[j], vhi[j] = a, v
			}
		}
	}
	out := dst
	for j := range d {
		if span := vhi[j] - vlo[j]; !(span <= math.MaxFloat64) { // NaN, ±Inf or overflow
			return dst, false
		}
		if !slices.Contains(out[len(dst):], lo[j]) {
			out = append(out, lo[j])
		}
		if !slices.Contains(out[len(dst):], hi[j]) {
			out = append(out, hi[j])
		}
	}
	return out, true
}

// prepareOrders sizes the kept orders for n points of d objectives,
// starting from the identity when the shape changed.
func (c *Crowding) prepareOrders(n, d int) {
	if len(c.orders) == d && (d == 0 || len(c.orders[0]) == n) {
		return
	}
	c.orders = make([][]int, d)
	for j := range c.orders {
		c.orders[j] = make([]int, n)
		for i := range c.orders[j] {
			c.orders[j][i] = i
		}
	}
}

// repairOrder sorts order (a permutation of the points) by (coordinate j,
// index) ascending: insertion sort from the previous order, or a full sort
// when too much moved.
func repairOrder(points [][]float64, order []int, j int) {
	if len(order) == 0 {
		return
	}
	budget := 16 * len(order)
	last, top := order[0], points[order[0]][j] // the sorted prefix's last arm and its value
	for a := 1; a < len(order); a++ {
		x := order[a]
		vx := points[x][j]                     // the inserted arm's value, read once
		if vx > top || vx == top && x > last { // in place: most arms, most rounds
			last, top = x, vx
			continue
		}
		b := a
		for b > 0 {
			y := order[b-1]
			if vy := points[y][j]; !(vx < vy || vx == vy && x < y) {
				break
			}
			order[b] = y
			b--
		}
		order[b] = x
		if b == a { // stayed (only a NaN gets here): x is the last now
			last, top = x, vx
		}
		if budget -= a - b; budget < 0 {
			slices.SortFunc(order, func(x, y int) int {
				if c := cmp.Compare(points[x][j], points[y][j]); c != 0 {
					return c
				}
				return x - y
			})
			return
		}
	}
}

// lessCrowd orders by value, then arm index: a strict total order, since
// arms are distinct.
func lessCrowd(x, y *crowdItem) bool {
	return x.v < y.v || x.v == y.v && x.arm < y.arm
}

// sortCrowd sorts items by lessCrowd: quicksort with a median-of-three
// pivot, insertion sort for short ranges and heapsort past a depth limit.
// Specialised because a generic sort calls its comparison indirectly, which
// dominated the cost of crowding distances.
func sortCrowd(items []crowdItem) {
	depth := 2 * bits.Len(uint(len(items)))
	for len(items) > 12 {
		if depth == 0 {
			heapSortCrowd(items)
			return
		}
		depth--
		m := len(items) / 2
		last := len(items) - 1
		// Median of three to items[0].
		if lessCrowd(&items[m], &items[0]) {
			items[m], items[0] = items[0], items[m]
		}
		if lessCrowd(&items[last], &items[m]) {
			items[last], items[m] = items[m], items[last]
			if lessCrowd(&items[m], &items[0]) {
				items[m], items[0] = items[0], items[m]
			}
		}
		items[0], items[m] = items[m], items[0]
		pivot := items[0]
		a, b := 1, last
		for {
			for a <= b && lessCrowd(&items[a], &pivot) {
				a++
			}
			for a <= b && lessCrowd(&pivot, &items[b]) {
				b--
			}
			if a >= b {
				break
			}
			items[a], items[b] = items[b], items[a]
			a++
			b--
		}
		items[0], items[b] = items[b], items[0]
		// Recurse into the shorter side, loop on the longer.
		if b < len(items)-1-b {
			sortCrowd(items[:b])
			items = items[b+1:]
		} else {
			sortCrowd(items[b+1:])
			items = items[:b]
		}
	}
	for a := 1; a < len(items); a++ {
		x := items[a]
		b := a
		for b > 0 && lessCrowd(&x, &items[b-1]) {
			items[b] = items[b-1]
			b--
		}
		items[b] = x
	}
}

func heapSortCrowd(items []crowdItem) {
	sift := func(a, n int) {
		for {
			c := 2*a + 1
			if c >= n {
				return
			}
			if c+1 < n && lessCrowd(&items[c], &items[c+1]) {
				c++
			}
			if !lessCrowd(&items[a], &items[c]) {
				return
			}
			items[a], items[c] = items[c], items[a]
			a = c
		}
	}
	for a := len(items)/2 - 1; a >= 0; a-- {
		sift(a, len(items))
	}
	for n := len(items) - 1; n > 0; n-- {
		items[0], items[n] = items[n], items[0]
		sift(0, n)
	}
}

// CrowdingDistance writes into out (len(members)) the NSGA-II crowding
// distance of each member within the set members of points; see
// Crowding.Distance, which does the same without allocating.
func CrowdingDistance(points [][]float64, members []int, out []float64) {
	var c Crowding
	c.Distance(points, members, out)
}

// PickUniform fills out with a uniformly random subset of cand of size
// len(out), by a partial Fisher–Yates shuffle of cand (which it reorders).
// It draws len(out) integers from rng.
func PickUniform(cand, out []int, rng *rand.Rand) {
	for a := range out {
		r := a + rng.IntN(len(cand)-a)
		cand[a], cand[r] = cand[r], cand[a]
		out[a] = cand[a]
	}
}

// PickLargest fills out with the len(out) members of cand of largest
// score[i] (score is indexed by arm), in decreasing order, the lowest arm
// index first among equal scores. It reorders cand.
func PickLargest(score []float64, cand, out []int) {
	for a := range out {
		best := a
		for c := a + 1; c < len(cand); c++ {
			i, b := cand[c], cand[best]
			if score[i] > score[b] || score[i] == score[b] && i < b {
				best = c
			}
		}
		cand[a], cand[best] = cand[best], cand[a]
		out[a] = cand[a]
	}
}

// PickLargestSum is PickLargest on the coordinate sums of o's points, in
// exact arithmetic (SumOrder): the len(out) members of cand of largest
// Σ_j points[i][j], in decreasing order, the lowest index first among
// exactly equal sums. It reorders cand.
func PickLargestSum(o *SumOrder, cand, out []int) {
	for a := range out {
		best := a
		for c := a + 1; c < len(cand); c++ {
			if o.Before(cand[c], cand[best]) {
				best = c
			}
		}
		cand[a], cand[best] = cand[best], cand[a]
		out[a] = cand[a]
	}
}

// SumOrder orders arms by the coordinate sums of their vectors in exact
// arithmetic, larger first, the lower index first on exact ties: the sums
// formed in coordinate order (CoordSums) decide unless they lie within
// their rounding errors of each other; then the exact sums do
// (CompareSums).
type SumOrder struct {
	Points [][]float64
	Sums   []float64 // Σ_j points[i][j] as CoordSums forms it
	Abs    []float64 // Σ_j |points[i][j]|, the scale of each sum's error; nil: computed when needed
}

// Before reports whether arm i comes before arm j. Sums that are not
// finite (a vector holding ±Inf) are taken as computed.
func (o *SumOrder) Before(i, j int) bool {
	if o.Abs != nil { // far apart, the common case, decided inline: 2⁻⁴⁰ is above every error bound near uses
		diff, m := o.Sums[i]-o.Sums[j], 0x1p-40*(o.Abs[i]+o.Abs[j])
		if diff > m {
			return true
		} else if diff < -m {
			return false
		}
	}
	return o.before(i, j)
}

func (o *SumOrder) before(i, j int) bool {
	si, sj := o.Sums[i], o.Sums[j]
	if math.Abs(si) <= math.MaxFloat64 && math.Abs(sj) <= math.MaxFloat64 && o.near(i, j) {
		c := CompareSums(o.Points[i], o.Points[j])
		return c > 0 || c == 0 && i < j
	}
	return si > sj || si == sj && i < j
}

// near reports whether the computed sums of arms i and j may be equal or
// in either order exactly: each is within ErrorBound(d, 1)·Σ_j |v_j| of
// its exact value (d − 1 roundings, the first addition to +0 being exact).
func (o *SumOrder) near(i, j int) bool {
	rel := ErrorBound(len(o.Points[i]), 1)
	return Near(o.Sums[i], o.Sums[j], float64(rel*o.abs(i)), float64(rel*o.abs(j)))
}

func (o *SumOrder) abs(i int) float64 {
	if o.Abs != nil {
		return o.Abs[i]
	}
	s := 0.0
	for _, x := range o.Points[i] {
		s += math.Abs(x)
	}
	return s
}

// sort sorts arms (in order of computed sum, larger first, lower index on
// equal sums) by Before: an insertion sort, which moves only members whose
// computed sums are near ties.
func (o *SumOrder) sort(arms []int) {
	for a := 1; a < len(arms); a++ {
		x := arms[a]
		b := a
		for ; b > 0 && o.Before(x, arms[b-1]); b-- {
			arms[b] = arms[b-1]
		}
		arms[b] = x
	}
}

// CoordSums writes the coordinate sum Σ_j v_ij of every vector into out
// (len(vectors)), summing in coordinate order.
func CoordSums(vectors [][]float64, out []float64) {
	for i, v := range vectors {
		s := 0.0
		for _, x := range v {
			s += x
		}
		out[i] = s
	}
}
