package stats

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"
)

func TestBootstrapDeterministicPerSeed(t *testing.T) {
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

func TestBootstrapSymmetricData(t *testing.T) {
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

// TestBootstrapConvergesToExactBootstrap compares B = 10,000 with the
// exact bootstrap distribution of the mean for n = 8, enumerated over all
// C(15, 8) = 6435 resample compositions with multinomial weights.
func TestBootstrapConvergesToExactBootstrap(t *testing.T) {
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

// TestBootstrapLargeNormal: for a large normal sample the percentile
// CI approaches the analytical mean ± z·s·sqrt((n−1)/n)/√n (the bootstrap
// distribution's sd uses the plug-in variance).
func TestBootstrapLargeNormal(t *testing.T) {
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

func TestBootstrapEdgeCases(t *testing.T) {
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

func TestBootstrapIndexUniform(t *testing.T) {
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
