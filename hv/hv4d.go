package hv

import "math"

// HV4D+ (Guerreiro and Fonseca, "Computing and updating hypervolume
// contributions in up to four dimensions", IEEE TEVC 22(3), 2018): the 4-D
// volume as a sweep along the last coordinate that keeps the 3-D front of the
// points seen so far, and adds to its volume the 3-D contribution of each new
// point, computed in time linear in the front.
//
// The 3-D front is a list in increasing (z, y, x) order. Each point in it
// knows its two outer delimiters among the points before it in that list
// (closest): the point with the smallest x among those with a smaller y, and
// the point with the smallest y among those with a smaller x. Replaying the
// list in order and linking each point between its two delimiters rebuilds,
// in O(1) per point, the 2-D staircase of the front cut at any z (the cnext
// links, in increasing x and in increasing y). The contribution of a new
// point is then a sweep up the list from its own z: its exclusive area on the
// staircase, less what each later point covers, times the gaps in z.
//
// The algorithm is stated for minimisation; here it runs on the negated
// coordinates, which turns our maximisation with the origin as reference into
// minimisation with the origin as reference without changing a single
// difference or product.
//
// The steps follow the paper's reference implementation (A. P. Guerreiro's
// HV4D+ code as distributed in moocore, MPL 2.0), read for the details and
// rewritten here: h4place, h4contribution and h4insert do what its
// restart_base_setup_z_and_closest, one_contribution_3d and update_links do.
// hv4dContribution (the 4-D contribution of one point, for WFG's frame 5) is
// ours.

// h4node is a point of the HV4D+ sweep; links are indices into Calculator.h4.
type h4node struct {
	x          [3]float64 // negated first three coordinates
	next, prev int32      // the 3-D front in increasing (z, y, x)
	cnext      [2]int32   // the staircase: next by x, next by y
	closest    [2]int32   // outer delimiters among the points before it
}

// The three sentinels, at indices 0, 1 and 2 of every node slice: (−∞, 0, −∞)
// and (0, −∞, −∞) bound the staircase, (−∞, −∞, 0) ends the front. Only
// their zero coordinates enter areas; −∞ is −MaxFloat64, as in moocore.
const (
	h4left, h4right, h4top = 0, 1, 2
)

// hv4d measures n ≥ 1 points of four dimensions: pts holds them with stride
// 4, every coordinate > 0, in decreasing order of the last coordinate (ties
// in any order).
func (c *Calculator) hv4d(pts []float64, n int) float64 {
	nd := c.h4nodes(pts, n, 0)
	var vol3, vol float64
	last := int32(-1) // the point that dominated the last dominated point
	for i := range n {
		if id := int32(h4first + i); !h4dominated(nd, id, &last, true) {
			vol3 += h4contribution(nd, id)
			h4insert(nd, id)
		}
		w, next := pts[4*i+3], 0.0
		if i+1 < n {
			next = pts[4*i+7]
		}
		// Negated: the slab from −w to −next.
		vol += float64(vol3 * (w - next))
	}
	return vol
}

// hv4dContribution returns the volume that t adds to a set of points of four
// dimensions, given as the n ≥ 1 points of pts, each already limited by t
// (replaced by its minimum with t), with stride 4, in decreasing order of the
// last coordinate. The points level with t in the last coordinate form the
// base; t's 3-D contribution to it shrinks by the 3-D contribution of each
// later point, slab by slab down the last coordinate, until a point covers t
// in the first three coordinates.
func (c *Calculator) hv4dContribution(t, pts []float64, n int) float64 {
	nd := c.h4nodes(pts, n, 1)
	const tid = h4first + 0
	nd[tid].x = [3]float64{-t[0], -t[1], -t[2]}
	tw := t[3]
	last := int32(-1)
	i := 0
	for ; i < n && pts[4*i+3] == tw; i++ {
		if id := int32(h4first + 1 + i); !h4dominated(nd, id, &last, false) {
			h4insert(nd, id)
		}
	}
	if h4place(nd, tid, true) >= 0 {
		return 0
	}
	area := h4contribution(nd, tid) // the 3-D contribution, at this level
	var vol float64
	prevW := tw
	for ; i < n; i++ {
		id := int32(h4first + 1 + i)
		w := pts[4*i+3]
		vol += float64(area * (prevW - w))
		prevW = w
		if h4covers(nd, id, tid) {
			return vol
		}
		if !h4dominated(nd, id, &last, true) {
			area -= h4contribution(nd, id)
			h4insert(nd, id)
		}
	}
	return vol + float64(area*prevW)
}

