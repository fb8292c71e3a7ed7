package stages

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
)

// TestWilcoxonAndCohenAgainstSciPy checks every case of the SciPy fixtures
// (testdata/scipy_fixtures.json; provenance and command inside).
func TestWilcoxonAndCohenAgainstSciPy(t *testing.T) {
	b, err := os.ReadFile("testdata/scipy_fixtures.json")
	if err != nil {
		t.Fatal(err)
	}
	var fx struct {
		Provenance map[string]string
		Cases      []struct {
			Name    string
			D       []float64
			Method  string
			P       float64  `json:"wilcoxon_p"`
			CohensD *float64 `json:"cohens_d"`
		}
	}
	if err := json.Unmarshal(b, &fx); err != nil {
		t.Fatal(err)
	}
	if len(fx.Cases) < 10 || fx.Provenance["scipy"] == "" {
		t.Fatalf("fixtures incomplete: %d cases, provenance %v", len(fx.Cases), fx.Provenance)
	}
	for _, c := range fx.Cases {
		p, method := WilcoxonSignedRank(c.D)
		if math.Abs(p-c.P) > 1e-12*math.Max(1, c.P) {
			t.Errorf("%s: p = %v, SciPy %s gives %v", c.Name, p, c.Method, c.P)
		}
		if (c.Method == "exact") != (method == "exact") {
			t.Errorf("%s: method %q, SciPy used %q", c.Name, method, c.Method)
		}
		if c.CohensD != nil {
			if got := cohensD(c.D); math.Abs(got-*c.CohensD) > 1e-12*math.Abs(*c.CohensD) {
				t.Errorf("%s: Cohen's d = %v, NumPy gives %v", c.Name, got, *c.CohensD)
			}
		}
	}
}

// TestExactDistributionByEnumeration compares the exact upper tail with a
// count over all 2^n sign assignments.
func TestExactDistributionByEnumeration(t *testing.T) {
	for n := 1; n <= 12; n++ {
		top := n * (n + 1) / 2
		count := make([]int, top+1)
		for mask := 0; mask < 1<<n; mask++ {
			s := 0
			for r := 1; r <= n; r++ {
				if mask&(1<<(r-1)) != 0 {
					s += r
				}
			}
			count[s]++
		}
		for w := 0; w <= top; w++ {
			tail := 0
			for s := w; s <= top; s++ {
				tail += count[s]
			}
			want := float64(tail) / float64(int(1)<<n)
			if got := exactUpperTail(n, w); math.Abs(got-want) > 1e-15 {
				t.Fatalf("n=%d w=%d: %v, enumeration %v", n, w, got, want)
			}
		}
	}
}

func TestBootstrapCI(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	d := make([]float64, 10)
	for i := range d {
		d[i] = 0.01 + 0.005*rng.NormFloat64()
	}
	lo, hi := BootstrapMeanCI(d, 10000, 7, 0.95)
	lo2, hi2 := BootstrapMeanCI(d, 10000, 7, 0.95)
	if lo != lo2 || hi != hi2 {
		t.Fatal("bootstrap not deterministic for a seed")
	}
	if lo3, _ := BootstrapMeanCI(d, 10000, 8, 0.95); lo3 == lo {
		t.Fatal("another seed gave the same CI")
	}
	m := 0.0
	for _, x := range d {
		m += x / 10
	}
	if !(lo < m && m < hi) {
		t.Fatalf("CI [%v, %v] excludes the mean %v", lo, hi, m)
	}
	// Large normal sample: the percentile CI approaches mean ± 1.96 sd/√n.
	big := make([]float64, 400)
	var s, ss float64
	for i := range big {
		big[i] = rng.NormFloat64()
		s += big[i]
	}
	mean := s / 400
	for _, x := range big {
		ss += (x - mean) * (x - mean)
	}
	half := 1.959964 * math.Sqrt(ss/399) / 20
	lo, hi = BootstrapMeanCI(big, 10000, 3, 0.95)
	if math.Abs(lo-(mean-half)) > 0.1*half || math.Abs(hi-(mean+half)) > 0.1*half {
		t.Fatalf("bootstrap CI [%v, %v], normal theory [%v, %v]", lo, hi, mean-half, mean+half)
	}
	// Constant differences and n = 1.
	if lo, hi := BootstrapMeanCI([]float64{0.2, 0.2, 0.2}, 1000, 1, 0.95); math.Abs(lo-0.2) > 1e-15 || math.Abs(hi-0.2) > 1e-15 {
		t.Fatalf("constant diffs: [%v, %v]", lo, hi)
	}
	if lo, hi := BootstrapMeanCI([]float64{0.3}, 1000, 1, 0.95); lo != 0.3 || hi != 0.3 {
		t.Fatalf("n = 1: [%v, %v]", lo, hi)
	}
}

func TestComparePairedEdgeCases(t *testing.T) {
	same := []float64{0.5, 0.6, 0.7}
	c, err := ComparePaired(same, same, 1000, 1, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	if c.Delta != 0 || c.CohensD != 0 || c.WilcoxonP != 1 || c.Wins != 0 || c.CILow != 0 || c.CIHigh != 0 || !strings.Contains(c.WilcoxonMethod, "zero") {
		t.Fatalf("identical runs: %+v", c)
	}
	c, err = ComparePaired([]float64{0.9}, []float64{0.5}, 1000, 1, 0.95)
	if err != nil || c.N != 1 || c.Wins != 1 || !math.IsInf(c.CohensD, 1) || c.WilcoxonP != 0.5 || math.IsNaN(c.CILow) {
		t.Fatalf("n = 1: %+v, %v", c, err)
	}
	// All ties in |d| with mixed signs: defined, not NaN.
	c, _ = ComparePaired([]float64{1, 1, 0, 0}, []float64{0, 0, 1, 1}, 100, 1, 0.95)
	if math.IsNaN(c.WilcoxonP) || math.IsNaN(c.CohensD) || c.Wins != 2 {
		t.Fatalf("all ties: %+v", c)
	}
	if _, err := ComparePaired([]float64{1}, []float64{1, 2}, 10, 1, 0.95); err == nil {
		t.Fatal("different lengths accepted")
	}
	if _, err := ComparePaired(nil, nil, 10, 1, 0.95); err == nil {
		t.Fatal("no pairs accepted")
	}
}
