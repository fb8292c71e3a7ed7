package stats

import (
	"math"
	"testing"
)

func TestMeanWithCIByHand(t *testing.T) {
	// n = 3, t_{0.975, 2} = 4.302652729749464 (tables).
	const t975 = 4.302652729749464
	if q := TCritical(3, 0.95); math.Abs(q-t975) > 1e-9 {
		t.Fatalf("TCritical(3, 0.95) = %v, want %v", q, t975)
	}
	// Mean 5, deviations −3, −1, 4: sample variance 26/2 = 13.
	got := MeanWithCI([]float64{2, 4, 9}, 0.95)
	want := t975 * math.Sqrt(13) / math.Sqrt(3)
	if got.N != 3 || got.Mean != 5 || math.Abs(got.HalfWidth-want) > 1e-9 {
		t.Fatalf("MeanWithCI = %+v, want 5 ± %v", got, want)
	}
	// Equal values: no width. A wider level: a wider interval.
	if c := MeanWithCI([]float64{0.5, 0.5, 0.5}, 0.95); c.Mean != 0.5 || c.HalfWidth != 0 {
		t.Errorf("equal values: %+v", c)
	}
	if c := MeanWithCI([]float64{2, 4, 9}, 0.99); !(c.HalfWidth > got.HalfWidth) {
		t.Errorf("99%% interval %v not wider than 95%% %v", c.HalfWidth, got.HalfWidth)
	}
}

func TestMeanWithCIEdgeCases(t *testing.T) {
	if c := MeanWithCI(nil, 0.95); !math.IsNaN(c.Mean) || c.HalfWidth != 0 || c.N != 0 {
		t.Errorf("empty: %+v", c)
	}
	if c := MeanWithCI([]float64{0.7}, 0.95); c.Mean != 0.7 || c.HalfWidth != 0 || c.N != 1 {
		t.Errorf("one value: %+v", c)
	}
	for _, n := range []int{-1, 0, 1} {
		if q := TCritical(n, 0.95); q != 0 {
			t.Errorf("TCritical(%d) = %v, want 0", n, q)
		}
	}
}

// TestMeanWithCIAtIsMeanWithCI: the two entry points give the same bits.
func TestMeanWithCIAtIsMeanWithCI(t *testing.T) {
	xs := []float64{0.61, 0.642, 0.598, 0.655, 0.6, 0.633, 0.649, 0.62, 0.617, 0.641}
	for _, level := range []float64{0.5, 0.9, 0.95, 0.99} {
		a := MeanWithCI(xs, level)
		b := MeanWithCIAt(xs, TCritical(len(xs), level))
		if a != b {
			t.Errorf("level %v: %+v against %+v", level, a, b)
		}
	}
}
