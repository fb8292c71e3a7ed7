package thvucb

import (
	"math"
	"slices"

	"thv/algos"
)

// terms holds the inclusion–exclusion terms of the slate S chosen so far: for
// every non-empty T ⊆ S, the corner min_{s∈T} u_s − r (flattened, d each)
// and the sign (−1)^{|T|+1}. The gain of u given S is
// box(u) − Σ_T sign_T · box(min(u, corner_T)).
//
// Corners are kept shifted by the reference point r: min(a − r, b − r) is
// min(a, b) − r to the last bit (rounding is monotone), so the gains are
// those of the plain formula, and the hot loop saves a subtraction per
// coordinate and per term.
type terms struct {
	d       int
	ref     []float64
	corners []float64
	bits    []uint64 // d ≥ 4: the corners' bit patterns (gain4's and gain5's minima)
	signs   []float64
	// positive: every corner is > 0 in every coordinate (every u added so
	// far is above r), so a term is 0 only if u itself is not above r.
	positive bool
	v        []float64 // scratch: u − r
}

func (ts *terms) init(d int, ref []float64) {
	ts.d, ts.ref, ts.v = d, ref, make([]float64, d)
	ts.reset()
}

// reset empties S.
func (ts *terms) reset() {
	ts.corners, ts.bits, ts.signs, ts.positive = ts.corners[:0], ts.bits[:0], ts.signs[:0], true
}

// shift returns u − r, in scratch valid until the next call.
func (ts *terms) shift(u []float64) []float64 {
	v := ts.v[:len(u)]
	for j, x := range u {
		v[j] = x - ts.ref[j]
	}
	return v
}

// add puts u into S: every existing term T gains a twin T ∪ {u}.
func (ts *terms) add(u []float64) {
	d := ts.d
	v := ts.shift(u)
	for _, x := range v {
		ts.positive = ts.positive && x > 0
	}
	n := len(ts.signs)
	corners := slices.Grow(ts.corners, (n+1)*d)[:(2*n+1)*d]
	signs := slices.Grow(ts.signs, n+1)[:2*n+1]
	if ts.positive && (d == 4 || d == 5) {
		ts.addPositive(v, n, corners, signs)
		return
	}
	for t := 0; t < n; t++ {
		m := corners[t*d : (t+1)*d]
		twin := corners[(n+t)*d : (n+t+1)*d]
		for j, x := range v {
			twin[j] = min(m[j], x)
		}
		signs[n+t] = -signs[t]
	}
	copy(corners[2*n*d:], v)
	signs[2*n] = 1
	ts.corners, ts.signs = corners, signs
	if d >= 4 { // gain4 and gain5 take the minima on the bit patterns
		bits := slices.Grow(ts.bits, (n+1)*d)[:(2*n+1)*d]
		for a, x := range corners[n*d:] {
			bits[n*d+a] = math.Float64bits(x)
		}
		ts.bits = bits
	}
}

