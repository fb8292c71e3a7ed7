package render

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

func TestMeanCIBand(t *testing.T) {
	hv := [][]float64{
		{1, 0.5, 2},
		{2, 0.5, 4},
		{3, 0.5, 9},
	}
	mean, lo, hi := MeanCIBand(hv, 0.95)
	// By hand: n = 3, t_{0.975, 2} = 4.302652729749464.
	// round 1: mean 2, sd 1 → half = 4.302652729749464/√3.
	// round 2: mean 0.5, sd 0 → half 0.
	// round 3: mean 5, deviations −3, −1, 4 → var 26/2 = 13 → half = t·√13/√3.
	const t975 = 4.302652729749464
	if q := (distuv.StudentsT{Mu: 0, Sigma: 1, Nu: 2}).Quantile(0.975); math.Abs(q-t975) > 1e-9 {
		t.Fatalf("t quantile %v, want %v", q, t975)
	}
	wantMean := []float64{2, 0.5, 5}
	wantHalf := []float64{t975 / math.Sqrt(3), 0, t975 * math.Sqrt(13) / math.Sqrt(3)}
	for i := range wantMean {
		if !closeTo(mean[i], wantMean[i]) {
			t.Errorf("mean[%d] = %v, want %v", i, mean[i], wantMean[i])
		}
		if math.Abs(lo[i]-(wantMean[i]-wantHalf[i])) > 1e-9 || math.Abs(hi[i]-(wantMean[i]+wantHalf[i])) > 1e-9 {
			t.Errorf("band[%d] = [%v, %v], want %v ± %v", i, lo[i], hi[i], wantMean[i], wantHalf[i])
		}
	}
	// One seed: the band collapses to the mean.
	m1, l1, h1 := MeanCIBand([][]float64{{1, 2}}, 0.95)
	for i := range m1 {
		if l1[i] != m1[i] || h1[i] != m1[i] {
			t.Errorf("single seed band[%d] = [%v, %v], mean %v", i, l1[i], h1[i], m1[i])
		}
	}
	// Bad input: nil.
	for name, in := range map[string][][]float64{
		"empty":  nil,
		"ragged": {{1, 2}, {1}},
		"norow":  {{}},
	} {
		if m, l, h := MeanCIBand(in, 0.95); m != nil || l != nil || h != nil {
			t.Errorf("%s: got %v %v %v, want nil", name, m, l, h)
		}
	}
	if m, _, _ := MeanCIBand(hv, 1); m != nil {
		t.Error("level 1 accepted")
	}
}
