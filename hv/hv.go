// Package hv computes the exact dominated hypervolume of finite point sets
// under maximisation, and the subset-selection problems built on it: the
// marginal contribution of a point, greedy and lazy-greedy size-k selection,
// and the exact best size-k subset.
//
// A point p dominates the box [r_1, p_1] × … × [r_d, p_d] above the
// reference point r; the hypervolume of a set is the Lebesgue measure of the
// union of its boxes. Points that are not strictly above r in every
// coordinate dominate nothing. A nil reference point means the origin.
//
// Volume is exact for every dimension d and every number of points n; the
// method depends on both:
//
//   - d = 1: the largest coordinate;
//   - d = 2: a sweep over the points by decreasing first coordinate,
//     O(n log n);
//   - d ≥ 3 and n ≤ 6: inclusion–exclusion over the 2^n − 1 subsets, each
//     corner computed from the corner of the subset without its lowest
//     point (the hot path of bandit slates);
//   - d = 3: a sweep by decreasing third coordinate that keeps the 2-D front
//     of the points seen so far as a staircase in a 64-ary bit tree over the
//     ranks of the first coordinate, O(n log n);
//   - d = 4: HV4D+ (Guerreiro and Fonseca, 2018): a sweep by decreasing
//     fourth coordinate that keeps the 3-D front of the points seen so far
//     as a list with, for each point, its two outer delimiters, and adds the
//     3-D contribution of each new point in time linear in the front, O(n²);
//   - d ≥ 5: the WFG algorithm (While, Bradstreet and Barone, 2012): the
//     volume is a sum over the points, by decreasing last coordinate, of the
//     (d−1)-dimensional volume each adds to the points before it, computed
//     as its box minus the volume of those points limited by it, recursively;
//     at d − 1 = 4 the contribution is measured directly by the HV4D+ sweep.
//     The coordinate orders of every limited set are the global ones, so
//     nothing is sorted below the top level.
//
// Coordinates are expected to be finite; a point with a NaN coordinate
// dominates nothing. Inputs are never modified. The package-level functions
// take their scratch space from a pool and do not allocate in steady state;
// a Calculator holds its own.
package hv

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sync"
)

var pool = sync.Pool{New: func() any { return new(Calculator) }}

// Volume returns the exact hypervolume dominated by points with respect to
// ref (nil means the origin). All points must have len(ref) coordinates, or
// as many as the first point if ref is nil; Volume panics otherwise.
func Volume(points [][]float64, ref []float64) float64 {
	c := pool.Get().(*Calculator)
	v := c.Volume(points, ref)
	pool.Put(c)
	return v
}

// Contribution returns HV(set ∪ {p}) − HV(set), the volume that p adds to
// set. It is computed as the volume of the box of p minus the hypervolume of
// {min(p, q) : q ∈ set}, and is exactly 0 when some point of set weakly
// dominates p or when p is not strictly above ref.
func Contribution(p []float64, set [][]float64, ref []float64) float64 {
	c := pool.Get().(*Calculator)
	v := c.Contribution(p, set, ref)
	pool.Put(c)
	return v
}

// NonDominated returns the indices, in increasing order, of the points that
// no other point strictly Pareto-dominates under maximisation (q dominates p
// when q ≥ p in every coordinate and q ≠ p). Of several identical points only
// the one with the lowest index is kept. A point with a NaN coordinate
// neither dominates nor is dominated, and is kept.
func NonDominated(points [][]float64) []int {
	order := make([]int, 0, len(points))
	var out []int
	for i, p := range points {
		if hasNaN(p) {
			out = append(out, i)
		} else {
			order = append(order, i)
		}
	}
	// A point can only be dominated by (or equal to) a point that comes no
	// later in decreasing lexicographic order, and domination is
	// transitive, so comparing each point with the survivors before it is
	// enough. Equal points sort by index, so the lowest one survives.
	slices.SortFunc(order, func(a, b int) int {
		pa, pb := points[a], points[b]
		for j := range pa {
			if c := cmp.Compare(pb[j], pa[j]); c != 0 {
				return c
			}
		}
		return cmp.Compare(a, b)
	})
	front := make([]int, 0, len(order))
	for _, i := range order {
		p := points[i]
		dominated := false
		for _, f := range front {
			if weaklyDominates(points[f], p) {
				dominated = true
				break
			}
		}
		if !dominated {
			front = append(front, i)
		}
	}
	out = append(out, front...)
	slices.Sort(out)
	return out
}

// weaklyDominates reports whether q ≥ p in every coordinate.
func weaklyDominates(q, p []float64) bool {
	for j := range p {
		if !(q[j] >= p[j]) {
			return false
		}
	}
	return true
}

func hasNaN(p []float64) bool {
	for _, x := range p {
		if math.IsNaN(x) {
			return true
		}
	}
	return false
}

// dimension returns the dimension implied by ref, or by the first point when
// ref is nil, and panics on a point of another dimension.
func dimension(points [][]float64, ref []float64) int {
	d := len(ref)
	if ref == nil {
		if len(points) == 0 {
			return 0
		}
		d = len(points[0])
	}
	for i, p := range points {
		if len(p) != d {
			panic(fmt.Sprintf("hv: point %d has %d coordinates, want %d", i, len(p), d))
		}
	}
	return d
}

// boxVolume returns the volume of the box between ref (nil: origin) and p,
// or 0 if p is not strictly above ref.
func boxVolume(p, ref []float64) float64 {
	v := 1.0
	for j, x := range p {
		if ref != nil {
			x -= ref[j]
		}
		if !(x > 0) {
			return 0
		}
		v *= x
	}
	return v
}