// h4first is the index of the first point node, after the sentinels.
const h4first = 3

// h4nodes sets up the sentinels and the nodes of the n points of pts
// (stride 4), leaving room for extra nodes before them.
func (c *Calculator) h4nodes(pts []float64, n, extra int) []h4node {
	size := h4first + extra + n
	if cap(c.h4) < size {
		c.h4 = make([]h4node, size)
	}
	nd := c.h4[:size]
	const inf = math.MaxFloat64
	nd[h4left] = h4node{x: [3]float64{-inf, 0, -inf}}
	nd[h4right] = h4node{x: [3]float64{0, -inf, -inf}}
	nd[h4top] = h4node{x: [3]float64{-inf, -inf, 0}}
	for i := range 3 {
		s := &nd[i]
		s.next, s.prev = int32((i+1)%3), int32((i+2)%3)
		s.closest = [2]int32{h4right, h4left}
	}
	for i := range n {
		p := pts[4*i : 4*i+3]
		nd[h4first+extra+i].x = [3]float64{-p[0], -p[1], -p[2]}
	}
	return nd
}

// h4dominated reports whether a point of the front weakly dominates node
// id, trying *last (the point that dominated the previous dominated one)
// first and updating it; otherwise it places id with h4place.
func h4dominated(nd []h4node, id int32, last *int32, relink bool) bool {
	if *last >= 0 && h4covers(nd, *last, id) {
		return true
	}
	if dom := h4place(nd, id, relink); dom >= 0 {
		*last = dom
		return true
	}
	return false
}

// h4covers reports whether node a weakly dominates node b in the first three
// coordinates.
func h4covers(nd []h4node, a, b int32) bool {
	x, y := &nd[a].x, &nd[b].x
	return x[0] <= y[0] && x[1] <= y[1] && x[2] <= y[2]
}

// h4place replays the front up to the place of node t in (z, y, x) order,
// rebuilding the staircase there if relink is set (h4contribution needs it),
// and finds the outer delimiters of t. It returns −1, or, changing nothing
// in the front, a point of the front that weakly dominates t (in three
// coordinates, hence in four).
func h4place(nd []h4node, t int32, relink bool) int32 {
	n0, n1, n2 := nd[t].x[0], nd[t].x[1], nd[t].x[2]
	close0, close1 := int32(h4right), int32(h4left)
	c0x0, c0x1 := nd[close0].x[0], nd[close0].x[1]
	c1x0, c1x1 := nd[close1].x[0], nd[close1].x[1]
	nd[h4left].cnext[0] = h4right
	nd[h4right].cnext[1] = h4left
	p := nd[h4right].next
	for {
		q := &nd[p]
		p0, p1, p2 := q.x[0], q.x[1], q.x[2]
		if p0 <= n0 && p1 <= n1 && p2 <= n2 {
			return p
		}
		if !(p2 < n2 || p2 == n2 && (p1 < n1 || p1 == n1 && p0 <= n0)) {
			tn := &nd[t]
			tn.closest = [2]int32{close0, close1}
			tn.prev, tn.next = q.prev, p
			return -1
		}
		if relink { // link p into the staircase between its delimiters
			q.cnext = q.closest
			nd[q.cnext[0]].cnext[1] = p
			nd[q.cnext[1]].cnext[0] = p
		}
		if p1 < n1 && (p0 < c0x0 || p0 == c0x0 && p1 < c0x1) {
			close0, c0x0, c0x1 = p, p0, p1
		} else if p0 < n0 && (p1 < c1x1 || p1 == c1x1 && p0 < c1x0) {
			close1, c1x0, c1x1 = p, p0, p1
		}
		p = q.next
	}
}

