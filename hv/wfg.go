package hv

// The WFG algorithm (While, Bradstreet and Barone, 2012), seen as a sweep.
// Frame k holds n points in decreasing order of coordinate k−1, and their
// volume is Σ_t c_t · t_{k−1}, where c_t is the (k−1)-dimensional volume
// that the projection of t adds to the projections of the points before it
// (Abel summation of the slices between consecutive values of coordinate
// k−1). c_t is box(t) minus the volume of the kept points limited by t
// (each replaced by its minimum with t), measured by frame k−1; in frame 5,
// c_t is measured directly as a 4-D contribution by HV4D+ (hv4d.go).
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
			v = c.hv4dContribution(t, sub.x, m)
		default:
			v = box - c.wfg(km, m)
		}
		if v > 0 {
			vol += float64(v * t[km])
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
