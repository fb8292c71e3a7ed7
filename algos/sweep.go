package algos

import "slices"

// The layers of Peel for d = 2 and 3, by a sweep (Kung, Luccio and
// Preparata 1975) instead of the archive of maximal: arms are visited in
// lexicographically descending order of their vectors, so every dominator
// of an arm comes before it (it is ≥ in the first coordinate, and on a tie
// ≥ in the next, …, and differs somewhere), and exact duplicates are
// adjacent. An arm is then dominated exactly when an earlier arm other than
// its duplicates is ≥ in the remaining coordinates: for d = 2, when the
// largest second coordinate seen so far is ≥ its own; for d = 3, when the
// staircase of the (y, z) seen so far (the pairs no other seen pair
// weakly exceeds, by y ascending and z descending) has a point ≥ (y, z),
// which the first point of y ≥ the arm's y tells. A layer costs O(n log s)
// comparisons (s the staircase's length) where the archive costs O(|L|²)
// signature tests. Only comparisons of the coordinates are made, so the
// layers are the same sets as maximal's, to the last tie.

// prepareSweep sizes the scratch space, copies the points into flat and
// repairs the kept lexicographic order. It reports false, doing nothing
// else, unless every point has d = 2 or d = 3 coordinates.
func (l *Layers) prepareSweep(points [][]float64) bool {
	n := len(points)
	if n == 0 {
		return false
	}
	d := len(points[0])
	if d != 2 && d != 3 {
		return false
	}
	for _, p := range points {
		if len(p) != d {
			return false
		}
	}
	f := slices.Grow(l.flat[:0], d*n)[:d*n]
	if d == 2 {
		for i, p := range points {
			p := p[:2]
			f[2*i], f[2*i+1] = p[0], p[1]
		}
	} else {
		for i, p := range points {
			p := p[:3]
			f[3*i], f[3*i+1], f[3*i+2] = p[0], p[1], p[2]
		}
	}
	l.flat = f
	l.sweepFrom(f, d)
	return true
}

// sweepFrom sizes the scratch space for the len(coords)/d points of coords
// (d = 2, 3; point i at coords[d·i:d·i+d]), which the sweep then reads
// until the next call, and repairs the kept lexicographic order.
func (l *Layers) sweepFrom(coords []float64, d int) {
	l.size(len(coords) / d)
	clear(l.taken)
	l.coords = coords
	l.sortLex(d)
}

// lexAbove is the visiting order of the sweep: the vector of x
// lexicographically larger, then the lower index.
func (l *Layers) lexAbove(d, x, y int) bool {
	f := l.coords
	if d == 2 {
		p, q := f[2*x:2*x+2:2*x+2], f[2*y:2*y+2:2*y+2]
		if p[0] != q[0] {
			return p[0] > q[0]
		}
		if p[1] != q[1] {
			return p[1] > q[1]
		}
		return x < y
	}
	p, q := f[3*x:3*x+3:3*x+3], f[3*y:3*y+3:3*y+3]
	if p[0] != q[0] {
		return p[0] > q[0]
	}
	if p[1] != q[1] {
		return p[1] > q[1]
	}
	if p[2] != q[2] {
		return p[2] > q[2]
	}
	return x < y
}

// sortLex repairs the kept lexicographic order by insertion sort, and falls
// back to a full sort when too many arms moved. The sorted prefix's last
// arm and its coordinates are kept at hand: most arms stay after it, and
// most of those comparisons stop at the first coordinate. The comparisons
// are written out (lexAbove is not inlined).
func (l *Layers) sortLex(d int) {
	if len(l.lex) == 0 {
		return
	}
	var sorted bool
	if d == 2 {
		sorted = l.sortLex2()
	} else {
		sorted = l.sortLex3()
	}
	if !sorted {
		slices.SortFunc(l.lex, func(x, y int) int {
			if l.lexAbove(d, x, y) {
				return -1
			}
			return 1 // x ≠ y: the order is strict
		})
	}
}

// sortLex2 is sortLex's insertion sort for d = 2; it reports false, the
// order unsorted, when too many arms moved.
func (l *Layers) sortLex2() bool {
	order := l.lex
	f := l.coords
	budget := 16 * len(order)
	last := order[0]
	t := f[2*last : 2*last+2 : 2*last+2]
	t0, t1 := t[0], t[1]
	for a := 1; a < len(order); a++ {
		x := order[a]
		p := f[2*x : 2*x+2 : 2*x+2]
		p0, p1 := p[0], p[1]
		// In place unless x is above the prefix's last arm.
		if p0 != t0 {
			if !(p0 > t0) {
				last, t0, t1 = x, p0, p1
				continue
			}
		} else if p1 != t1 {
			if !(p1 > t1) {
				last, t0, t1 = x, p0, p1
				continue
			}
		} else if !(x < last) {
			last, t0, t1 = x, p0, p1
			continue
		}
		b := a
		for b > 0 {
			y := order[b-1]
			q := f[2*y : 2*y+2 : 2*y+2]
			if p0 != q[0] {
				if !(p0 > q[0]) {
					break
				}
			} else if p1 != q[1] {
				if !(p1 > q[1]) {
					break
				}
			} else if !(x < y) {
				break
			}
			order[b] = y
			b--
		}
		order[b] = x
		if budget -= a - b; budget < 0 {
			return false
		}
	}
	return true
}

