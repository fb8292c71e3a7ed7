package stats

import (
	"math"
	"testing"
)

func TestCohensDAgainstNumPy(t *testing.T) {
	fx := loadPairedFixtures(t)
	for _, c := range fx.Cases {
		got := PairedCohensD(c.D)
		if c.CohensD != nil {
			if !closeRel(got, *c.CohensD, 1e-12) {
				t.Errorf("%s: Cohen's d = %v, NumPy %v", c.Name, got, *c.CohensD)
			}
			continue
		}
		// NumPy gives inf or nan; thv's documented choice: ±Inf by the sign
		// of the mean, 0 when the mean is 0.
		var want float64
		switch {
		case c.MeanD > 0:
			want = math.Inf(1)
		case c.MeanD < 0:
			want = math.Inf(-1)
		}
		if got != want {
			t.Errorf("%s: Cohen's d = %v, want %v (NumPy: %s)", c.Name, got, want, c.NonFinD)
		}
	}
}

func TestComparePairedAgainstFixtures(t *testing.T) {
	fx := loadPairedFixtures(t)
	withAB := 0
	for _, c := range fx.Cases {
		a, b := c.A, c.B
		if a == nil { // a − 0 == a exactly
			a, b = c.D, make([]float64, len(c.D))
		} else {
			withAB++
			for i := range a {
				if a[i]-b[i] != c.D[i] {
					t.Fatalf("%s: a−b differs from NumPy's at %d", c.Name, i)
				}
			}
		}
		got, err := ComparePaired(a, b, 2000, 1, 0.95)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		scale := 0.0
		for _, x := range c.D {
			scale = math.Max(scale, math.Abs(x))
		}
		if got.N != len(c.D) || got.Wins != c.Wins || math.Abs(got.Delta-c.MeanD) > 1e-12*math.Abs(c.MeanD)+1e-15*scale {
			t.Errorf("%s: N %d Wins %d Delta %v, NumPy: %d %d %v", c.Name, got.N, got.Wins, got.Delta, len(c.D), c.Wins, c.MeanD)
		}
		if p, m := WilcoxonSignedRank(c.D); got.WilcoxonP != p || got.WilcoxonMethod != m || got.CohensD != PairedCohensD(c.D) {
			t.Errorf("%s: ComparePaired disagrees with the functions it wraps: %+v", c.Name, got)
		}
		if math.IsNaN(got.CILow) || math.IsNaN(got.CIHigh) || got.CILow > got.CIHigh {
			t.Errorf("%s: CI [%v, %v]", c.Name, got.CILow, got.CIHigh)
		}
	}
	if withAB == 0 {
		t.Fatal("no fixture given as a, b")
	}
}

func TestComparePairedEdgeCases(t *testing.T) {
	same := []float64{0.5, 0.6, 0.7}
	c, err := ComparePaired(same, same, 1000, 1, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	if c.N != 3 || c.Delta != 0 || c.CohensD != 0 || c.WilcoxonP != 1 || c.Wins != 0 || c.CILow != 0 || c.CIHigh != 0 || methodKind(c.WilcoxonMethod) != "none" {
		t.Fatalf("identical runs: %+v", c)
	}
	c, err = ComparePaired([]float64{0.9}, []float64{0.5}, 1000, 1, 0.95)
	if err != nil || c.N != 1 || c.Wins != 1 || !math.IsInf(c.CohensD, 1) || c.WilcoxonP != 0.5 || c.CILow != 0.9-0.5 || c.CIHigh != c.CILow {
		t.Fatalf("n = 1: %+v, %v", c, err)
	}
	c, err = ComparePaired([]float64{0.5}, []float64{0.9}, 1000, 1, 0.95)
	if err != nil || c.Wins != 0 || !math.IsInf(c.CohensD, -1) || c.WilcoxonP != 1 {
		t.Fatalf("n = 1, lost: %+v, %v", c, err)
	}
	// Every |d| tied, mixed signs: defined, nothing NaN.
	c, err = ComparePaired([]float64{1, 1, 0, 0}, []float64{0, 0, 1, 1}, 100, 1, 0.95)
	if err != nil || c.WilcoxonP != 0.5 || c.CohensD != 0 || c.Wins != 2 || c.Delta != 0 || math.IsNaN(c.CILow) || math.IsNaN(c.CIHigh) {
		t.Fatalf("all ties: %+v, %v", c, err)
	}
	// THV-UCB better by the same amount on every seed.
	c, err = ComparePaired([]float64{0.75, 0.5, 0.25}, []float64{0.5, 0.25, 0}, 100, 1, 0.95)
	if err != nil || !math.IsInf(c.CohensD, 1) || c.CILow != 0.25 || c.CIHigh != 0.25 || c.Wins != 3 {
		t.Fatalf("constant gain: %+v, %v", c, err)
	}
	for _, tc := range []struct {
		name  string
		a, b  []float64
		B     int
		level float64
	}{
		{"different lengths", []float64{1}, []float64{1, 2}, 10, 0.95},
		{"no pairs", nil, nil, 10, 0.95},
		{"NaN", []float64{1, math.NaN()}, []float64{1, 2}, 10, 0.95},
		{"Inf", []float64{1, math.Inf(1)}, []float64{1, 2}, 10, 0.95},
		{"no resamples", []float64{1, 2}, []float64{0, 0}, 0, 0.95},
		{"level 1", []float64{1, 2}, []float64{0, 0}, 10, 1},
		{"level NaN", []float64{1, 2}, []float64{0, 0}, 10, math.NaN()},
	} {
		if _, err := ComparePaired(tc.a, tc.b, tc.B, 1, tc.level); err == nil {
			t.Errorf("%s accepted", tc.name)
		}
	}
}
