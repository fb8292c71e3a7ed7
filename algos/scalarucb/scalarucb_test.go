package scalarucb

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"thv/algos"
	"thv/algos/algotest"
)

var names = []string{"ScalarUCB", "ScalarUCB-RandW"}

func build(t testing.TB, name string, prob algos.Problem, eta float64, rng *rand.Rand) *Policy {
	t.Helper()
	return algotest.New(t, name, prob, eta, rng).(*Policy)
}

func TestRegistered(t *testing.T) {
	for _, c := range []struct{ name, cite string }{{"ScalarUCB", "auer2002finite"}, {"ScalarUCB-RandW", "paria2020flexible"}} {
		s, err := algos.Lookup(c.name)
		if err != nil {
			t.Fatal(err)
		}
		if s.Family != "scalarucb" || s.Fidelity != algos.Extension || !s.UsesEta || s.Cite != c.cite {
			t.Errorf("%s: spec %+v", c.name, s)
		}
	}
}

// Determinism for a seed on every geometry is checked for all fourteen
// algorithms at once in algos/all (TestEveryPolicy).

// Dirichlet(1) draws are positive, sum to 1, and are uniform on the
// simplex: the first coordinate is Beta(1, d−1), so 1 − (1 − w₁)^{d−1} is
// uniform on [0, 1].
func TestDirichlet(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	const R, bins = 20000, 10
	for _, d := range []int{2, 3, 5} {
		w := make([]float64, d)
		freq := make([]int, bins)
		for r := 0; r < R; r++ {
			Dirichlet(rng, w)
			var s float64
			for _, v := range w {
				if !(v > 0) {
					t.Fatalf("d=%d: non-positive weight in %v", d, w)
				}
				s += v
			}
			if math.Abs(s-1) > 1e-12 {
				t.Fatalf("d=%d: weights %v sum to %v", d, w, s)
			}
			u := 1 - math.Pow(1-w[0], float64(d-1))
			freq[min(bins-1, int(u*bins))]++
		}
		chi, e := 0.0, float64(R)/bins
		for _, f := range freq {
			chi += (float64(f) - e) * (float64(f) - e) / e
		}
		if chi > 40 { // 9 degrees of freedom: p ≈ 10⁻⁵
			t.Errorf("d=%d: w₁ not Beta(1, d−1): %v (χ² = %.1f)", d, freq, chi)
		}
	}
}

func setState(p *Policy, means [][]float64, counts []int) {
	for i := range means {
		copy(p.Mean[i], means[i])
		p.Count[i] = counts[i]
	}
}

// ScalarUCB by hand: n = 4, d = 2, T = 100, η = 0.5, so the bonus is
// sqrt(0.5·ln(4·100²)/(2N_i)) = sqrt(0.25·ln 40000 / N_i) (no d in the log):
// A = (0.9, 0.1), N = 100: 0.5 + 0.1628 = 0.6628
// B = (0.4, 0.4), N = 4:   0.4 + 0.8138 = 1.2138
// C = (0.6, 0.6), N = 100: 0.6 + 0.1628 = 0.7628
// D = (0.3, 0.5), N = 50:  0.4 + 0.2302 = 0.6302
func TestScalarUCBByHand(t *testing.T) {
	prob := algos.Problem{N: 4, D: 2, K: 3, T: 100}
	p := build(t, "ScalarUCB", prob, 0.5, rand.New(rand.NewPCG(1, 1)))
	means := [][]float64{{0.9, 0.1}, {0.4, 0.4}, {0.6, 0.6}, {0.3, 0.5}}
	counts := []int{100, 4, 100, 50}
	setState(p, means, counts)
	slate := make([]int, 3)
	p.Select(150, slate)
	if !slices.Equal(slate, []int{1, 2, 0}) {
		t.Fatalf("slate %v, want [1 2 0]", slate)
	}
	for i, m := range means {
		want := (m[0]+m[1])/2 + math.Sqrt(0.25*math.Log(40000)/float64(counts[i]))
		if math.Abs(p.scores[i]-want) > 1e-12 {
			t.Errorf("index of arm %d = %v, want %v", i, p.scores[i], want)
		}
	}
	// Halving D's bonus denominator puts it ahead of A: 0.4 + 0.3255 > 0.6628.
	p.Count[3] = 25
	p.Touch(3) // a change made directly, after the first Select
	p.Select(151, slate)
	if !slices.Equal(slate, []int{1, 2, 3}) {
		t.Fatalf("slate %v, want [1 2 3]", slate)
	}
}

