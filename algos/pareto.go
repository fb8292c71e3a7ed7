package algos

import (
	"math"
	"slices"
	"sort"
)

// Dominates reports whether a Pareto-dominates b under maximisation:
// a ≥ b in every coordinate and a ≠ b.
func Dominates(a, b []float64) bool {
	strict := false
	for j := range a {
		if a[j] < b[j] {
			return false
		}
		if a[j] > b[j] {
			strict = true
		}
	}
	return strict
}

// Layers peels Pareto layers (non-dominated sorting under maximisation) of
// a set of vectors, only as far as a slate needs. It keeps scratch space
// between calls; it is not safe for concurrent use.
type Layers struct {
	order []int     // arms by decreasing coordinate sum
	sum   []float64 // coordinate sums
	taken []bool
	layer []int
	// Successive calls see similar points: the member that dominated an
	// arm last time is tried first, which settles most dominated arms with
	// one comparison. stamp[m] == pass marks m as a member of the layer
	// being built.
	lastDom []int
	stamp   []int
	pass    int
	// sig packs each point's coordinates quantised to 7 bits (d ≤ 8): m can
	// dominate i only if every byte of sig[m] is ≥ that of sig[i], which one
	// subtraction tests for all coordinates at once (SWAR). The test is a
	// necessary condition, so it only skips comparisons that would fail.
	sig  []uint64
	high uint64 // the guard bit of every used byte; 0 disables the filter
}

// mayDominate reports whether m can dominate i according to their signatures.
func (l *Layers) mayDominate(m, i int) bool {
	return l.high == 0 || ((l.sig[m]|l.high)-l.sig[i])&l.high == l.high
}

// Select peels layers of points until k arms are collected. It returns the
// arms of the whole layers that fit (full), and the members of the first
// layer that does not fit whole (overflow, ascending index; empty when the
// full layers give exactly k arms). The caller picks k − len(full) arms of
// overflow by its tie-break rule. The returned slices are reused by the next
// call.
func (l *Layers) Select(points [][]float64, k int) (full, overflow []int) {
	l.prepare(points)
	full = full[:0]
	for len(full) < k {
		layer := l.peel(points, -1)
		if len(layer) == 0 {
			break
		}
		slices.Sort(layer)
		if len(full)+len(layer) > k {
			return full, layer
		}
		for _, i := range layer {
			l.taken[i] = true
		}
		full = append(full, layer...)
	}
	return full, nil
}

// TopBySum fills slate with what Select followed by PickLargestSum on the
// overflowing layer would choose, but stops peeling as soon as the answer is
// known: in decreasing-sum order, once k members of the current layer are
// found, no later point can be chosen or dominate them.
func (l *Layers) TopBySum(points [][]float64, slate []int) {
	l.prepare(points)
	n := 0
	for n < len(slate) {
		layer := l.peel(points, len(slate)-n)
		if len(layer) == 0 {
			return
		}
		if n+len(layer) >= len(slate) {
			copy(slate[n:], layer) // layer is in (sum desc, index asc) order
			return
		}
		for _, i := range layer {
			l.taken[i] = true
		}
		n += copy(slate[n:], layer)
	}
}

// prepare computes the coordinate sums and orders the arms by (sum desc,
// index asc). Successive calls see nearly the same order, so the previous
// order is insertion-sorted: close to linear time.
func (l *Layers) prepare(points [][]float64) {
	n := len(points)
	if len(l.lastDom) != n {
		l.lastDom = make([]int, n)
		l.stamp = make([]int, n)
		l.sum = make([]float64, n)
		l.taken = make([]bool, n)
		l.order = make([]int, n)
		for i := range l.lastDom {
			l.lastDom[i] = -1
			l.order[i] = i
		}
	}
	for i, p := range points {
		s := 0.0
		for _, v := range p {
			s += v
		}
		l.sum[i] = s
		l.taken[i] = false
	}
	l.signatures(points)
	// A dominator has a strictly larger exact sum, and rounded sums are
	// monotone, so dominators come first or tie; equal sums are fixed in peel.
	before := func(x, y int) bool {
		if l.sum[x] != l.sum[y] {
			return l.sum[x] > l.sum[y]
		}
		return x < y
	}
	for a := 1; a < n; a++ {
		x := l.order[a]
		b := a
		for b > 0 && before(x, l.order[b-1]) {
			l.order[b] = l.order[b-1]
			b--
		}
		l.order[b] = x
	}
}

