// Package envs holds the bandit instances of the paper: the four synthetic
// Pareto-front geometries (linear, convex, concave, clusters), a noisy
// multi-objective bandit with common random numbers, and user instances
// loaded from CSV.
//
// Everything is deterministic: an instance depends only on (geometry, d, n,
// seed), and the noise of the j-th pull of arm i only on (seed, i, j), so
// every algorithm run on the same seed faces the same instance and the same
// noise (paired comparisons).
package envs

import (
	"fmt"
	"math"
	"slices"

	"thv/envs/fmath"
)

// Geometry names one of the paper's synthetic front shapes.
type Geometry string

// The four geometries of the paper's Synthetic Environments section.
const (
	Linear   Geometry = "linear"
	Convex   Geometry = "convex"
	Concave  Geometry = "concave"
	Clusters Geometry = "clusters"
)

// Geometries lists the geometries in the order the paper's tables print them.
var Geometries = []Geometry{Clusters, Concave, Convex, Linear}

// ParseGeometry validates a geometry name.
func ParseGeometry(s string) (Geometry, error) {
	for _, g := range Geometries {
		if string(g) == s {
			return g, nil
		}
	}
	return "", fmt.Errorf("unknown geometry %q (want one of clusters, concave, convex, linear)", s)
}

// Instance is a set of arms with known mean reward vectors.
type Instance struct {
	Means [][]float64 // Means[i] is the d-dimensional mean reward of arm i
	Front []bool      // Front[i] reports whether arm i was generated on the front (false: distractor or unknown)
}

// N returns the number of arms.
func (in *Instance) N() int { return len(in.Means) }

// D returns the number of objectives.
func (in *Instance) D() int {
	if len(in.Means) == 0 {
		return 0
	}
	return len(in.Means[0])
}

// FrontSize is the paper's n_front = max(10, ⌊0.35 n⌋), capped at n.
func FrontSize(n int) int {
	return min(n, max(10, int(math.Floor(0.35*float64(n)))))
}

// ShapeExponent returns the exponent α of the angular front formula.
func ShapeExponent(g Geometry) float64 {
	switch g {
	case Convex:
		return 0.5
	case Linear:
		return 2.0
	default: // concave, clusters
		return 1.0
	}
}

// LinearScale is the paper's rescale factor s = min(0.45 d, 2.5) for the linear front.
func LinearScale(d int) float64 { return math.Min(0.45*float64(d), 2.5) }

// Angle ranges of the two clusters, on the first angle θ_0.
var (
	clusterLow  = [2]float64{0, math.Pi / 5}
	clusterHigh = [2]float64{3 * math.Pi / 10, math.Pi / 2}
)

// FrontPoint maps d−1 angles to a point of the front with shape exponent
// alpha: x_i = (Π_{j<i} sin^α θ_j)·cos^α θ_i for i < d−1, and
// x_{d−1} = Π_{j<d−1} sin^α θ_j.
func FrontPoint(theta []float64, alpha float64, out []float64) {
	d := len(theta) + 1
	prod := 1.0
	for i := 0; i < d; i++ {
		if i < d-1 {
			out[i] = prod * fmath.Pow(fmath.Cos(theta[i]), alpha)
			prod *= fmath.Pow(fmath.Sin(theta[i]), alpha)
		} else {
			out[i] = prod
		}
	}
}

// Generate builds the paper's synthetic instance for geometry g with d
// objectives and n arms under the default Reading: FrontSize(n) arms on the
// front, the others distractors drawn uniformly in [0, 0.3]^d, all put in a
// random order, so that an arm's index carries no information (index order
// breaks ties in several algorithms).
func Generate(g Geometry, d, n int, seed uint64) (*Instance, error) {
	return GenerateWith(g, d, n, seed, Reading{})
}

// maxDistractorDraws bounds the resampling of one "dominated" distractor; a
// front that leaves almost all of [0, 0.3]^d undominated is an error, not
// a hang.
const maxDistractorDraws = 100000