// ScalarUCB-RandW: scores are w·U_i with w replayed from an identical
// stream and the standard bonus sqrt(0.5·ln(3·2·100²)/(2N_i)). With
// A = (0.9, 0.1), B = (0.45, 0.45), C = (0.1, 0.9) and equal counts, B can
// never be the best (max(w·A, w·C) ≥ 0.5 > w·B), and A and C each win
// about half of the rounds.
func TestScalarUCBRandWByHand(t *testing.T) {
	prob := algos.Problem{N: 3, D: 2, K: 1, T: 100}
	p := build(t, "ScalarUCB-RandW", prob, 0.5, rand.New(rand.NewPCG(8, 8)))
	twin := rand.New(rand.NewPCG(8, 8))
	means := [][]float64{{0.9, 0.1}, {0.45, 0.45}, {0.1, 0.9}}
	setState(p, means, []int{50, 50, 50})
	b := math.Sqrt(0.25 * math.Log(60000) / 50)
	slate := make([]int, 1)
	w := make([]float64, 2)
	freq := make([]int, 3)
	const R = 4000
	for r := 0; r < R; r++ {
		p.Select(100+r, slate)
		Dirichlet(twin, w)
		for i, m := range means {
			want := w[0]*(m[0]+b) + w[1]*(m[1]+b)
			if math.Abs(p.scores[i]-want) > 1e-12 {
				t.Fatalf("round %d: score of arm %d = %v, want %v", r, i, p.scores[i], want)
			}
		}
		freq[slate[0]]++
	}
	if freq[1] != 0 || math.Abs(float64(freq[0])-R/2) > 4*math.Sqrt(R/4) {
		t.Fatalf("frequencies %v, want B never and A ≈ C", freq)
	}
}

// TestNoiselessPlaysFront: see algotest.CheckPlaysFront.
func TestNoiselessPlaysFront(t *testing.T) { algotest.CheckPlaysFront(t, "ScalarUCB") }

func TestSelectAllocFree(t *testing.T) { algotest.CheckSelectAllocFree(t, names, 0.3) }

// BenchmarkSelect times whole runs and learned-state rounds in the paper's
// d = 5 setting (algotest.BenchmarkRuns).
func BenchmarkSelect(b *testing.B) {
	algotest.BenchmarkRuns(b, names, 0.3)
}

// TestEqualIndicesByRoundingTieToLowestIndex: arms 1 and 2 have the same
// count and means that are permutations of each other, so ScalarUCB's
// indices w·μ̂ + β with w = 1/d are equal in exact arithmetic, while the
// sums formed in coordinate order differ in the last bit and make arm 2's
// larger. The lowest index, arm 1, must be played.
func TestEqualIndicesByRoundingTieToLowestIndex(t *testing.T) {
	rng := rand.New(rand.NewPCG(51, 52))
	for trial := 0; ; trial++ {
		if trial == 100000 {
			t.Fatal("no permutation found whose sums differ the right way")
		}
		x, y, z := rng.Float64(), rng.Float64(), rng.Float64()
		p := build(t, "ScalarUCB", algos.Problem{N: 3, D: 3, K: 1, T: 1000}, 0.01, rand.New(rand.NewPCG(1, 1)))
		setState(p, [][]float64{{0, 0, 0}, {x, y, z}, {y, z, x}}, []int{1000, 1000, 1000})
		slate := make([]int, 1)
		p.Select(500, slate)
		if !(p.scores[2] > p.scores[1]) {
			continue
		}
		if slate[0] != 1 {
			t.Fatalf("indices %v (arms 1 and 2 equal exactly): Select = %v, want [1]", p.scores, slate)
		}
		return
	}
}

// TestRoundingMergedIndicesDecideExactly: ScalarUCB-RandW, arm 1's means one
// ulp above arm 0's in every coordinate, so its index w·U is larger in
// exact arithmetic for every w; the sums often round both to the same
// number. Arm 1 must be played every round.
func TestRoundingMergedIndicesDecideExactly(t *testing.T) {
	p := build(t, "ScalarUCB-RandW", algos.Problem{N: 3, D: 3, K: 1, T: 1000}, 0.01, rand.New(rand.NewPCG(3, 4)))
	m := []float64{0.41, 0.53, 0.67}
	up := make([]float64, 3)
	for l := range up {
		up[l] = math.Nextafter(m[l], 1)
	}
	setState(p, [][]float64{m, up, {0.1, 0.1, 0.1}}, []int{1000, 1000, 1000})
	merged := 0
	slate := make([]int, 1)
	for r := range 2000 {
		p.Select(500+r, slate)
		if slate[0] != 1 {
			t.Fatalf("round %d: Select = %v, want [1] (indices %v)", r, slate, p.scores)
		}
		if p.scores[0] == p.scores[1] {
			merged++
		}
	}
	if merged == 0 {
		t.Fatal("the indices never rounded to the same number: the test does not exercise the rule")
	}
	t.Logf("%d of 2000 rounds with merged indices", merged)
}

// TestCompareExactByExpansions: CompareExact (floating-point expansions)
// agrees with math/big (exactScore) on states with ties, for both.
func TestCompareExactByExpansions(t *testing.T) {
	rng := rand.New(rand.NewPCG(53, 54))
	for trial := range 300 {
		name := names[trial%2]
		n, d := 3+rng.IntN(10), 2+rng.IntN(4)
		p := build(t, name, algos.Problem{N: n, D: d, K: 1, T: 1000}, 0.01, rand.New(rand.NewPCG(uint64(trial), 1)))
		for i := range n {
			for l := range d {
				p.Mean[i][l] = float64(rng.IntN(7)) / 6
				if rng.IntN(2) == 0 {
					p.Mean[i][l] = rng.Float64()
				}
			}
			p.Count[i] = 1 + rng.IntN(3)
		}
		p.Select(500, make([]int, 1))
		var a, b algos.Sum
		for i := range n {
			for j := range n {
				if got, want := p.CompareExact(i, j), p.exactScore(i, &a).Cmp(p.exactScore(j, &b)); got != want {
					t.Fatalf("%s trial %d: arms %d, %d: CompareExact %d, math/big %d", name, trial, i, j, got, want)
				}
			}
		}
	}
}

