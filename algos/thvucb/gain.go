package thvucb

// terms holds the inclusion–exclusion terms of the slate S chosen so far: for
// every non-empty T ⊆ S, the corner min_{s∈T} u_s (flattened, d each) and the
// sign (−1)^{|T|+1}. The gain of u given S is
// box(u) − Σ_T sign_T · box(min(u, corner_T)).
type terms struct {
	d       int
	ref     []float64
	corners []float64
	signs   []float64
}

func (ts *terms) init(d int, ref []float64) { ts.d, ts.ref = d, ref }

// reset empties S.
func (ts *terms) reset() { ts.corners, ts.signs = ts.corners[:0], ts.signs[:0] }

// add puts u into S: every existing term T gains a twin T ∪ {u}.
func (ts *terms) add(u []float64) {
	d := ts.d
	n := len(ts.signs)
	for t := 0; t < n; t++ {
		m := ts.corners[t*d : (t+1)*d]
		for j := range u {
			ts.corners = append(ts.corners, min(m[j], u[j]))
		}
		ts.signs = append(ts.signs, -ts.signs[t])
	}
	ts.corners = append(ts.corners, u...)
	ts.signs = append(ts.signs, 1)
}

// gain returns HV(S ∪ {u}) − HV(S) by inclusion–exclusion over the terms of
// S (2^|S| − 1 of them, 31 for |S| = 5). Each box is formed side by side in
// coordinate order and the terms are subtracted in a fixed order, so equal
// inputs give equal gains to the last bit, as greedy's ties require.
func (ts *terms) gain(u []float64) float64 {
	g := box(u, ts.ref)
	if ts.d == 5 {
		return ts.gain5(g, u)
	}
	return ts.gainLoop(g, u)
}

// gainLoop subtracts the terms from g = box(u) in the plain way, any d.
func (ts *terms) gainLoop(g float64, u []float64) float64 {
	ref, d := ts.ref, ts.d
	for t, sign := range ts.signs {
		m := ts.corners[t*d : (t+1)*d]
		v := 1.0
		for j := range u {
			c := min(u[j], m[j]) - ref[j]
			if !(c > 0) {
				v = 0
				break
			}
			v *= c
		}
		g -= sign * v
	}
	return g
}

// gain5 is gain for d = 5 (the paper's largest setting), unrolled: about 30%
// faster, the same values to the last bit (TestGainBitIdentical).
func (ts *terms) gain5(g float64, u []float64) float64 {
	u0, u1, u2, u3, u4 := u[0], u[1], u[2], u[3], u[4]
	r := ts.ref[:5]
	r0, r1, r2, r3, r4 := r[0], r[1], r[2], r[3], r[4]
	corners := ts.corners[:len(ts.signs)*5]
	for t, sign := range ts.signs {
		m := corners[t*5 : t*5+5 : t*5+5]
		c0 := min(u0, m[0]) - r0
		c1 := min(u1, m[1]) - r1
		c2 := min(u2, m[2]) - r2
		c3 := min(u3, m[3]) - r3
		c4 := min(u4, m[4]) - r4
		if c0 > 0 && c1 > 0 && c2 > 0 && c3 > 0 && c4 > 0 {
			g -= sign * ((((c0 * c1) * c2) * c3) * c4)
		}
	}
	return g
}

// Gain returns the optimistic marginal gain HV(S ∪ {u}) − HV(S) of the
// current greedy step.
func (p *Policy) Gain(u []float64) float64 { return p.ie.gain(u) }