// h4contribution returns the 3-D volume that t, placed by h4place, adds to
// the front: its exclusive area on the staircase, swept up the front and
// reduced by each later point that cuts into it, until a point dominates it
// in (x, y) (the top sentinel at the latest).
func h4contribution(nd []h4node, t int32) float64 {
	tn := &nd[t]
	tn.cnext = tn.closest
	n0, n1, n2 := tn.x[0], tn.x[1], tn.x[2]
	area := h4area(nd, n0, n1, tn.cnext[0], 1)
	var vol float64
	lastZ := n2
	p := tn.next
	for {
		q := &nd[p]
		p0, p1, p2 := q.x[0], q.x[1], q.x[2]
		vol += float64(area * (p2 - lastZ))
		if p0 <= n0 && p1 <= n1 {
			return vol
		}
		q.cnext = q.closest
		switch {
		case p0 < n0: // left of t, cutting its region from below in y
			if l := tn.cnext[1]; p1 <= nd[l].x[1] {
				area -= h4area(nd, n0, p1, l, 0)
				q.cnext[1] = l
				nd[q.cnext[0]].cnext[1] = p
				tn.cnext[1] = p
			}
		case p1 < n1: // below t, cutting its region from the left in x
			if r := tn.cnext[0]; p0 <= nd[r].x[0] {
				area -= h4area(nd, p0, n1, r, 1)
				q.cnext[0] = r
				nd[q.cnext[1]].cnext[0] = p
				tn.cnext[0] = p
			}
		default: // inside the region of t
			area -= h4area(nd, p0, p1, q.cnext[0], 1)
			nd[q.cnext[1]].cnext[0] = p
			nd[q.cnext[0]].cnext[1] = p
		}
		lastZ = p2
		p = q.next
	}
}

// h4area returns the area that the corner (a0, a1) dominates beyond the
// staircase, walking the staircase along coordinate i from q, the outer
// delimiter of the corner with the smaller coordinate i.
func h4area(nd []h4node, a0, a1 float64, q int32, i int) float64 {
	a := [2]float64{a0, a1}
	j := 1 - i
	ai, aj := a[i], a[j]
	qx := &nd[q].x
	u := nd[q].cnext[i]
	ux := &nd[u].x
	area := (qx[j] - aj) * (ux[i] - ai)
	for aj < ux[j] {
		qx = ux
		u = nd[u].cnext[i]
		ux = &nd[u].x
		area += float64((qx[j] - aj) * (ux[i] - qx[i]))
	}
	return area
}

// h4insert links t, placed and measured, into the front, drops the points
// it weakly dominates, and makes it the outer delimiter of the later points
// for which it is closer than their current one.
func h4insert(nd []h4node, t int32) {
	tn := &nd[t]
	tn.next = nd[tn.prev].next // the point after it may have been dropped
	nd[tn.next].prev = t
	nd[tn.prev].next = t
	n0, n1, n2 := tn.x[0], tn.x[1], tn.x[2]
	for p := tn.next; p != h4top; {
		q := &nd[p]
		p0, p1 := q.x[0], q.x[1]
		if p0 <= n0 && p1 <= n1 && (p0 < n0 || p1 < n1) {
			return // p covers t in (x, y) for every later point
		}
		if n0 <= p0 {
			if n1 <= p1 {
				nd[q.prev].next = q.next
				nd[q.next].prev = q.prev
			} else if n0 < p0 && lexLess(n1, n0, n2, &nd[q.closest[1]].x, 1, 0) {
				q.closest[1] = t
			}
		} else if n1 < p1 && lexLess(n0, n1, n2, &nd[q.closest[0]].x, 0, 1) {
			q.closest[0] = t
		}
		p = q.next
	}
}

// lexLess reports whether (a, b, z) precedes (x[i], x[j], x[2]) in
// lexicographic order.
func lexLess(a, b, z float64, x *[3]float64, i, j int) bool {
	return a < x[i] || a == x[i] && (b < x[j] || b == x[j] && z < x[2])
}
