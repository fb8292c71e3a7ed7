package algos

import "slices"

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
