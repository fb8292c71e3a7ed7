package stages

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"sort"
	"strings"
	"testing"
)

// pairedFixtures mirrors testdata/scipy_fixtures.json (written by
// testdata/gen_fixtures.py with SciPy/NumPy; provenance inside).
type pairedFixtures struct {
	Provenance map[string]string `json:"provenance"`
	Cases      []struct {
		Name     string    `json:"name"`
		A        []float64 `json:"a"`
		B        []float64 `json:"b"`
		D        []float64 `json:"d"`
		MeanD    float64   `json:"mean_d"`
		Wins     int       `json:"wins"`
		CohensD  *float64  `json:"cohens_d"`
		NonFinD  string    `json:"cohens_d_nonfinite"`
		AutoSame bool      `json:"scipy_auto_equals_thv"`
		THV      struct {
			Method   string  `json:"method"` // exact, approx, none
			P        float64 `json:"p"`
			NNonzero int     `json:"n_nonzero"`
			Zeros    int     `json:"zeros"`
			Ties     bool    `json:"ties"`
		} `json:"thv"`
		Auto struct {
			P      *float64 `json:"p"`
			Method string   `json:"method"`
			Error  string   `json:"error"`
		} `json:"scipy_auto"`
	} `json:"cases"`
	NormSF [][2]float64 `json:"norm_sf"`
}

func loadPairedFixtures(t *testing.T) pairedFixtures {
	t.Helper()
	b, err := os.ReadFile("testdata/scipy_fixtures.json")
	if err != nil {
		t.Fatal(err)
	}
	var fx pairedFixtures
	if err := json.Unmarshal(b, &fx); err != nil {
		t.Fatal(err)
	}
	if len(fx.Cases) < 12 || fx.Provenance["scipy"] == "" || fx.Provenance["command"] == "" {
		t.Fatalf("fixtures incomplete: %d cases, provenance %v", len(fx.Cases), fx.Provenance)
	}
	return fx
}

// methodKind maps WilcoxonSignedRank's method string to the fixture's kind.
func methodKind(method string) string {
	switch {
	case strings.HasPrefix(method, "exact"):
		return "exact"
	case strings.HasPrefix(method, "normal approximation"):
		return "approx"
	case strings.HasPrefix(method, "none"):
		return "none"
	}
	return "unknown: " + method
}

func closeRel(got, want, rel float64) bool {
	return got == want || math.Abs(got-want) <= rel*math.Abs(want)
}

