package algos

import (
	"cmp"
	"math"
	"math/bits"
	"slices"
)

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
