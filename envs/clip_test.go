package envs

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestClip01: clip01 is min(1, max(0, x)) bit for bit, on ±0, ±Inf, NaN,
// 1 and its neighbours, and random values around [0, 1].
func TestClip01(t *testing.T) {
	xs := []float64{0, math.Copysign(0, -1), 1, math.Nextafter(1, 2), math.Nextafter(1, 0),
		math.SmallestNonzeroFloat64, -math.SmallestNonzeroFloat64, math.Inf(1), math.Inf(-1), math.NaN(), 0.5, -0.5, 2}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 10000 {
		xs = append(xs, rng.Float64()*1.4-0.2)
	}
	for _, x := range xs {
		if got, want := clip01(x), min(1, max(0, x)); math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("clip01(%v) = %v (%x), want %v (%x)", x, got, math.Float64bits(got), want, math.Float64bits(want))
		}
	}
}
