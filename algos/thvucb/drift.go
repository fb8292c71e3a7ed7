package thvucb

import "math"

// Drift bounds: how much an arm's gain given a fixed set S can have grown
// since an earlier round. The gain of u_i given S grows with u_i and shrinks
// with every u_s, s ∈ S; ∂gain/∂u_ic is at most the face area
// Π_{l≠c}(u_il − r_l) of u_i's box, and |∂gain/∂u_sc| at most that of u_s's
// box. Moving u_s along the straight line from its old value to its new one
// (u_i held fixed), then u_i, bounds the growth by
//
//	Σ_{s∈S} Σ_c fall_sc · face_c(max(old u_s, new u_s))   (see fallOf)
//	+ the rise of u_i, weighted the same way               (see riseBound)
//
// Both are inflated by a relative 1e-12 so that rounding never makes them
// too small.

// faces sets face[c] = Π_{l≠c} max(0, max(a_l, b_l) − r_l) without divisions.
// Each side is computed once (up to 16 coordinates; the products are the
// same either way, in the same order).
func faces(face, a, b, ref []float64) {
	switch len(a) { // the paper's dimensions, unrolled
	case 2:
		faces2(face, a, b, ref)
		return
	case 3:
		faces3(face, a, b, ref)
		return
	case 4:
		faces4(face, a, b, ref)
		return
	case 5:
		faces5(face, a, b, ref)
		return
	}
	var buf [16]float64
	if len(a) > len(buf) {
		facesLoop(face, a, b, ref)
		return
	}
	side := buf[:len(a)]
	for c := range side {
		side[c] = max(0, max(a[c], b[c])-ref[c])
	}
	acc := 1.0
	for c, x := range side {
		face[c] = acc
		acc *= x
	}
	acc = 1
	for c := len(side) - 1; c >= 0; c-- {
		face[c] *= acc
		acc *= side[c]
	}
}

// side is max(0, max(a_c, b_c) − r_c), a side of faces' box.
func side(a, b, r float64) float64 { return max(0, max(a, b)-r) }

// faces2 to faces5 are faces for d = 2 to 5: face_c is the product of
// the sides before c, taken left to right, times the product of those
// after c, taken right to left, as faces' two passes form them (a factor
// of 1 is left out: multiplying by 1 is exact).
func faces2(face, a, b, ref []float64) {
	face, a, b, ref = face[:2], a[:2], b[:2], ref[:2]
	s0, s1 := side(a[0], b[0], ref[0]), side(a[1], b[1], ref[1])
	face[0], face[1] = s1, s0
}

func faces3(face, a, b, ref []float64) {
	face, a, b, ref = face[:3], a[:3], b[:3], ref[:3]
	s0, s1, s2 := side(a[0], b[0], ref[0]), side(a[1], b[1], ref[1]), side(a[2], b[2], ref[2])
	face[0], face[1], face[2] = s2*s1, s0*s2, s0*s1
}

func faces4(face, a, b, ref []float64) {
	face, a, b, ref = face[:4], a[:4], b[:4], ref[:4]
	s0, s1, s2, s3 := side(a[0], b[0], ref[0]), side(a[1], b[1], ref[1]), side(a[2], b[2], ref[2]), side(a[3], b[3], ref[3])
	p2, q2 := s0*s1, s3*s2 // the products of the sides before 2, after 1
	face[0], face[1], face[2], face[3] = q2*s1, s0*q2, p2*s3, p2*s2
}

func faces5(face, a, b, ref []float64) {
	face, a, b, ref = face[:5], a[:5], b[:5], ref[:5]
	s0, s1, s2, s3, s4 := side(a[0], b[0], ref[0]), side(a[1], b[1], ref[1]), side(a[2], b[2], ref[2]), side(a[3], b[3], ref[3]), side(a[4], b[4], ref[4])
	p2 := s0 * s1 // the sides before 2
	p3 := p2 * s2 // before 3
	q3 := s4 * s3 // after 2
	q2 := q3 * s2 // after 1
	face[0], face[1], face[2], face[3], face[4] = q2*s1, s0*q2, p2*q3, p3*s4, p3*s3
}

// facesLoop is faces computing each side twice, for any dimension.
func facesLoop(face, a, b, ref []float64) {
	acc := 1.0
	for c := range a {
		face[c] = acc
		acc *= max(0, max(a[c], b[c])-ref[c])
	}
	acc = 1
	for c := len(a) - 1; c >= 0; c-- {
		face[c] *= acc
		acc *= max(0, max(a[c], b[c])-ref[c])
	}
}

// fallOf bounds how much any gain given a set containing s can have grown
// while u_s moved from old to now: Σ_c max(0, old_c − now_c) · face_c.
func fallOf(face, now, old, ref []float64) float64 {
	fell := false
	for c := range now {
		fell = fell || now[c] < old[c]
	}
	if !fell {
		return 0
	}
	faces(face, now, old, ref)
	var s float64
	for c := range now {
		s += float64(max(0, old[c]-now[c]) * face[c])
	}
	return s * (1 + 1e-12)
}

