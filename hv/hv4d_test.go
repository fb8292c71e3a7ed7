package hv

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// byLastDesc flattens pts (stride 4) in decreasing order of the last
// coordinate, with ties in random order: HV4D+ must not depend on it.
func byLastDesc(r *rand.Rand, pts [][]float64) []float64 {
	s := slices.Clone(pts)
	r.Shuffle(len(s), func(i, j int) { s[i], s[j] = s[j], s[i] })
	slices.SortStableFunc(s, func(a, b []float64) int {
		switch {
		case a[3] > b[3]:
			return -1
		case a[3] < b[3]:
			return 1
		}
		return 0
	})
	var flat []float64
	for _, p := range s {
		flat = append(flat, p...)
	}
	return flat
}

// fourDSets yields the sets of the HV4D+ tests: uniform points, points on a
// 5-value grid (exact ties in every coordinate, duplicates, and points that
// weakly dominate one another), concave fronts (nothing dominated), and sets
// whose last coordinate is one value (only the base level).
func fourDSets(r *rand.Rand, count int) [][][]float64 {
	var sets [][][]float64
	for it := range count {
		n := 1 + r.IntN(70)
		var pts [][]float64
		switch it % 4 {
		case 0:
			pts = randomSet(r, n, 4, 0.5, false)
		case 1:
			pts = randomSet(r, n, 4, 1, true)
		case 2:
			pts = concave(n, 4, uint64(it))
		case 3:
			pts = randomSet(r, n, 4, 1, it%8 == 3)
			for _, p := range pts {
				p[3] = 2
			}
		}
		sets = append(sets, pts)
	}
	return sets
}

// TestHV4D checks HV4D+ against HSO, an independent exact method.
func TestHV4D(t *testing.T) {
	r := rand.New(rand.NewPCG(44, 4))
	var c Calculator
	for i, pts := range fourDSets(r, 400) {
		want := hsoVolume(pts, nil)
		if got := c.hv4d(byLastDesc(r, pts), len(pts)); !close(got, want, 1e-12) {
			t.Fatalf("set %d (n=%d): hv4d %.17g, HSO %.17g\n%v", i, len(pts), got, want, pts)
		}
	}
}

// TestHV4DContribution checks the 4-D contribution of a point, measured
// directly, against the difference of two HSO volumes, including the cases
// where a point of the set covers t, where points equal t in three
// coordinates, and where every point is level with t or none is.
func TestHV4DContribution(t *testing.T) {
	r := rand.New(rand.NewPCG(45, 5))
	var c Calculator
	for i, set := range fourDSets(r, 600) {
		var p []float64
		switch i % 3 {
		case 0: // a point of the set, moved
			p = slices.Clone(set[r.IntN(len(set))])
			p[r.IntN(4)] += 0.5
		case 1: // a fresh point on the same scale
			p = randomSet(r, 1, 4, 1, i%2 == 0)[0]
		case 2: // the box of everything: nothing covers it
			p = []float64{6, 6, 6, 6}
		}
		limited := make([][]float64, len(set))
		for j, q := range set {
			limited[j] = []float64{min(q[0], p[0]), min(q[1], p[1]), min(q[2], p[2]), min(q[3], p[3])}
		}
		want := hsoVolume(append(slices.Clone(set), p), nil) - hsoVolume(set, nil)
		got := c.hv4dContribution(p, byLastDesc(r, limited), len(limited))
		if !close(got, want, 1e-10) && !(want < 1e-12 && got < 1e-12 && got > -1e-12) {
			t.Fatalf("set %d (n=%d): contribution %.17g, HSO %.17g\np=%v\nset=%v", i, len(set), got, want, p, set)
		}
	}
}

// TestHV4DScratch checks that one Calculator measures sets of changing sizes
// alike (the node slice is reused and must be fully reset).
func TestHV4DScratch(t *testing.T) {
	r := rand.New(rand.NewPCG(46, 6))
	var c Calculator
	for _, n := range []int{200, 5, 120, 1, 64} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			pts := randomSet(r, n, 4, 0.5, false)
			want := hsoVolume(pts, nil)
			if got := c.Volume(pts, nil); !close(got, want, 1e-12) {
				t.Fatalf("Volume %.17g, HSO %.17g", got, want)
			}
		})
	}
}
