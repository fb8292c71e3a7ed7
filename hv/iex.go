package hv

import "math/bits"

// iex measures n points (stride d, coordinates > 0) by inclusion–exclusion:
// HV = Σ over non-empty subsets T of (−1)^(|T|+1) · vol(min T). The corner
// min T is computed from the corner of T without its lowest point, so each
// of the 2^n − 1 terms costs d minimums and d products.
func (c *Calculator) iex(pts []float64, n, d int) float64 {
	full := 1 << n
	if cap(c.mins) < full*d {
		c.mins = make([]float64, full*d)
	}
	mins := c.mins[:full*d]
	var pos, neg float64
	switch d {
	case 3:
		for s := 1; s < full; s++ {
			low := bits.TrailingZeros(uint(s))
			m, p := mins[3*s:3*s+3], pts[3*low:3*low+3]
			var a, b, e float64
			if r := s & (s - 1); r == 0 {
				a, b, e = p[0], p[1], p[2]
			} else {
				q := mins[3*r : 3*r+3]
				a, b, e = min2(q[0], p[0]), min2(q[1], p[1]), min2(q[2], p[2])
			}
			m[0], m[1], m[2] = a, b, e
			if v := a * b * e; bits.OnesCount(uint(s))&1 == 1 {
				pos += v
			} else {
				neg += v
			}
		}
	case 4:
		for s := 1; s < full; s++ {
			low := bits.TrailingZeros(uint(s))
			m, p := mins[4*s:4*s+4], pts[4*low:4*low+4]
			var a, b, e, f float64
			if r := s & (s - 1); r == 0 {
				a, b, e, f = p[0], p[1], p[2], p[3]
			} else {
				q := mins[4*r : 4*r+4]
				a, b, e, f = min2(q[0], p[0]), min2(q[1], p[1]), min2(q[2], p[2]), min2(q[3], p[3])
			}
			m[0], m[1], m[2], m[3] = a, b, e, f
			if v := a * b * e * f; bits.OnesCount(uint(s))&1 == 1 {
				pos += v
			} else {
				neg += v
			}
		}
	case 5:
		for s := 1; s < full; s++ {
			low := bits.TrailingZeros(uint(s))
			m, p := mins[5*s:5*s+5], pts[5*low:5*low+5]
			var a, b, e, f, g float64
			if r := s & (s - 1); r == 0 {
				a, b, e, f, g = p[0], p[1], p[2], p[3], p[4]
			} else {
				q := mins[5*r : 5*r+5]
				a, b, e, f, g = min2(q[0], p[0]), min2(q[1], p[1]), min2(q[2], p[2]), min2(q[3], p[3]), min2(q[4], p[4])
			}
			m[0], m[1], m[2], m[3], m[4] = a, b, e, f, g
			if v := a * b * e * f * g; bits.OnesCount(uint(s))&1 == 1 {
				pos += v
			} else {
				neg += v
			}
		}
	default:
		for s := 1; s < full; s++ {
			low := bits.TrailingZeros(uint(s))
			m, p := mins[d*s:d*s+d], pts[d*low:d*low+d]
			v := 1.0
			if r := s & (s - 1); r == 0 {
				copy(m, p)
				for _, x := range p {
					v *= x
				}
			} else {
				q := mins[d*r : d*r+d]
				for j := range m {
					x := min2(q[j], p[j])
					m[j] = x
					v *= x
				}
			}
			if bits.OnesCount(uint(s))&1 == 1 {
				pos += v
			} else {
				neg += v
			}
		}
	}
	return pos - neg
}

// min2 is min for values known not to be NaN, without the NaN handling of
// the builtin.
func min2(a, b float64) float64 {
	if a < b {
		return a
	}
	return b
}
