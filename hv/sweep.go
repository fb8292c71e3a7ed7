package hv

import "math/bits"

// sweep2 measures the c.n points of c.pts in two dimensions: sorted by
// decreasing x, each point adds the strip between the highest y seen so far
// and its own y, as wide as its x.
func (c *Calculator) sweep2() float64 {
	pts := c.pts
	ord := c.sortedBy(0)
	var v, top float64
	for _, i := range ord {
		if y := pts[2*i+1]; y > top {
			v += float64(pts[2*i] * (y - top))
			top = y
		}
	}
	return v
}

// sweep3 measures n ≥ 1 points in three dimensions: pts holds them with
// stride 3 in decreasing order of z, and xr their distinct ranks by x (ties
// in x may be ranked in any order), below c.tree.size().
// Between consecutive z values the volume grows by the area of the 2-D front
// of the points seen so far; that front is a staircase kept in c.tree by
// x-rank, so inserting a point costs O(log n) plus the points it removes.
func (c *Calculator) sweep3(pts []float64, xr []int32, n int) float64 {
	t, sx, sy := &c.tree, c.sx, c.sy
	added := c.added[:0]
	var vol, area float64
	prevZ := pts[2]
	for i := 0; i < n; i++ {
		x, y, z := pts[3*i], pts[3*i+1], pts[3*i+2]
		vol += float64(area * (prevZ - z))
		prevZ = z
		// The staircase holds x non-decreasing and y non-increasing in
		// rank order, so only the next point can dominate (x, y).
		r := int(xr[i])
		h := 0.0
		if s := t.next(r); s >= 0 {
			if sy[s] >= y {
				continue
			}
			h = sy[s]
		}
		// Walk left over the steps that (x, y) covers, adding the area
		// above each of them, and remove them.
		curX, gain := x, 0.0
		q := t.prev(r)
		for ; q >= 0; q = t.prev(q) {
			gain += float64((curX - sx[q]) * (y - h))
			if sy[q] > y {
				break
			}
			curX, h = sx[q], sy[q]
			t.remove(q)
		}
		if q < 0 {
			gain += float64(curX * (y - h))
		}
		area += gain
		t.add(r)
		sx[r], sy[r] = x, y
		added = append(added, int32(r))
	}
	vol += float64(area * prevZ)
	for _, r := range added {
		t.clear(int(r))
	}
	c.added = added
	return vol
}

// A bitTree is a set of integers in [0, n) kept as a 64-ary tree of bit
// words: level 0 has one bit per element, and each bit of level h+1 says
// whether the matching word of level h is non-zero. Insertion, deletion and
// the next/previous element each touch one word per level.
type bitTree struct {
	lv [][]uint64
}

// reset makes t an empty set over [0, n).
func (t *bitTree) reset(n int) {
	t.lv = t.lv[:0]
	for {
		w := (n + 63) >> 6
		t.lv = append(t.lv, make([]uint64, w))
		if w <= 1 {
			return
		}
		n = w
	}
}

// size reports the size of the universe t was made for, rounded up to 64.
func (t *bitTree) size() int {
	if len(t.lv) == 0 {
		return 0
	}
	return len(t.lv[0]) << 6
}

func (t *bitTree) add(i int) {
	for _, l := range t.lv {
		w := l[i>>6]
		l[i>>6] = w | 1<<(i&63)
		if w != 0 {
			return
		}
		i >>= 6
	}
}

func (t *bitTree) remove(i int) {
	for _, l := range t.lv {
		w := l[i>>6] &^ (1 << (i & 63))
		l[i>>6] = w
		if w != 0 {
			return
		}
		i >>= 6
	}
}

// clear zeroes every word on the path of i, which empties the set when done
// for every element that was ever added since the set was last empty.
func (t *bitTree) clear(i int) {
	for _, l := range t.lv {
		i >>= 6
		l[i] = 0
	}
}

// next returns the smallest element greater than i, or −1.
func (t *bitTree) next(i int) int {
	for h, l := range t.lv {
		wi := i >> 6
		if wi < len(l) {
			if w := l[wi] & (^uint64(0) << (i & 63) << 1); w != 0 {
				i = wi<<6 | bits.TrailingZeros64(w)
				for h--; h >= 0; h-- {
					i = i<<6 | bits.TrailingZeros64(t.lv[h][i])
				}
				return i
			}
		}
		i = wi
	}
	return -1
}

// prev returns the largest element smaller than i, or −1.
func (t *bitTree) prev(i int) int {
	for h, l := range t.lv {
		wi := i >> 6
		if w := l[wi] & (1<<(i&63) - 1); w != 0 {
			i = wi<<6 | (63 - bits.LeadingZeros64(w))
			for h--; h >= 0; h-- {
				i = i<<6 | (63 - bits.LeadingZeros64(t.lv[h][i]))
			}
			return i
		}
		if wi == 0 {
			return -1
		}
		i = wi
	}
	return -1
}