// riseOf is fallOf's twin for the coordinates that rose.
func riseOf(face, now, old, ref []float64) float64 {
	faces(face, now, old, ref)
	var s float64
	for c := range now {
		s += float64(max(0, now[c]-old[c]) * face[c])
	}
	return s * (1 + 1e-12)
}

// riseBound keeps, for every arm, a potential R_i(t) such that for any two
// Selects r < t the rise of u_i between them raises any gain of arm i by at
// most R_i(t) − R_i(r). It costs nothing per round for the arms that were
// not played: between two pulls the mean and count of arm i are fixed, so
// each coordinate of u_i rises by at most (√c_t − √c_r)/√N_i (clipping only
// lowers it; c_t = 2η log(n d t²/δ) grows with t), and the face areas stay
// below those at u_i's value at the horizon, clip(μ̂_i + √(c_H/N_i)). So
// within such an epoch R_i(t) = a_i + w_i·√c_t with
// w_i = Σ_c face_c(u_i at the horizon)/√N_i. When the arm's statistics
// change (it was played), the jump from last Select's u_i is added by riseOf
// and a new epoch starts.
//
// The potentials also bound how far an arm's UCB box has risen since its
// UCB vector was last computed (Policy.boxes), which is what lets Select
// leave most vectors uncomputed.
type riseBound struct {
	horizon  int       // H: the epochs' weights hold for t ≤ H
	now      []float64 // R_i(t) at the current Select
	largest  float64   // a bound on max_i |R_i(t)|
	maxA     float64   // max |a_i| and max w_i over all epochs so far
	maxW     float64
	a, w     []float64
	count    []int   // N_i when the epoch started; −1: no epoch yet
	cH       float64 // c at the horizon, computed in update when an epoch first needs it
	face, hi []float64
}

func (r *riseBound) init(n, d, T int) {
	r.horizon = T
	r.now, r.a, r.w = make([]float64, n), make([]float64, n), make([]float64, n)
	r.count = make([]int, n)
	for i := range r.count {
		r.count[i] = -1
	}
	r.face, r.hi = make([]float64, d), make([]float64, d)
}

// update sets now[i] = R_i(t) for every arm at the Select of round t = p.t
// (c = p.c), and computes the UCB vectors of the arms whose statistics
// changed since the last one (and of all arms when the epochs restart).
func (r *riseBound) update(p *Policy) {
	t := p.t
	restart := false
	if t > r.horizon {
		// Past the horizon the weights no longer bound the faces: start
		// every epoch again with a horizon far enough ahead.
		r.horizon = 2 * t
		restart = true
	}
	n := p.prob.N
	sqrtC := math.Sqrt(p.c)
	r.cH = -1
	count, now, a, w := p.Count[:n], r.now[:n], r.a[:n], r.w[:n]
	for i, ci := range r.count[:n] {
		if count[i] == ci && !restart {
			now[i] = a[i] + float64(w[i]*sqrtC)
		} else {
			r.newEpoch(p, i, sqrtC)
		}
	}
	r.largest = r.maxA + float64(r.maxW*sqrtC)
}

// newEpoch starts a new epoch of arm i at the current Select, whose
// √c_t is sqrtC, and computes u_i.
func (r *riseBound) newEpoch(p *Policy, i int, sqrtC float64) {
	ref := p.prob.Ref
	// Add the jump from last Select's u_i, if any. The u_i kept has the
	// statistics of last Select (each Select recomputes the arms whose
	// statistics changed) but may have been computed in an earlier round,
	// if greedy did not look at the arm then. Within those statistics u_i
	// only rose since (the radius grows), and gains only grow with u_i, so
	// the jump from the kept u_i bounds the jump from last Select's.
	if r.count[i] >= 0 {
		copy(p.old, p.upper[i])
		p.compute(i)
		r.now[i] += riseOf(r.face, p.upper[i], p.old, ref)
	} else {
		p.compute(i)
	}
	if r.cH < 0 {
		r.cH = width(p.eta, p.prob.N, p.prob.D, r.horizon, p.delta)
	}
	bH := radius(r.cH, p.Count[i])
	for j, m := range p.Mean[i] {
		r.hi[j] = p.ucb(m, bH)
	}
	faces(r.face, r.hi, r.hi, ref)
	var sum float64
	for _, f := range r.face {
		sum += f
	}
	r.w[i] = sum / math.Sqrt(float64(max(1, p.Count[i]))) * (1 + 1e-12)
	r.a[i] = r.now[i] - float64(r.w[i]*sqrtC)
	r.count[i] = p.Count[i]
	p.riseAt[i] = r.now[i]
	r.maxA = max(r.maxA, math.Abs(r.a[i]))
	r.maxW = max(r.maxW, r.w[i])
}