// GenerateWith builds the synthetic instance under reading r. The default
// reading draws exactly what Generate always drew: a reading that is not
// asked for consumes no random numbers.
func GenerateWith(g Geometry, d, n int, seed uint64, r Reading) (*Instance, error) {
	if _, err := ParseGeometry(string(g)); err != nil {
		return nil, err
	}
	if d < 2 {
		return nil, fmt.Errorf("d = %d: the synthetic fronts need at least 2 objectives", d)
	}
	if n < 1 {
		return nil, fmt.Errorf("n = %d: need at least one arm", n)
	}
	r, err := r.Normalize()
	if err != nil {
		return nil, err
	}
	rng := NewStream(seed, "instance/"+string(g), uint64(d), uint64(n))
	alpha := ShapeExponent(g)
	nFront := FrontSize(n)
	means := make([][]float64, 0, n)
	front := make([]bool, 0, n)
	theta := make([]float64, d-1)
	for a := 0; a < nFront; a++ {
		high := a >= (nFront+1)/2 // halves: the first ⌈n_front/2⌉ in cluster 1
		if g == Clusters && r.ClusterSplit == "random" {
			high = rng.Float64() < 0.5
		}
		for j := range theta {
			theta[j] = rng.Float64() * math.Pi / 2
		}
		if g == Clusters {
			lo, hi := clusterLow[0], clusterLow[1]
			if high {
				lo, hi = clusterHigh[0], clusterHigh[1]
			}
			theta[0] = lo + float64(rng.Float64()*(hi-lo))
		}
		x := make([]float64, d)
		FrontPoint(theta, alpha, x)
		if g == Linear {
			s := LinearScale(d)
			for i := range x {
				x[i] = min(1, max(0.01, s*x[i]))
			}
		}
		means = append(means, x)
		front = append(front, true)
	}
	for a := nFront; a < n; a++ {
		x := make([]float64, d)
		for draw := 0; ; draw++ {
			if draw == maxDistractorDraws {
				return nil, fmt.Errorf("%s, d = %d, n = %d, seed %d: no distractor strictly dominated by the front in %d draws (distractors: dominated)", g, d, n, seed, draw)
			}
			for i := range x {
				x[i] = 0.3 * rng.Float64()
			}
			if r.Distractors != "dominated" || strictlyDominated(x, means[:nFront]) {
				break
			}
		}
		means = append(means, x)
		front = append(front, false)
	}
	if r.Order == "generated" {
		return &Instance{Means: means, Front: front}, nil
	}
	perm := rng.Perm(n)
	in := &Instance{Means: make([][]float64, n), Front: make([]bool, n)}
	for to, from := range perm {
		in.Means[to] = means[from]
		in.Front[to] = front[from]
	}
	return in, nil
}

// strictlyDominated reports whether some point of front is larger than x in
// every coordinate.
func strictlyDominated(x []float64, front [][]float64) bool {
	for _, f := range front {
		all := true
		for i := range x {
			if !(f[i] > x[i]) {
				all = false
				break
			}
		}
		if all {
			return true
		}
	}
	return false
}

// Validate checks that the instance is usable: at least one arm, equal
// dimensions, finite means in [0, 1].
func (in *Instance) Validate() error {
	if len(in.Means) == 0 {
		return fmt.Errorf("instance has no arms")
	}
	d := len(in.Means[0])
	if d < 1 {
		return fmt.Errorf("arm 0 has no coordinates")
	}
	for i, m := range in.Means {
		if len(m) != d {
			return fmt.Errorf("arm %d has %d coordinates, arm 0 has %d", i, len(m), d)
		}
		if slices.ContainsFunc(m, func(v float64) bool { return math.IsNaN(v) || v < 0 || v > 1 }) {
			return fmt.Errorf("arm %d: means must be finite and in [0, 1], got %v", i, m)
		}
	}
	if in.Front != nil && len(in.Front) != len(in.Means) {
		return fmt.Errorf("front mask has %d entries for %d arms", len(in.Front), len(in.Means))
	}
	return nil
}
