package algos

import (
	"cmp"
	"math"
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
	// sigLast: the last archive pass of Peel computed signatures; the next
	// computes them before its first test, so that every test is filtered
	// (the layers change little in size from one call to the next).
	sigLast bool

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
	rows   [][]float64  // PeelFlat's points as rows, for d ≥ 4
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
	l.rows = make([][]float64, 0, n)
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
// falls back to a full sort when too many arms moved. The sorted prefix's
// last arm is kept at hand: most arms stay after it, one comparison.
func (l *Layers) sortOrder() {
	order, sum := l.order, l.sum
	if len(order) == 0 {
		return
	}
	budget := 16 * len(order)
	last := order[0] // the last arm of the sorted prefix, and its sum
	sl := sum[last]
	for a := 1; a < len(order); a++ {
		x := order[a]
		sx := sum[x]
		if !(sx > sl || sx == sl && x < last) { // in place: most arms, most calls
			last, sl = x, sx
			continue
		}
		b := a
		for ; b > 0; b-- {
			y := order[b-1]
			if sy := sum[y]; !(sx > sy || sx == sy && x < y) { // !above(x, y)
				break
			}
			order[b] = y
		}
		order[b] = x
		if budget -= a - b; budget < 0 {
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
// ascending index order: as they are when the pass found them in that
// order (by), by sorting when the layer is small, else by a scan of the
// stamps.
func (l *Layers) appendAscending(dst []int, by peelBy) []int {
	if by == byRanks { // maximalRanks visits the arms by index
		return append(dst, l.layer...)
	}
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
	if l.sigLast { // the last pass needed them: this one takes them at once
		l.signatures(points)
	}
	full, overflow = l.peel(points, byArchive, 0, k)
	l.sigLast = l.sigDone
	return full, overflow
}

// PeelFlat is Peel for the n = len(coords)/d points of d ≥ 1 coordinates
// stored one after the other in coords (point i at coords[d·i:d·i+d]); the
// same layers as Peel on those points. The sweep (d = 2, 3) and the rank
// pass read them in place, without Peel's copy.
func (l *Layers) PeelFlat(coords []float64, d, k int) (full, overflow []int) {
	if d < 1 || len(coords)%d != 0 {
		panic("algos: PeelFlat needs d ≥ 1 and whole points")
	}
	if len(coords) == 0 {
		return l.Peel(nil, k)
	}
	if d == 2 || d == 3 {
		l.sweepFrom(coords, d)
		return l.peel(nil, bySweep, d, k)
	}
	rows := l.rowsOf(coords, d)
	if l.rankable(len(rows), d) {
		l.ranksFrom(rows, coords, d)
		return l.peel(rows, byRanks, 0, k)
	}
	return l.Peel(rows, k)
}

// rowsOf returns the points of coords (d coordinates each) as rows,
// formed again only when coords is not the array of the last call.
func (l *Layers) rowsOf(coords []float64, d int) [][]float64 {
	n := len(coords) / d
	if len(l.rows) != n || len(l.rows[0]) != d || &l.rows[0][0] != &coords[0] {
		l.rows = slices.Grow(l.rows[:0], n)[:n]
		for i := range l.rows {
			l.rows[i] = coords[d*i : d*i+d : d*i+d]
		}
	}
	return l.rows
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
			l.asc = l.appendAscending(l.asc[:0], by)
			return l.full, l.asc
		}
		l.starts = append(l.starts, len(l.full))
		for _, i := range layer {
			l.taken[i] = true
			if by == byRanks {
				l.ranks.take(i)
			}
		}
		l.full = l.appendAscending(l.full, by)
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