func TestPairedWilcoxonAgainstSciPy(t *testing.T) {
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

func TestPairedCohensDAgainstNumPy(t *testing.T) {
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

func TestPairedComparePairedAgainstFixtures(t *testing.T) {
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

// TestPairedExactDistributionByEnumeration checks the exact null
// distribution against all 2^n sign assignments, n ≤ 12, both the tail
// function and WilcoxonSignedRank end to end on data of distinct |d|.
func TestPairedExactDistributionByEnumeration(t *testing.T) {
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
func TestPairedExactCountsExact(t *testing.T) {
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

func TestPairedNormalApproximationByHand(t *testing.T) {
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

func TestPairedWilcoxonEdgeCases(t *testing.T) {
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

func TestPairedBootstrapDeterministicPerSeed(t *testing.T) {
	d := []float64{0.0012, 0.0008, -0.0003, 0.0015, 0.0004, 0.0021, 0.0007, -0.0001, 0.0011, 0.0005}
	lo, hi := BootstrapMeanCI(d, 10000, 7, 0.95)
	for range 3 {
		if lo2, hi2 := BootstrapMeanCI(d, 10000, 7, 0.95); lo2 != lo || hi2 != hi {
			t.Fatalf("seed 7: [%v, %v] then [%v, %v]", lo, hi, lo2, hi2)
		}
	}
	if lo3, hi3 := BootstrapMeanCI(d, 10000, 8, 0.95); lo3 == lo && hi3 == hi {
		t.Fatal("seeds 7 and 8 gave the same CI")
	}
	a, b := append([]float64{}, d...), make([]float64, len(d))
	c1, err1 := ComparePaired(a, b, 10000, 7, 0.95)
	c2, err2 := ComparePaired(a, b, 10000, 7, 0.95)
	if err1 != nil || err2 != nil || c1 != c2 || c1.CILow != lo || c1.CIHigh != hi {
		t.Fatalf("ComparePaired not deterministic: %+v %+v", c1, c2)
	}
	// Same seed: the 50% interval lies inside the 95% one, which lies
	// inside [min d, max d].
	l50, h50 := BootstrapMeanCI(d, 10000, 7, 0.5)
	if !(lo <= l50 && l50 <= h50 && h50 <= hi && -0.0003 <= lo && hi <= 0.0021) {
		t.Fatalf("CIs not nested: 95%% [%v, %v], 50%% [%v, %v]", lo, hi, l50, h50)
	}
}

func TestPairedBootstrapSymmetricData(t *testing.T) {
	// Symmetric about 0.002: the CI contains the mean and is nearly
	// symmetric about it.
	var d []float64
	for _, x := range []float64{0.1, 0.4, 0.5, 1.1, 1.7} {
		d = append(d, 0.002+x*1e-3, 0.002-x*1e-3)
	}
	lo, hi := BootstrapMeanCI(d, 10000, 11, 0.95)
	const m = 0.002
	if !(lo < m && m < hi) {
		t.Fatalf("CI [%v, %v] excludes the mean", lo, hi)
	}
	if math.Abs((hi-m)-(m-lo)) > 0.05*(hi-lo) {
		t.Fatalf("CI [%v, %v] far from symmetric about %v", lo, hi, m)
	}
}

// TestPairedBootstrapConvergesToExactBootstrap compares B = 10,000 with the
// exact bootstrap distribution of the mean for n = 8, enumerated over all
// C(15, 8) = 6435 resample compositions with multinomial weights.
func TestPairedBootstrapConvergesToExactBootstrap(t *testing.T) {
	d := []float64{0.0031, -0.0012, 0.0007, 0.0049, 0.0018, -0.0004, 0.0026, 0.0011}
	n := len(d)
	type atom struct{ mean, prob float64 }
	var atoms []atom
	counts := make([]int, n)
	fact := func(k int) float64 { return math.Gamma(float64(k) + 1) }
	var rec func(i, left int)
	rec = func(i, left int) {
		if i == n-1 {
			counts[i] = left
			w, s := fact(n), 0.0
			for j, k := range counts {
				w /= fact(k)
				s += float64(k) * d[j]
			}
			atoms = append(atoms, atom{s / float64(n), w / math.Pow(float64(n), float64(n))})
			return
		}
		for k := 0; k <= left; k++ {
			counts[i] = k
			rec(i+1, left-k)
		}
	}
	rec(0, n)
	if len(atoms) != 6435 {
		t.Fatalf("%d compositions", len(atoms))
	}
	sort.Slice(atoms, func(i, j int) bool { return atoms[i].mean < atoms[j].mean })
	quant := func(q float64) float64 {
		c := 0.0
		for _, a := range atoms {
			if c += a.prob; c >= q {
				return a.mean
			}
		}
		return atoms[len(atoms)-1].mean
	}
	wantLo, wantHi := quant(0.025), quant(0.975)
	for _, seed := range []uint64{1, 2, 3} {
		lo, hi := BootstrapMeanCI(d, 10000, seed, 0.95)
		// Monte Carlo sd of a 2.5% quantile with B = 1e4 is ≈ 0.027 sd of
		// the mean ≈ 0.007 width; allow 0.04 width.
		tol := 0.04 * (wantHi - wantLo)
		if math.Abs(lo-wantLo) > tol || math.Abs(hi-wantHi) > tol {
			t.Errorf("seed %d: [%v, %v], exact bootstrap [%v, %v]", seed, lo, hi, wantLo, wantHi)
		}
	}
}

// TestPairedBootstrapLargeNormal: for a large normal sample the percentile
// CI approaches the analytical mean ± z·s·sqrt((n−1)/n)/√n (the bootstrap
// distribution's sd uses the plug-in variance).
func TestPairedBootstrapLargeNormal(t *testing.T) {
	rng := rand.New(rand.NewChaCha8([32]byte{9}))
	n := 400
	d := make([]float64, n)
	var s float64
	for i := range d {
		d[i] = 0.003 + 0.01*rng.NormFloat64()
		s += d[i]
	}
	mean := s / float64(n)
	var ss float64
	for _, x := range d {
		ss += (x - mean) * (x - mean)
	}
	half := 1.959963984540054 * math.Sqrt(ss/float64(n)) / math.Sqrt(float64(n))
	lo, hi := BootstrapMeanCI(d, 10000, 3, 0.95)
	if math.Abs(lo-(mean-half)) > 0.05*half || math.Abs(hi-(mean+half)) > 0.05*half {
		t.Fatalf("bootstrap [%v, %v], normal theory [%v, %v]", lo, hi, mean-half, mean+half)
	}
}

func TestPairedBootstrapEdgeCases(t *testing.T) {
	// Equal differences: exactly [d, d] (also when n·d/n would round).
	for _, d := range [][]float64{{0.1, 0.1, 0.1}, {0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2}, {-0.0013}, {0}} {
		if lo, hi := BootstrapMeanCI(d, 10000, 1, 0.95); lo != d[0] || hi != d[0] {
			t.Errorf("%v: [%v, %v]", d, lo, hi)
		}
	}
	for _, tc := range []struct {
		d     []float64
		b     int
		level float64
	}{{nil, 100, 0.95}, {[]float64{1, 2}, 0, 0.95}, {[]float64{1, 2}, 100, 0}, {[]float64{1, 2}, 100, 1}, {[]float64{1, math.NaN()}, 100, 0.95}} {
		if lo, hi := BootstrapMeanCI(tc.d, tc.b, 1, tc.level); !math.IsNaN(lo) || !math.IsNaN(hi) {
			t.Errorf("%v B=%d level=%v: [%v, %v], want NaN", tc.d, tc.b, tc.level, lo, hi)
		}
	}
	// B = 1: the interval is the single resample mean.
	if lo, hi := BootstrapMeanCI([]float64{1, 2, 3}, 1, 4, 0.95); lo != hi {
		t.Errorf("B = 1: [%v, %v]", lo, hi)
	}
}

func TestPairedBootstrapIndexUniform(t *testing.T) {
	src := rand.NewPCG(1, bootstrapStream)
	const n, draws = 7, 70000
	var hist [n]int
	for range draws {
		hist[bootstrapIndex(src, n)]++
	}
	for i, h := range hist {
		// sd ≈ sqrt(draws·(1/7)(6/7)) ≈ 92.6; allow 5 sd.
		if math.Abs(float64(h)-draws/n) > 463 {
			t.Fatalf("index %d drawn %d times of %d", i, h, draws)
		}
	}
	if bootstrapIndex(src, 1) != 0 {
		t.Fatal("n = 1")
	}
}

func TestPairedComparePairedEdgeCases(t *testing.T) {
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
