package stats

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestWilcoxonAgainstSciPy(t *testing.T) {
	fx := loadPairedFixtures(t)
	for _, c := range fx.Cases {
		p, method := WilcoxonSignedRank(c.D)
		if !closeRel(p, c.THV.P, 1e-12) {
			t.Errorf("%s: p = %v (%s), SciPy reference %v (%s)", c.Name, p, method, c.THV.P, c.THV.Method)
		}
		if methodKind(method) != c.THV.Method {
			t.Errorf("%s: method %q, reference %q", c.Name, method, c.THV.Method)
		}
		if c.THV.Zeros > 0 && !strings.Contains(method, "zero") && c.THV.Method != "none" {
			t.Errorf("%s: method %q does not say zeros were dropped", c.Name, method)
		}
		// The plain scipy.stats.wilcoxon(d, alternative='greater') call:
		// equal wherever the rules agree; they may differ only with zeros
		// (SciPy 1.10.1 'auto' goes to the normal approximation; thv stays
		// exact on the nonzero differences) or ties without zeros (SciPy
		// reads the exact table at int(W+)).
		if c.AutoSame {
			if c.Auto.P == nil || !closeRel(p, *c.Auto.P, 1e-12) {
				t.Errorf("%s: p = %v, scipy.stats.wilcoxon(d, alternative='greater') %v", c.Name, p, c.Auto.P)
			}
		} else if c.THV.Zeros == 0 && !c.THV.Ties {
			t.Errorf("%s: differs from SciPy's default call without zeros or ties", c.Name)
		}
	}
}

// TestWilcoxonExactDistributionByEnumeration checks the exact null
// distribution against all 2^n sign assignments, n ≤ 12, both the tail
// function and WilcoxonSignedRank end to end on data of distinct |d|.
func TestWilcoxonExactDistributionByEnumeration(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for n := 1; n <= 12; n++ {
		top := n * (n + 1) / 2
		count := make([]int, top+1)
		sumOf := func(mask int) int {
			s := 0
			for r := 1; r <= n; r++ {
				if mask&(1<<(r-1)) != 0 {
					s += r
				}
			}
			return s
		}
		for mask := 0; mask < 1<<n; mask++ {
			count[sumOf(mask)]++
		}
		tail := func(w int) float64 {
			k := 0
			for s := max(w, 0); s <= top; s++ {
				k += count[s]
			}
			return float64(k) / float64(int(1)<<n)
		}
		for w := -1; w <= top+1; w++ {
			if got, want := wilcoxonExactSF(n, w), tail(w); got != want {
				t.Fatalf("n=%d w=%d: %v, enumeration %v", n, w, got, want)
			}
		}
		// Data: magnitudes (r + noise)·1e-3 with rank r, shuffled; each mask
		// sets which are positive, so W+ = sumOf(mask).
		mag := make([]float64, n)
		for r := range mag {
			mag[r] = (float64(r+1) + 0.3*rng.Float64()) * 1e-3
		}
		perm := rng.Perm(n)
		d := make([]float64, n)
		for mask := 0; mask < 1<<n; mask++ {
			for r := 0; r < n; r++ {
				v := mag[r]
				if mask&(1<<r) == 0 {
					v = -v
				}
				d[perm[r]] = v
			}
			p, method := WilcoxonSignedRank(d)
			if want := tail(sumOf(mask)); p != want || method != "exact" {
				t.Fatalf("n=%d mask=%b: p=%v (%s), enumeration %v", n, mask, p, method, want)
			}
		}
	}
}

// The DP counts are exact integers: they sum to 2^n and are symmetric, up
// to the largest exact n.
func TestWilcoxonExactCountsExact(t *testing.T) {
	for _, n := range []int{1, 2, 13, 30, MaxExactWilcoxonN} {
		c := wilcoxonExactCounts(n)
		var sum uint64
		for s := range c {
			sum += c[s]
			if c[s] != c[len(c)-1-s] {
				t.Fatalf("n=%d: count not symmetric at %d", n, s)
			}
		}
		if sum != 1<<n {
			t.Fatalf("n=%d: counts sum to %d, want 2^n", n, sum)
		}
		if p := wilcoxonExactSF(n, len(c)-1); p != math.Ldexp(1, -n) {
			t.Fatalf("n=%d: P(W+ = max) = %v", n, p)
		}
	}
}

