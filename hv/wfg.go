package hv

// The WFG algorithm (While, Bradstreet and Barone, 2012), seen as a sweep.
// Frame k holds n points in decreasing order of coordinate k−1, and their
// volume is Σ_t c_t · t_{k−1}, where c_t is the (k−1)-dimensional volume
// that the projection of t adds to the projections of the points before it
// (Abel summation of the slices between consecutive values of coordinate
// k−1). c_t is box(t) minus the volume of the kept points limited by t
// (each replaced by its minimum with t), measured by frame k−1.
//
// The kept set drops the points that a later point dominates in
// projection, as they can add nothing to later limited sets; a point that a
// kept point dominates adds nothing and is skipped at once. The kept set is
// ordered by coordinate k−2, the order frame k−1 needs. Taking the minimum
// with t preserves every coordinate order, so the global ranks order every
// limited set and nothing is sorted below the top level.

// wfg measures the n points of frame k ≥ 5.
func (c *Calculator) wfg(k, n int) float64 {
	l, sub := &c.lv[k], &c.lv[k-1]
	km := k - 1
	rk := c.rank[k-2]
	s := l.s[:0]
	var vol float64
	last := -1 // the kept point that dominated the last dominated point
	for i := 0; i < n; i++ {
		t := l.x[k*i : k*i+k]
		if last >= 0 && weaklyDominates(l.x[k*last:k*last+km], t[:km]) {
			continue
		}
		m := 0
		dominated := false
		if km == 4 {
			t0, t1, t2, t3 := t[0], t[1], t[2], t[3]
			for _, qi := range s {
				q := l.x[k*int(qi) : k*int(qi)+4]
				q0, q1, q2, q3 := q[0], q[1], q[2], q[3]
				if b2i(q0 >= t0)&b2i(q1 >= t1)&b2i(q2 >= t2)&b2i(q3 >= t3) != 0 {
					dominated, last = true, int(qi)
					break
				}
				l.rm[qi] = b2i(q0 <= t0)&b2i(q1 <= t1)&b2i(q2 <= t2)&b2i(q3 <= t3) != 0
				o := sub.x[4*m : 4*m+4]
				o[0], o[1], o[2], o[3] = min(q0, t0), min(q1, t1), min(q2, t2), min(q3, t3)
				sub.id[m] = l.id[qi]
				m++
			}
		} else {
			for _, qi := range s {
				q := l.x[k*int(qi) : k*int(qi)+km]
				ge, le := true, true
				o := sub.x[km*m : km*m+km]
				for j, x := range q {
					y := t[j]
					ge = ge && x >= y
					le = le && x <= y
					o[j] = min(x, y)
				}
				if ge {
					dominated, last = true, int(qi)
					break
				}
				l.rm[qi] = le
				sub.id[m] = l.id[qi]
				m++
			}
		}
		if dominated {
			continue
		}
		box := 1.0
		for _, x := range t[:km] {
			box *= x
		}
		var v float64
		switch {
		case m == 0:
			v = box
		case m == 1:
			v = box - product(sub.x[:km])
		case m <= iexMax:
			v = box - c.iex(sub.x, m, km)
		case km == 4:
			v = box - c.wfg4(m)
		default:
			v = box - c.wfg(km, m)
		}
		if v > 0 {
			vol += v * t[km]
		}
		// Keep t, drop what it dominates, in decreasing order of rank.
		ri := rk[l.id[i]]
		s2 := l.s2[:0]
		placed := false
		for _, qi := range s {
			if !placed && rk[l.id[qi]] < ri {
				s2 = append(s2, int32(i))
				placed = true
			}
			if !l.rm[qi] {
				s2 = append(s2, qi)
			}
		}
		if !placed {
			s2 = append(s2, int32(i))
		}
		l.s, l.s2 = s2, s
		s = s2
	}
	return vol
}