// addPositive is add for d = 4, 5 when u and every corner are above r
// (positive): each twin's minima taken on the bit patterns, which for
// floats > 0 order as the values do, so the corners are add's to the
// bit, written with their bit patterns in one pass (TestAddBitIdentical).
func (ts *terms) addPositive(v []float64, n int, corners, signs []float64) {
	d := ts.d
	bits := slices.Grow(ts.bits, (n+1)*d)[:(2*n+1)*d]
	if d == 5 {
		v0, v1, v2, v3, v4 := math.Float64bits(v[0]), math.Float64bits(v[1]), math.Float64bits(v[2]), math.Float64bits(v[3]), math.Float64bits(v[4])
		for t := 0; t < n; t++ {
			m := bits[t*5 : t*5+5 : t*5+5]
			o := (n + t) * 5
			tw, c := bits[o:o+5:o+5], corners[o:o+5:o+5]
			b0, b1, b2, b3, b4 := min(m[0], v0), min(m[1], v1), min(m[2], v2), min(m[3], v3), min(m[4], v4)
			tw[0], tw[1], tw[2], tw[3], tw[4] = b0, b1, b2, b3, b4
			c[0], c[1], c[2], c[3], c[4] = math.Float64frombits(b0), math.Float64frombits(b1), math.Float64frombits(b2), math.Float64frombits(b3), math.Float64frombits(b4)
			signs[n+t] = -signs[t]
		}
	} else {
		v0, v1, v2, v3 := math.Float64bits(v[0]), math.Float64bits(v[1]), math.Float64bits(v[2]), math.Float64bits(v[3])
		for t := 0; t < n; t++ {
			m := bits[t*4 : t*4+4 : t*4+4]
			o := (n + t) * 4
			tw, c := bits[o:o+4:o+4], corners[o:o+4:o+4]
			b0, b1, b2, b3 := min(m[0], v0), min(m[1], v1), min(m[2], v2), min(m[3], v3)
			tw[0], tw[1], tw[2], tw[3] = b0, b1, b2, b3
			c[0], c[1], c[2], c[3] = math.Float64frombits(b0), math.Float64frombits(b1), math.Float64frombits(b2), math.Float64frombits(b3)
			signs[n+t] = -signs[t]
		}
	}
	copy(corners[2*n*d:], v)
	for j, x := range v {
		bits[2*n*d+j] = math.Float64bits(x)
	}
	signs[2*n] = 1
	ts.corners, ts.signs, ts.bits = corners, signs, bits
}

// gain returns HV(S ∪ {u}) − HV(S) by inclusion–exclusion over the terms of
// S (2^|S| − 1 of them, 31 for |S| = 5). Each box is formed side by side in
// coordinate order and the terms are subtracted in a fixed order, so equal
// inputs give equal gains to the last bit, as greedy's ties require.
func (ts *terms) gain(u []float64) float64 { return ts.gainFrom(box(u, ts.ref), u, 0) }

// gainFrom continues a gain: g is the running sum after the first from
// terms (box(u) for from = 0), and the terms from there on are subtracted.
// Terms are only ever appended (add), so the gain of u given a prefix of S
// continued over the terms S added since is the gain given S to the last
// bit: the same subtractions of the same values in the same order.
func (ts *terms) gainFrom(g float64, u []float64, from int) float64 {
	if from == len(ts.signs) {
		return g
	}
	switch ts.d {
	case 2:
		return ts.gain2(g, u, from)
	case 3:
		return ts.gain3(g, u, from)
	case 4:
		return ts.gain4(g, u, from)
	case 5:
		return ts.gain5(g, u, from)
	}
	return ts.gainLoop(g, u, from)
}

// gainLoop subtracts the terms from the from-th on from g in the plain
// way, any d.
func (ts *terms) gainLoop(g float64, u []float64, from int) float64 {
	d := ts.d
	v := ts.shift(u)
	for t := from; t < len(ts.signs); t++ {
		sign := ts.signs[t]
		m := ts.corners[t*d : (t+1)*d]
		b := 1.0
		for j, x := range v {
			c := min(x, m[j])
			if !(c > 0) {
				b = 0
				break
			}
			b *= c
		}
		g -= float64(sign * b)
	}
	return g
}

// gain5 is gainFrom for d = 5 (the paper's largest setting), unrolled: the
// same values as gainLoop to the last bit (TestGainBitIdentical).
func (ts *terms) gain5(g float64, u []float64, from int) float64 {
	r := ts.ref[:5]
	v0, v1, v2, v3, v4 := u[0]-r[0], u[1]-r[1], u[2]-r[2], u[3]-r[3], u[4]-r[4]
	if !(v0 > 0 && v1 > 0 && v2 > 0 && v3 > 0 && v4 > 0) {
		return g // every term is 0, as is g = box(u)
	}
	if !ts.positive {
		// Some corner is not above r (an arm clipped to the reference
		// point): the plain loop, which tests every term.
		return ts.gainLoop(g, u, from)
	}
	// Every corner and u are above r, so every minimum is > 0 and no term
	// needs the test: a third of the work per term.
	// For floats > 0 the order of the bit patterns, read as unsigned
	// integers, is that of the values, so the integer minimum is the float
	// one, to the bit, without the builtin's NaN and signed-zero handling
	// (five instructions a coordinate against two).
	b0, b1, b2, b3, b4 := math.Float64bits(v0), math.Float64bits(v1), math.Float64bits(v2), math.Float64bits(v3), math.Float64bits(v4)
	bits := ts.bits[from*5 : len(ts.signs)*5]
	for t, sign := range ts.signs[from:] {
		m := bits[t*5 : t*5+5 : t*5+5]
		c0 := math.Float64frombits(min(m[0], b0))
		c1 := math.Float64frombits(min(m[1], b1))
		c2 := math.Float64frombits(min(m[2], b2))
		c3 := math.Float64frombits(min(m[3], b3))
		c4 := math.Float64frombits(min(m[4], b4))
		g -= float64(sign * ((((c0 * c1) * c2) * c3) * c4))
	}
	return g
}

