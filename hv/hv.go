// Package hv computes the exact dominated hypervolume of finite point sets
// under maximisation, and the subset-selection problems built on it: the
// marginal contribution of a point, greedy and lazy-greedy size-k selection,
// and the exact best size-k subset.
//
// A point p dominates the box [r_1, p_1] × … × [r_d, p_d] above the
// reference point r; the hypervolume of a set is the Lebesgue measure of the
// union of its boxes. Points that are not strictly above r in every
// coordinate dominate nothing. A nil reference point means the origin.
package hv

import "sort"

// Volume returns the exact hypervolume dominated by points with respect to
// ref (nil means the origin). All points must have len(ref) coordinates.
func Volume(points [][]float64, ref []float64) float64 {
	if len(points) == 0 {
		return 0
	}
	d := len(points[0])
	r := refOrZero(ref, d)
	var pts [][]float64
	for _, p := range points {
		if strictlyAbove(p, r) {
			pts = append(pts, p)
		}
	}
	return slice(pts, r, d)
}

// slice is a plain recursive slicing algorithm (placeholder for the fast ones).
func slice(pts [][]float64, r []float64, d int) float64 {
	if len(pts) == 0 {
		return 0
	}
	if d == 1 {
		m := r[0]
		for _, p := range pts {
			if p[0] > m {
				m = p[0]
			}
		}
		return m - r[0]
	}
	s := append([][]float64(nil), pts...)
	sort.Slice(s, func(i, j int) bool { return s[i][d-1] > s[j][d-1] })
	var v float64
	for i := range s {
		next := r[d-1]
		if i+1 < len(s) {
			next = s[i+1][d-1]
		}
		if h := s[i][d-1] - next; h > 0 {
			v += h * slice(s[:i+1], r, d-1)
		}
	}
	return v
}

// Contribution returns HV(set ∪ {p}) − HV(set).
func Contribution(p []float64, set [][]float64, ref []float64) float64 {
	r := refOrZero(ref, len(p))
	if !strictlyAbove(p, r) {
		return 0
	}
	box := 1.0
	for j := range p {
		box *= p[j] - r[j]
	}
	lim := make([][]float64, 0, len(set))
	for _, q := range set {
		m := make([]float64, len(p))
		for j := range p {
			m[j] = min(p[j], q[j])
		}
		lim = append(lim, m)
	}
	return box - Volume(lim, r)
}

// Greedy selects k indices by repeatedly adding the point of largest
// marginal contribution; the lowest index wins ties.
func Greedy(points [][]float64, k int, ref []float64) []int {
	var sel []int
	var set [][]float64
	used := make([]bool, len(points))
	for len(sel) < k && len(sel) < len(points) {
		best, bv := -1, -1.0
		for i, p := range points {
			if used[i] {
				continue
			}
			if c := Contribution(p, set, ref); c > bv {
				best, bv = i, c
			}
		}
		used[best] = true
		sel = append(sel, best)
		set = append(set, points[best])
	}
	return sel
}

func refOrZero(ref []float64, d int) []float64 {
	if ref != nil {
		return ref
	}
	return make([]float64, d)
}

func strictlyAbove(p, r []float64) bool {
	for j := range r {
		if !(p[j] > r[j]) {
			return false
		}
	}
	return true
}