// sortLex3 is sortLex2 for d = 3.
func (l *Layers) sortLex3() bool {
	order := l.lex
	f := l.coords
	budget := 16 * len(order)
	last := order[0]
	t := f[3*last : 3*last+3 : 3*last+3]
	t0, t1, t2 := t[0], t[1], t[2]
	for a := 1; a < len(order); a++ {
		x := order[a]
		p := f[3*x : 3*x+3 : 3*x+3]
		p0, p1, p2 := p[0], p[1], p[2]
		if p0 != t0 {
			if !(p0 > t0) {
				last, t0, t1, t2 = x, p0, p1, p2
				continue
			}
		} else if p1 != t1 {
			if !(p1 > t1) {
				last, t0, t1, t2 = x, p0, p1, p2
				continue
			}
		} else if p2 != t2 {
			if !(p2 > t2) {
				last, t0, t1, t2 = x, p0, p1, p2
				continue
			}
		} else if !(x < last) {
			last, t0, t1, t2 = x, p0, p1, p2
			continue
		}
		b := a
		for b > 0 {
			y := order[b-1]
			q := f[3*y : 3*y+3 : 3*y+3]
			if p0 != q[0] {
				if !(p0 > q[0]) {
					break
				}
			} else if p1 != q[1] {
				if !(p1 > q[1]) {
					break
				}
			} else if p2 != q[2] {
				if !(p2 > q[2]) {
					break
				}
			} else if !(x < y) {
				break
			}
			order[b] = y
			b--
		}
		order[b] = x
		if budget -= a - b; budget < 0 {
			return false
		}
	}
	return true
}

// stairPoint is a point (y, z) of the staircase.
type stairPoint struct{ y, z float64 }

// maximalSweep is maximal for the points of the last prepareSweep: the
// non-dominated arms among those not taken, in visiting order, stamped
// with the current pass.
func (l *Layers) maximalSweep(d int) []int {
	l.layer = l.layer[:0]
	l.nextPass()
	if d == 2 {
		l.sweep2()
	} else {
		l.sweep3()
	}
	return l.layer
}

// sweep2 is the sweep for d = 2: an arm is dominated when the largest y
// seen before its group of duplicates is ≥ its y. As in sweep3, an arm
// equal to the previous one visited shares its status.
func (l *Layers) sweep2() {
	f := l.coords
	layer := l.layer
	seen, maxY := false, 0.0
	have, in := false, false // an arm was visited; it is in the layer
	var px, py float64       // the coordinates of that arm
	for _, i := range l.lex {
		if l.taken[i] {
			continue
		}
		p := f[2*i : 2*i+2 : 2*i+2]
		x, y := p[0], p[1]
		if !have || x != px || y != py {
			have, px, py = true, x, y
			in = !seen || y > maxY
			if in {
				seen, maxY = true, y
			}
		}
		if in {
			layer = append(layer, i)
			l.stamp[i] = l.pass
		}
	}
	l.layer = layer
}

// sweep3 is the sweep for d = 3: an arm is dominated when the staircase of
// the (y, z) seen before its group of duplicates has a point ≥ its (y, z).
// Duplicates (equal under ==) are adjacent among the arms not taken (a
// layer taken is taken whole), so an arm equal to the previous one
// visited shares its status, and only the first of a group is looked up.
func (l *Layers) sweep3() {
	f := l.coords
	layer := l.layer
	st := l.stair[:0]
	have, in := false, false // an arm was visited; it is in the layer
	var px, py, pz float64   // the coordinates of that arm
	for _, i := range l.lex {
		if l.taken[i] {
			continue
		}
		p := f[3*i : 3*i+3 : 3*i+3]
		x, y, z := p[0], p[1], p[2]
		if have && x == px && y == py && z == pz {
			if in {
				layer = append(layer, i)
				l.stamp[i] = l.pass
			}
			continue
		}
		have, px, py, pz = true, x, y, z
		// s: the first staircase point of y ≥ the arm's, the one of
		// largest z among them; none when the last (largest y) is below.
		s, hi := len(st), len(st)
		if hi > 0 && st[hi-1].y >= y {
			s = 0
			for s < hi {
				m := int(uint(s+hi) >> 1)
				if st[m].y < y {
					s = m + 1
				} else {
					hi = m
				}
			}
			if st[s].z >= z {
				in = false
				continue // dominated
			}
		}
		// Insert (y, z) in place of the points it weakly exceeds: those
		// before s of z ≤ the arm's (a suffix, z descending), and s itself
		// if its y is equal (its z is then smaller).
		b := s
		for b > 0 && st[b-1].z <= z {
			b--
		}
		end := s
		if s < len(st) && st[s].y == y {
			end++
		}
		switch end - b {
		case 1:
			st[b] = stairPoint{y, z}
		case 0:
			st = append(st, stairPoint{})
			for c := len(st) - 1; c > b; c-- {
				st[c] = st[c-1]
			}
			st[b] = stairPoint{y, z}
		default:
			st[b] = stairPoint{y, z}
			gone := end - b - 1
			for c := b + 1; c+gone < len(st); c++ {
				st[c] = st[c+gone]
			}
			st = st[:len(st)-gone]
		}
		in = true
		layer = append(layer, i)
		l.stamp[i] = l.pass
	}
	l.stair = st
	l.layer = layer
}