// wfg4 measures the n points of frame 4. Most points of a limited set are
// dominated, so it first looks for a dominating kept point, trying the last
// one found before the others. Besides the kept set in order of z it keeps
// the same points in order of x, whose positions rank the limited set by x
// for the 3-D sweep: with at most 64 points the sweep then works on one
// word.
func (c *Calculator) wfg4(n int) float64 {
	l, sub := &c.lv[4], &c.lv[3]
	zr, xr := c.rank[2], c.rank[0]
	s, sx := l.s[:0], l.sx[:0]
	var vol float64
	last := -1 // the kept point that dominated the last dominated point
	for i := 0; i < n; i++ {
		t := l.x[4*i : 4*i+4]
		tx, ty, tz := t[0], t[1], t[2]
		if last >= 0 {
			q := l.x[4*last : 4*last+3]
			if b2i(q[0] >= tx)&b2i(q[1] >= ty)&b2i(q[2] >= tz) != 0 {
				continue
			}
		}
		dominated := false
		for _, qi := range s {
			q := l.x[4*int(qi) : 4*int(qi)+3]
			if b2i(q[0] >= tx)&b2i(q[1] >= ty)&b2i(q[2] >= tz) != 0 {
				dominated = true
				last = int(qi)
				break
			}
		}
		if dominated {
			continue
		}
		id := l.id[i]
		// Where t goes in the kept set (by decreasing z-rank).
		ri := zr[id]
		pos, hi := 0, len(s)
		for pos < hi {
			if h := int(uint(pos+hi) >> 1); zr[l.id[s[h]]] > ri {
				pos = h + 1
			} else {
				hi = h
			}
		}
		s2 := l.s2[:len(s)+1]
		k := 0
		for j, qi := range s {
			q := l.x[4*int(qi) : 4*int(qi)+3]
			qx, qy, qz := q[0], q[1], q[2]
			if j == pos {
				s2[k] = int32(i)
				k++
			}
			o := sub.x[3*j : 3*j+3]
			o[0], o[1], o[2] = min(qx, tx), min(qy, ty), min(qz, tz)
			// t dominates q in projection: drop q from the kept set.
			rm := b2i(qx <= tx) & b2i(qy <= ty) & b2i(qz <= tz)
			l.rm[qi] = rm != 0
			s2[k] = qi
			k += 1 - rm
		}
		placed := pos < len(s)
		if !placed {
			s2[k] = int32(i)
			k++
		}
		m := len(s)
		box := tx * ty * tz
		var v float64
		switch {
		case m == 0:
			v = box
		case m == 1:
			v = box - sub.x[0]*sub.x[1]*sub.x[2]
		case m <= iex3Max:
			v = box - c.iex(sub.x, m, 3)
		default:
			for j, qi := range s {
				sub.id[j] = l.xpos[qi]
			}
			if m <= 64 {
				v = box - c.sweep3Small(sub.x, sub.id, m)
			} else {
				v = box - c.sweep3(sub.x, sub.id, m)
			}
		}
		if v > 0 {
			vol += v * t[3]
		}
		l.s, l.s2 = s2[:k], s
		s = s2[:k]
		// The same in order of x, noting the positions for the next sweep.
		sx2 := l.sx2[:0]
		ri, placed = xr[id], false
		for _, qi := range sx {
			if !placed && xr[l.id[qi]] > ri {
				l.xpos[i] = int32(len(sx2))
				sx2 = append(sx2, int32(i))
				placed = true
			}
			if !l.rm[qi] {
				l.xpos[qi] = int32(len(sx2))
				sx2 = append(sx2, qi)
			}
		}
		if !placed {
			l.xpos[i] = int32(len(sx2))
			sx2 = append(sx2, int32(i))
		}
		l.sx, l.sx2 = sx2, sx
		sx = sx2
	}
	return vol
}

// iex3Max is the largest limited set that wfg4 measures by
// inclusion–exclusion rather than by the 3-D sweep.
const iex3Max = 4

func product(x []float64) float64 {
	v := 1.0
	for _, y := range x {
		v *= y
	}
	return v
}

// b2i converts a bool to 0 or 1 without a branch.
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