// TestRankedMatchesExactTopK: ScalarUCB, keeping its ranking between
// rounds and moving only the observed arms, plays the exact top k of
// w·μ̂_i + β_i (math/big, the lowest index first on ties) every round, on
// states with arms whose means permute another's (equal indices that the
// sums round apart), arms one ulp from another, and Observe's and Touch's
// changes between rounds.
func TestRankedMatchesExactTopK(t *testing.T) {
	rng := rand.New(rand.NewPCG(81, 82))
	nearTies := 0
	for trial := range 100 {
		n, d := 2+rng.IntN(40), 2+rng.IntN(4)
		k := 1 + rng.IntN(min(n, 6))
		p := build(t, "ScalarUCB", algos.Problem{N: n, D: d, K: k, T: 1000}, 0.01, rand.New(rand.NewPCG(uint64(trial), 1)))
		change := func(i int) {
			p.Count[i] = 1 + rng.IntN(4)
			for l := range d {
				p.Mean[i][l] = float64(rng.IntN(7)) / 6
				if rng.IntN(2) == 0 {
					p.Mean[i][l] = rng.Float64()
				}
			}
			if i > 0 && rng.IntN(3) == 0 { // another arm's means permuted, or one ulp off
				j := rng.IntN(i)
				p.Count[i] = p.Count[j]
				for l := range d {
					p.Mean[i][l] = p.Mean[j][(l+1)%d]
				}
				// One ulp off a non-zero mean (a subnormal product is
				// beyond the exact comparison's range).
				if l := rng.IntN(d); rng.IntN(2) == 0 && p.Mean[i][l] != 0 {
					p.Mean[i][l] = math.Nextafter(p.Mean[i][l], float64(rng.IntN(2)*2-1))
				}
			}
		}
		for i := range n {
			change(i)
		}
		slate := make([]int, k)
		for round := range 20 {
			p.Select(500+round, slate)
			var a, b algos.Sum
			want := make([]int, n)
			for i := range want {
				want[i] = i
			}
			slices.SortStableFunc(want, func(i, j int) int { return p.exactScore(j, &b).Cmp(p.exactScore(i, &a)) })
			if !slices.Equal(slate, want[:k]) {
				t.Fatalf("trial %d round %d (n = %d, d = %d): slate %v, exact top %d %v", trial, round, n, d, slate, k, want[:k])
			}
			for i := range n - 1 {
				if s, u := p.scores[want[i]], p.scores[want[i+1]]; algos.Near(s, u, p.indexError(), p.indexError()) {
					nearTies++
				}
			}
			// The played arms are observed; now and then another changes
			// by hand and is declared with Touch.
			rewards := make([][]float64, k)
			for a := range rewards {
				rewards[a] = make([]float64, d)
				for l := range rewards[a] {
					rewards[a][l] = float64(rng.IntN(3)) / 2
				}
			}
			p.Observe(slate, rewards)
			if rng.IntN(2) == 0 {
				i := rng.IntN(n)
				change(i)
				p.Touch(i)
			}
		}
	}
	t.Logf("%d neighbours within rounding of each other", nearTies)
	if nearTies < 1000 {
		t.Fatalf("%d neighbours in the ranking within rounding of each other: the test does not exercise the exact rule", nearTies)
	}
}

// TestRandWScoreBitIdentical: randWScore5, written out for d = 5, is the
// loop's w·(μ̂ + β) from 0 bit for bit, −0 and negative means included.
func TestRandWScoreBitIdentical(t *testing.T) {
	rng := rand.New(rand.NewPCG(91, 92))
	for trial := range 3000 {
		const d = 5
		w, m := make([]float64, d), make([]float64, d)
		Dirichlet(rng, w)
		for l := range m {
			switch rng.IntN(4) {
			case 0:
				m[l] = math.Copysign(0, -1)
			case 1:
				m[l] = -rng.Float64()
			default:
				m[l] = float64(rng.IntN(4)) / 4
			}
		}
		b := []float64{0, math.Copysign(0, -1), rng.Float64()}[rng.IntN(3)]
		if trial%7 == 0 { // every term −0: the sum from +0 is +0
			for l := range m {
				m[l] = math.Copysign(0, -1)
			}
			b = math.Copysign(0, -1)
		}
		var want float64
		for l, mu := range m {
			want += float64(w[l] * (mu + b))
		}
		if got := randWScore5(w, m, b); math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("trial %d: %v, want %v", trial, got, want)
		}
	}
}
