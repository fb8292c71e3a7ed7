package hv

import "math/bits"

// iex measures n points (stride d, coordinates > 0) by inclusion–exclusion:
// HV = Σ over non-empty subsets T of (−1)^(|T|+1) · vol(min T). The corner
// min T is computed from the corner of T without its lowest point, so each
// of the 2^n − 1 terms costs d minimums and d products.
func (c *Calculator) iex(pts []float64, n, d int) float64 {
	if v, ok := iexUnrolled(pts, n, d); ok {
		return v
	}
	return c.iexLoop(pts, n, d)
}

// iexLoop is iex by a loop over the subsets, for any n and d.
func (c *Calculator) iexLoop(pts []float64, n, d int) float64 {
	full := 1 << n
	if cap(c.mins) < full*d {
		c.mins = make([]float64, full*d)
	}
	mins := c.mins[:full*d]
	// Subsets go in pairs s (even, without point 0) and s+1 (with it): the
	// corner of s+1 is min(corner of s, point 0) and is never a rest, so it
	// stays in registers, and the two terms have opposite signs.
	var acc [2]float64 // by parity of the size of s: acc[1]·(+1), acc[0]·(−1)
	switch d {
	case 3:
		p0, p1, p2 := pts[0], pts[1], pts[2]
		acc[1] = p0 * p1 * p2
		for s := 2; s < full; s += 2 {
			low := bits.TrailingZeros(uint(s))
			p := pts[3*low : 3*low+3]
			a, b, e := p[0], p[1], p[2]
			if r := s & (s - 1); r != 0 {
				q := mins[3*r : 3*r+3]
				a, b, e = min2(q[0], a), min2(q[1], b), min2(q[2], e)
			}
			m := mins[3*s : 3*s+3]
			m[0], m[1], m[2] = a, b, e
			acc[bits.OnesCount(uint(s))&1] += float64(a*b*e) - float64(min2(a, p0)*min2(b, p1)*min2(e, p2))
		}
	case 4:
		p0, p1, p2, p3 := pts[0], pts[1], pts[2], pts[3]
		acc[1] = p0 * p1 * p2 * p3
		for s := 2; s < full; s += 2 {
			low := bits.TrailingZeros(uint(s))
			p := pts[4*low : 4*low+4]
			a, b, e, f := p[0], p[1], p[2], p[3]
			if r := s & (s - 1); r != 0 {
				q := mins[4*r : 4*r+4]
				a, b, e, f = min2(q[0], a), min2(q[1], b), min2(q[2], e), min2(q[3], f)
			}
			m := mins[4*s : 4*s+4]
			m[0], m[1], m[2], m[3] = a, b, e, f
			acc[bits.OnesCount(uint(s))&1] += float64(a*b*e*f) - float64(min2(a, p0)*min2(b, p1)*min2(e, p2)*min2(f, p3))
		}
	case 5:
		p0, p1, p2, p3, p4 := pts[0], pts[1], pts[2], pts[3], pts[4]
		acc[1] = p0 * p1 * p2 * p3 * p4
		for s := 2; s < full; s += 2 {
			low := bits.TrailingZeros(uint(s))
			p := pts[5*low : 5*low+5]
			a, b, e, f, g := p[0], p[1], p[2], p[3], p[4]
			if r := s & (s - 1); r != 0 {
				q := mins[5*r : 5*r+5]
				a, b, e, f, g = min2(q[0], a), min2(q[1], b), min2(q[2], e), min2(q[3], f), min2(q[4], g)
			}
			m := mins[5*s : 5*s+5]
			m[0], m[1], m[2], m[3], m[4] = a, b, e, f, g
			acc[bits.OnesCount(uint(s))&1] += float64(a*b*e*f*g) - float64(min2(a, p0)*min2(b, p1)*min2(e, p2)*min2(f, p3)*min2(g, p4))
		}
	default:
		p0 := pts[:d]
		acc[1] = product(p0)
		for s := 2; s < full; s += 2 {
			low := bits.TrailingZeros(uint(s))
			m, p := mins[d*s:d*s+d], pts[d*low:d*low+d]
			copy(m, p)
			if r := s & (s - 1); r != 0 {
				q := mins[d*r : d*r+d]
				for j := range m {
					m[j] = min2(q[j], m[j])
				}
			}
			v, w := 1.0, 1.0
			for j, x := range m {
				v *= x
				w *= min2(x, p0[j])
			}
			acc[bits.OnesCount(uint(s))&1] += v - w
		}
	}
	// acc[1] holds the pairs whose s has odd size ({point 0} counts as
	// such), which enter with sign +, acc[0] the others.
	return acc[1] - acc[0]
}

// min2 is min for values known not to be NaN, without the NaN handling of
// the builtin.
func min2(a, b float64) float64 {
	if a < b {
		return a
	}
	return b
}
