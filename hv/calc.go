package hv

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// A Calculator computes hypervolumes like the package-level functions but
// keeps its scratch space between calls, so that repeated calls on inputs
// of similar size do not allocate. The zero value is ready to use. A
// Calculator is not safe for concurrent use.
type Calculator struct {
	d, n int
	pts  []float64 // the points being measured, minus ref: n×d, every coordinate > 0
	p    []float64 // the query point of Contribution, minus ref
	set  []float64 // the set of Contribution, minus ref
	mins []float64 // inclusion–exclusion corners, (2^n)×d

	// Scratch of the sweeps and of the WFG recursion.
	ord    []int32
	ord2   []int32
	keys   []uint64 // sort keys
	keys2  []uint64
	rank   [][]int32 // rank[j][i]: position of point i in increasing coordinate j
	lv     []level   // lv[k]: the points of the running k-dimensional frame
	tree   bitTree   // the 2-D front of the 3-D sweep, by rank of coordinate 0
	sx, sy []float64 // its points, indexed by rank of coordinate 0
	added  []int32   // ranks inserted into tree, to clear it
	h4     []h4node  // the nodes of HV4D+
}

// level holds one frame of the WFG recursion: its points (stride k) with the
// index of the input point each one derives from, the kept set of its sweep
// (positions into x), and flags for rebuilding that set.
type level struct {
	x     []float64
	id    []int32
	s, s2 []int32
	rm    []bool
}

// iexMax is the largest number of points measured by inclusion–exclusion
// (for d ≥ 3); above it the sweeps are faster.
const iexMax = 6

// Volume is like the package-level Volume.
func (c *Calculator) Volume(points [][]float64, ref []float64) float64 {
	d := dimension(points, ref)
	if d == 0 {
		return 0
	}
	c.d, c.n = d, 0
	if cap(c.pts) < len(points)*d {
		c.pts = make([]float64, len(points)*d)
	}
	buf := c.pts[:len(points)*d]
	k := 0
	for _, p := range points {
		p = p[:d]
		q := buf[k : k+d]
		above := true
		if ref == nil {
			for j, x := range p {
				q[j] = x
				above = above && x > 0
			}
		} else {
			ref := ref[:d]
			for j, x := range p {
				x -= ref[j]
				q[j] = x
				above = above && x > 0
			}
		}
		if above {
			k += d
		}
	}
	c.pts, c.n = buf[:k], k/d
	return c.volume()
}

// Contribution is like the package-level Contribution.
func (c *Calculator) Contribution(p []float64, set [][]float64, ref []float64) float64 {
	d := len(p)
	if ref != nil && len(ref) != d {
		panic(fmt.Sprintf("hv: reference point has %d coordinates, want %d", len(ref), d))
	}
	c.p = translate(c.p[:0], p, ref)
	c.set = c.set[:0]
	for i, q := range set {
		if len(q) != d {
			panic(fmt.Sprintf("hv: point %d has %d coordinates, want %d", i, len(q), d))
		}
		c.set = translate(c.set, q, ref)
	}
	return c.contribution(c.p, c.set, len(set))
}

// translate appends p − ref to dst.
func translate(dst, p, ref []float64) []float64 {
	if ref == nil {
		return append(dst, p...)
	}
	for j, x := range p {
		dst = append(dst, x-ref[j])
	}
	return dst
}

// contribution returns the volume that p adds to the m points of set (both
// already translated so that the reference point is the origin). Every
// caller that needs bit-identical contributions goes through here.
func (c *Calculator) contribution(p, set []float64, m int) float64 {
	d := len(p)
	box := 1.0
	for _, x := range p {
		if !(x > 0) {
			return 0
		}
		box *= x
	}
	c.d, c.n = d, 0
	c.pts = c.pts[:0]
	for i := 0; i < m; i++ {
		q := set[i*d : i*d+d]
		above, dom := true, true
		for j, x := range q {
			if !(x > 0) {
				above = false
				break
			}
			if x < p[j] {
				dom = false
			}
		}
		if !above {
			continue
		}
		if dom {
			return 0
		}
		for j, x := range q {
			c.pts = append(c.pts, min(x, p[j]))
		}
		c.n++
	}
	if v := box - c.volume(); v > 0 {
		return v
	}
	return 0
}

// volume measures the c.n points of c.pts, whose coordinates are all > 0.
func (c *Calculator) volume() float64 {
	n, d := c.n, c.d
	switch {
	case n == 0:
		return 0
	case n == 1:
		v := 1.0
		for _, x := range c.pts[:d] {
			v *= x
		}
		return v
	case d == 1:
		return slices.Max(c.pts[:n])
	case d == 2:
		return c.sweep2()
	case n <= iexMax:
		return c.iex(c.pts, n, d)
	case d == 3:
		c.prepare(3)
		l := &c.lv[3]
		for i, id := range c.sortedBy(2) {
			copy(l.x[3*i:3*i+3], c.pts[3*int(id):])
			l.id[i] = c.rank[0][id]
		}
		return c.sweep3(l.x, l.id, n)
	default:
		c.prepare(d)
		l := &c.lv[d]
		for i, id := range c.sortedBy(d - 1) {
			copy(l.x[d*i:d*i+d], c.pts[d*int(id):])
			l.id[i] = id
		}
		if d == 4 {
			return c.hv4d(l.x, n)
		}
		return c.wfg(d, n)
	}
}