// signatures quantises every coordinate to 0..127 over its range among the
// points, monotonically (a < b ⇒ q(a) ≤ q(b)), and packs a point's levels
// into one word.
func (l *Layers) signatures(points [][]float64) {
	n := len(points)
	l.high = 0
	if n == 0 || len(points[0]) > 8 {
		return
	}
	d := len(points[0])
	if len(l.sig) != n {
		l.sig = make([]uint64, n)
	}
	for i := range l.sig {
		l.sig[i] = 0
	}
	for j := 0; j < d; j++ {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, p := range points {
			lo, hi = min(lo, p[j]), max(hi, p[j])
		}
		scale := 0.0
		if hi > lo {
			scale = 127 / (hi - lo)
		}
		if math.IsNaN(scale) || math.IsInf(scale, 0) {
			return // leave the filter off for pathological ranges
		}
		for i, p := range points {
			q := uint64(min(127, max(0, (p[j]-lo)*scale)))
			l.sig[i] |= q << (8 * j)
		}
		l.high |= 0x80 << (8 * j)
	}
}

// peel returns the maximal (non-dominated) arms among those not taken, in
// (sum desc, index asc) order. With enough ≥ 0 it may stop once it has
// enough members and the next arm's sum is strictly smaller than the
// enough-th member's: the first enough members are then final.
func (l *Layers) peel(points [][]float64, enough int) []int {
	layer := l.layer[:0]
	l.pass++
	for _, i := range l.order {
		if l.taken[i] {
			continue
		}
		if enough > 0 && len(layer) >= enough && l.sum[i] < l.sum[layer[enough-1]] {
			break
		}
		if m := l.lastDom[i]; m >= 0 && l.stamp[m] == l.pass && Dominates(points[m], points[i]) {
			continue
		}
		dominated := false
		for _, m := range layer {
			if l.mayDominate(m, i) && Dominates(points[m], points[i]) {
				dominated = true
				l.lastDom[i] = m
				break
			}
		}
		if dominated {
			continue
		}
		// An earlier member with the same rounded sum may be dominated by i.
		for a := len(layer) - 1; a >= 0 && l.sum[layer[a]] == l.sum[i]; a-- {
			if l.mayDominate(i, layer[a]) && Dominates(points[i], points[layer[a]]) {
				l.stamp[layer[a]] = 0
				layer = slices.Delete(layer, a, a+1)
			}
		}
		layer = append(layer, i)
		l.stamp[i] = l.pass
	}
	l.layer = layer
	return layer
}

// EmpiricalFrontSize returns the number of vectors not dominated by another
// (exact duplicates are each counted: neither dominates the other).
func EmpiricalFrontSize(points [][]float64, scratch *Layers) int {
	full, overflow := scratch.Select(points, 1)
	return len(full) + len(overflow)
}

// CrowdingDistance computes NSGA-II crowding distances of members (indices
// into points) into out (len(members)): per objective, members sorted by that
// objective (ties by index), boundary members get +Inf and interior ones add
// (next − prev)/(max − min); objectives where max = min are skipped.
func CrowdingDistance(points [][]float64, members []int, out []float64) {
	m := len(members)
	for a := range out[:m] {
		out[a] = 0
	}
	if m == 0 {
		return
	}
	pos := make([]int, m)
	for j := range points[members[0]] {
		for a := range pos {
			pos[a] = a
		}
		sort.Slice(pos, func(x, y int) bool {
			px, py := points[members[pos[x]]][j], points[members[pos[y]]][j]
			if px != py {
				return px < py
			}
			return members[pos[x]] < members[pos[y]]
		})
		lo, hi := points[members[pos[0]]][j], points[members[pos[m-1]]][j]
		out[pos[0]] = math.Inf(1)
		out[pos[m-1]] = math.Inf(1)
		if hi == lo {
			continue
		}
		for a := 1; a < m-1; a++ {
			out[pos[a]] += (points[members[pos[a+1]]][j] - points[members[pos[a-1]]][j]) / (hi - lo)
		}
	}
}

// PickUniform fills out with a uniformly random subset of cand (a partial
// Fisher–Yates shuffle of cand, which it reorders).
func PickUniform(cand, out []int, rng interface{ IntN(int) int }) {
	for a := range out {
		r := a + rng.IntN(len(cand)-a)
		cand[a], cand[r] = cand[r], cand[a]
		out[a] = cand[a]
	}
}

// PickLargestSum fills out with the members of cand of largest coordinate
// sum of points, lowest index first on ties. It reorders cand.
func PickLargestSum(points [][]float64, cand, out []int) {
	sumOf := func(i int) float64 {
		s := 0.0
		for _, v := range points[i] {
			s += v
		}
		return s
	}
	for a := range out {
		best := a
		bs := sumOf(cand[a])
		for c := a + 1; c < len(cand); c++ {
			if s := sumOf(cand[c]); s > bs || (s == bs && cand[c] < cand[best]) {
				best, bs = c, s
			}
		}
		cand[a], cand[best] = cand[best], cand[a]
		out[a] = cand[a]
	}
}