// gain2, gain3 and gain4 are gain5 for the paper's other settings (the
// d = 2, 3 ones are most of a reading's THV-UCB runs): the same values as
// gainLoop to the last bit (TestGainBitIdentical).
func (ts *terms) gain2(g float64, u []float64, from int) float64 {
	r := ts.ref[:2]
	v0, v1 := u[0]-r[0], u[1]-r[1]
	if !(v0 > 0 && v1 > 0) {
		return g
	}
	if !ts.positive {
		return ts.gainLoop(g, u, from)
	}
	corners := ts.corners[from*2 : len(ts.signs)*2]
	for t, sign := range ts.signs[from:] {
		m := corners[t*2 : t*2+2 : t*2+2]
		g -= float64(sign * (min(m[0], v0) * min(m[1], v1)))
	}
	return g
}

func (ts *terms) gain3(g float64, u []float64, from int) float64 {
	r := ts.ref[:3]
	v0, v1, v2 := u[0]-r[0], u[1]-r[1], u[2]-r[2]
	if !(v0 > 0 && v1 > 0 && v2 > 0) {
		return g
	}
	if !ts.positive {
		return ts.gainLoop(g, u, from)
	}
	corners := ts.corners[from*3 : len(ts.signs)*3]
	for t, sign := range ts.signs[from:] {
		m := corners[t*3 : t*3+3 : t*3+3]
		c0 := min(m[0], v0)
		c1 := min(m[1], v1)
		c2 := min(m[2], v2)
		g -= float64(sign * ((c0 * c1) * c2))
	}
	return g
}

func (ts *terms) gain4(g float64, u []float64, from int) float64 {
	r := ts.ref[:4]
	v0, v1, v2, v3 := u[0]-r[0], u[1]-r[1], u[2]-r[2], u[3]-r[3]
	if !(v0 > 0 && v1 > 0 && v2 > 0 && v3 > 0) {
		return g
	}
	if !ts.positive {
		return ts.gainLoop(g, u, from)
	}
	b0, b1, b2, b3 := math.Float64bits(v0), math.Float64bits(v1), math.Float64bits(v2), math.Float64bits(v3)
	bits := ts.bits[from*4 : len(ts.signs)*4]
	for t, sign := range ts.signs[from:] {
		m := bits[t*4 : t*4+4 : t*4+4]
		c0 := math.Float64frombits(min(m[0], b0))
		c1 := math.Float64frombits(min(m[1], b1))
		c2 := math.Float64frombits(min(m[2], b2))
		c3 := math.Float64frombits(min(m[3], b3))
		g -= float64(sign * (((c0 * c1) * c2) * c3))
	}
	return g
}

// errorScale bounds the rounding error of gain(u) (or a gain continued to
// the same terms) per unit of box(u): the gain is formed by subtracting
// m = len(signs) terms from box(u), each term a product of d sides formed
// with one rounding each, each at most box(u) (its box lies inside u's),
// and each partial sum at most (m + 1)·box(u) in magnitude.
func (ts *terms) errorScale() float64 {
	m := len(ts.signs)
	return algos.ErrorBound(2*ts.d+m+1, m+1)
}

// Gain returns the optimistic marginal gain HV(S ∪ {u}) − HV(S) of the
// current greedy step.
func (p *Policy) Gain(u []float64) float64 { return p.ie.gain(u) }