// prepare sizes the scratch of the sweeps for the c.n points of c.pts in d
// ≥ 3 dimensions and computes the ranks they use.
func (c *Calculator) prepare(d int) {
	n := c.n
	if d == 3 {
		c.ranks(0, 0)
	} else {
		c.ranks(3, d-2) // frame k keeps its set in order of coordinate k−2
	}
	for len(c.lv) <= d {
		c.lv = append(c.lv, level{})
	}
	// Level 3 is the top level of d = 3; for d ≥ 4 the levels are 4 … d
	// (level 4 holds d = 4's points, or frame 5's limited sets).
	for k := min(d, 4); k <= d; k++ {
		l := &c.lv[k]
		if cap(l.id) < n {
			l.x = make([]float64, k*n)
			l.id = make([]int32, n)
			l.rm = make([]bool, n)
			l.s = make([]int32, 0, n)
			l.s2 = make([]int32, 0, n)
		}
		l.x, l.id, l.rm = l.x[:k*n], l.id[:n], l.rm[:n]
	}
	if d > 3 {
		// HV4D+ nodes for every point, t and the sentinels, at once: frame
		// 5 measures sets of every size up to n, and growing the slice on
		// demand would cost O(n²) in allocation on a Calculator's first call.
		if cap(c.h4) < h4first+1+n {
			c.h4 = make([]h4node, h4first+1+n)
		}
		return
	}
	if c.tree.size() < n {
		c.tree.reset(n)
		c.sx = make([]float64, c.tree.size())
		c.sy = make([]float64, c.tree.size())
		c.added = make([]int32, 0, c.tree.size())
	}
}

// ranks fills c.rank[j] for the coordinates lo ≤ j ≤ hi: the orders used
// by the 3-D sweep (coordinate 0) and by the WFG frames.
func (c *Calculator) ranks(lo, hi int) {
	if cap(c.rank) < hi+1 {
		c.rank = make([][]int32, hi+1)
	}
	c.rank = c.rank[:max(hi+1, len(c.rank))]
	for j := lo; j <= hi; j++ {
		r := c.rank[j]
		if cap(r) < c.n {
			r = make([]int32, c.n)
		}
		r = r[:c.n]
		for i, id := range c.sortedBy(j) {
			r[id] = int32(c.n - 1 - i)
		}
		c.rank[j] = r
	}
}

// sortedBy returns the indices of the points in decreasing order of
// coordinate j (ties by decreasing index), in scratch space valid until the
// next call.
func (c *Calculator) sortedBy(j int) []int32 {
	n, d := c.n, c.d
	if cap(c.keys) < n {
		c.ord = make([]int32, n)
		c.ord2 = make([]int32, n)
		c.keys = make([]uint64, n)
		c.keys2 = make([]uint64, n)
	}
	ord, keys := c.ord[:n], c.keys[:n]
	for i := range ord {
		ord[i] = int32(i)
		// Coordinates are > 0, where the order of the bits is the order
		// of the numbers.
		keys[i] = math.Float64bits(c.pts[i*d+j])
	}
	if n <= 16 {
		// Insertion sort, by decreasing key, then decreasing index.
		for i := 1; i < n; i++ {
			k, o := keys[i], ord[i]
			j := i
			for ; j > 0 && keys[j-1] <= k; j-- {
				keys[j], ord[j] = keys[j-1], ord[j-1]
			}
			keys[j], ord[j] = k, o
		}
		return ord
	}
	if n <= 64 {
		pts := c.pts
		slices.SortFunc(ord, func(a, b int32) int {
			if c := cmp.Compare(pts[int(b)*d+j], pts[int(a)*d+j]); c != 0 {
				return c
			}
			return cmp.Compare(b, a)
		})
		return ord
	}
	radixSort(keys, ord, c.keys2[:n], c.ord2[:n])
	slices.Reverse(ord)
	return ord
}

// radixSort sorts keys in increasing order, stably, permuting ids alike.
// It is a least-significant-byte radix sort that skips the bytes all keys
// share; tk and ti are scratch of the same length.
func radixSort(keys []uint64, ids []int32, tk []uint64, ti []int32) {
	var count [8][256]int32
	for _, k := range keys {
		for b := range 8 {
			count[b][byte(k>>(8*b))]++
		}
	}
	n := int32(len(keys))
	src, srcID, dst, dstID := keys, ids, tk, ti
	for b := range 8 {
		c := &count[b]
		if c[byte(src[0]>>(8*b))] == n {
			continue
		}
		var sum int32
		for i, x := range c {
			c[i] = sum
			sum += x
		}
		shift := 8 * uint(b)
		for i, k := range src {
			o := &c[byte(k>>shift)]
			dst[*o], dstID[*o] = k, srcID[i]
			*o++
		}
		src, srcID, dst, dstID = dst, dstID, src, srcID
	}
	if &src[0] != &keys[0] {
		copy(keys, src)
		copy(ids, srcID)
	}
}
