package render

import (
	"math"
	"testing"
)

func closeTo(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Max(1, math.Abs(b)) }

func TestMovingAverage(t *testing.T) {
	x := []float64{1, 2, 3, 4, 10}
	// window 3: [1], [1,2], [1,2,3], [2,3,4], [3,4,10]
	want := []float64{1, 1.5, 2, 3, 17.0 / 3}
	got := MovingAverage(x, 3)
	if len(got) != len(want) {
		t.Fatalf("len %d, want %d", len(got), len(want))
	}
	for i := range want {
		if !closeTo(got[i], want[i]) {
			t.Errorf("MA3[%d] = %v, want %v", i, got[i], want[i])
		}
	}
	// window 1 (and ≤ 0) is the identity; a window longer than x is the
	// running mean.
	for _, w := range []int{1, 0} {
		for i, v := range MovingAverage(x, w) {
			if v != x[i] {
				t.Errorf("MA%d[%d] = %v, want %v", w, i, v, x[i])
			}
		}
	}
	run := []float64{1, 1.5, 2, 2.5, 4}
	for i, v := range MovingAverage(x, 50) {
		if !closeTo(v, run[i]) {
			t.Errorf("MA50[%d] = %v, want %v", i, v, run[i])
		}
	}
	if got := MovingAverage(nil, 3); len(got) != 0 {
		t.Errorf("MA of empty = %v", got)
	}
	x[0] = 99 // the output must not alias the input
	if got[0] != 1 {
		t.Error("MovingAverage aliases its input")
	}
}
