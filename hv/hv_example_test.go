package hv_test

import (
	"fmt"

	"thv/hv"
)

// The hypervolume of a 2-D front of three points, above the origin: the
// area of the union of the boxes [0, 1]×[0, 3], [0, 2]×[0, 2] and
// [0, 3]×[0, 1].
func ExampleVolume() {
	front := [][]float64{{1, 3}, {2, 2}, {3, 1}}
	fmt.Println(hv.Volume(front, nil))
	// Output: 6
}

// With a reference point r, each box starts at r, and a point not strictly
// above r in every coordinate dominates nothing: here the boxes of the
// first two points, 0.65×0.25×0.15 and 0.25×0.65×0.35, overlap in
// 0.25×0.25×0.15, and the third point adds nothing.
func ExampleVolume_reference() {
	points := [][]float64{{0.9, 0.5, 0.4}, {0.5, 0.9, 0.6}, {0.2, 0.2, 0.2}}
	fmt.Printf("%.4f\n", hv.Volume(points, []float64{0.25, 0.25, 0.25}))
	// Output: 0.0719
}

// The best slate of two points, exactly and greedily: greedy takes the
// largest box first, (2.5, 2.5), and so misses the best pair, whose
// hypervolume is 5 + 5 − 1 = 9.
func ExampleBestSubset() {
	points := [][]float64{{5, 1}, {1, 5}, {2.5, 2.5}}
	best, v := hv.BestSubset(points, 2, nil)
	fmt.Println("best:", best, v)
	greedy := hv.Greedy(points, 2, nil)
	fmt.Println("greedy:", greedy, hv.Volume([][]float64{points[greedy[0]], points[greedy[1]]}, nil))
	// Output:
	// best: [0 1] 9
	// greedy: [2 0] 8.75
}