func TestWilcoxonNormalApproximationByHand(t *testing.T) {
	// Five equal positive differences: one tie group of 5, W+ = 15,
	// mean 7.5, var = (5·6·11 − ½(125 − 5))/24 = 11.25.
	p, m := WilcoxonSignedRank([]float64{0.25, 0.25, 0.25, 0.25, 0.25})
	want := 0.5 * math.Erfc(7.5/math.Sqrt(11.25)/math.Sqrt2)
	if !closeRel(p, want, 1e-14) || methodKind(m) != "approx" {
		t.Fatalf("p = %v (%s), want %v", p, m, want)
	}
	// W+ at the null mean: p = 1/2 exactly.
	if p, _ := WilcoxonSignedRank([]float64{0.001, -0.001, 0.001, -0.001}); p != 0.5 {
		t.Fatalf("centred ties: p = %v", p)
	}
	// 51 distinct positive differences: beyond the exact limit.
	d := make([]float64, 51)
	for i := range d {
		d[i] = float64(i+1) * 1e-4
	}
	p, m = WilcoxonSignedRank(d)
	n := 51.0
	want = 0.5 * math.Erfc((n*(n+1)/2-n*(n+1)/4)/math.Sqrt(n*(n+1)*(2*n+1)/24)/math.Sqrt2)
	if !closeRel(p, want, 1e-12) || methodKind(m) != "approx" || !strings.Contains(m, "n = 51") {
		t.Fatalf("n = 51: p = %v (%s), want %v", p, m, want)
	}
	// The upper normal tail against scipy.stats.norm.sf.
	fx := loadPairedFixtures(t)
	if len(fx.NormSF) < 10 {
		t.Fatal("no norm.sf fixtures")
	}
	for _, zp := range fx.NormSF {
		if got := wilcoxonNormalSF(zp[0]); !closeRel(got, zp[1], 1e-13) {
			t.Errorf("sf(%v) = %v, SciPy %v", zp[0], got, zp[1])
		}
	}
}

func TestWilcoxonEdgeCases(t *testing.T) {
	for _, d := range [][]float64{nil, {}, {0}, {0, 0, 0, -0.0}} {
		if p, m := WilcoxonSignedRank(d); p != 1 || methodKind(m) != "none" {
			t.Errorf("%v: p = %v (%s)", d, p, m)
		}
	}
	if p, _ := WilcoxonSignedRank([]float64{0.1}); p != 0.5 {
		t.Errorf("one win: p = %v", p)
	}
	if p, _ := WilcoxonSignedRank([]float64{-0.1}); p != 1 {
		t.Errorf("one loss: p = %v", p)
	}
	if p, _ := WilcoxonSignedRank([]float64{0, 0, 0.1, 0}); p != 0.5 {
		t.Errorf("zeros and one win: p = %v", p)
	}
	if p, m := WilcoxonSignedRank([]float64{0.1, math.NaN()}); !math.IsNaN(p) || !strings.Contains(m, "NaN") {
		t.Errorf("NaN: p = %v (%s)", p, m)
	}
	// All ten seeds won: 1/1024; the order of the data does not matter.
	d := []float64{3e-3, 1e-3, 4e-3, 1.5e-3, 5e-3, 9e-3, 2e-3, 6e-3, 5.3e-3, 5.8e-3}
	if p, m := WilcoxonSignedRank(d); p != 1.0/1024 || m != "exact" {
		t.Errorf("ten wins: p = %v (%s)", p, m)
	}
	// Swapping a and b: exact tails of W+ and of n(n+1)/2 − W+ overlap in
	// exactly one atom, so p(a>b) + p(b>a) = 1 + P(W+ = w).
	neg := make([]float64, len(d))
	d[3] = -d[3]
	for i := range d {
		neg[i] = -d[i]
	}
	p1, _ := WilcoxonSignedRank(d)
	p2, _ := WilcoxonSignedRank(neg)
	w := 55 - 2 // rank of 1.5e-3 is 2
	atom := wilcoxonExactSF(10, w) - wilcoxonExactSF(10, w+1)
	if !closeRel(p1+p2, 1+atom, 1e-15) {
		t.Errorf("p + p(swapped) = %v, want %v", p1+p2, 1+atom)
	}
}
