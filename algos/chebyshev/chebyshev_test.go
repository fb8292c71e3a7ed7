package chebyshev

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"

	"thv/algos"
	"thv/algos/algotest"
	"thv/envs/fmath"
)

var names = []string{"ChebyshevUCB", "ChebyshevUCB+"}

func build(t testing.TB, name string, prob algos.Problem, eta float64, rng *rand.Rand) *Policy {
	t.Helper()
	return algotest.New(t, name, prob, eta, rng).(*Policy)
}

func TestRegistered(t *testing.T) {
	for _, c := range []struct {
		name string
		fid  algos.Fidelity
	}{{"ChebyshevUCB", algos.Faithful}, {"ChebyshevUCB+", algos.Extension}} {
		s, err := algos.Lookup(c.name)
		if err != nil {
			t.Fatal(err)
		}
		if s.Family != "chebyshev" || s.Fidelity != c.fid || !s.UsesEta || s.Cite != "Mandow2023ChebyshevMAB" {
			t.Errorf("%s: spec %+v", c.name, s)
		}
	}
}

// Every geometry: Simulate accepts every slate (k distinct valid arms) and
// the same seeds give the same slates.
// Determinism for a seed on every geometry is checked for all fourteen
// algorithms at once in algos/all (TestEveryPolicy).

func binom(n, k int) int {
	r := 1
	for i := 1; i <= k; i++ {
		r = r * (n - k + i) / i
	}
	return r
}

func TestLattice(t *testing.T) {
	for d := 1; d <= 5; d++ {
		for h := 0; h <= 6; h++ {
			ws := Lattice(d, h)
			if want := binom(h+d-1, d-1); len(ws) != want {
				t.Fatalf("d=%d H=%d: %d points, want C(%d,%d) = %d", d, h, len(ws), h+d-1, d-1, want)
			}
			seen := map[string]bool{}
			for _, w := range ws {
				var sum float64
				var asum int
				for _, v := range w {
					if !(v > 0) {
						t.Fatalf("d=%d H=%d: non-positive weight in %v", d, h, w)
					}
					sum += v
					a := v*float64(h+d) - 1 // must be a non-negative integer
					if math.Abs(a-math.Round(a)) > 1e-9 || math.Round(a) < 0 {
						t.Fatalf("d=%d H=%d: %v is not (a+1)/(H+d)", d, h, w)
					}
					asum += int(math.Round(a))
				}
				if math.Abs(sum-1) > 1e-12 || asum != h {
					t.Fatalf("d=%d H=%d: %v sums to %v (Σa = %d)", d, h, w, sum, asum)
				}
				key := fmt.Sprint(w)
				if seen[key] {
					t.Fatalf("d=%d H=%d: duplicate %v", d, h, w)
				}
				seen[key] = true
			}
		}
	}
	if got := Lattice(2, 2); !slices.EqualFunc(got, [][]float64{{0.25, 0.75}, {0.5, 0.5}, {0.75, 0.25}}, slices.Equal) {
		t.Fatalf("Lattice(2, 2) = %v", got)
	}
}

// naiveFront is the O(n²d) definition.
func naiveFront(means [][]float64) []bool {
	front := make([]bool, len(means))
	for i := range means {
		front[i] = true
		for j := range means {
			if j != i && algos.Dominates(means[j], means[i]) {
				front[i] = false
				break
			}
		}
	}
	return front
}

// The nadir is the minimum over exactly the empirical front (checked
// against the O(n²d) definition), kept by a FrontTracker with heavy ties
// (coarse grid values make equal coordinates and duplicate points common),
// on means that evolve from call to call: a few arms at a time as in a run,
// or many at once; bit for bit, −0 included.
func TestNadir(t *testing.T) {
	// Strict domination invisible to a coordinate sum (1 + 10⁻¹⁷ == 1),
	// the dominated arm first in index order.
	var f algos.FrontTracker
	z := make([]float64, 2)
	nadir(&f, [][]float64{{1, 0}, {1, 1e-17}, {0.5, 0}}, nil, false, z) // the first call compares all
	if f.OnFront(0) || !f.OnFront(1) || f.OnFront(2) || !slices.Equal(z, []float64{1, 1e-17}) {
		t.Fatalf("front %v %v %v nadir %v, want arm 1 only, [1 1e-17]", f.OnFront(0), f.OnFront(1), f.OnFront(2), z)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 200; trial++ {
		n, d := 1+rng.IntN(40), 1+rng.IntN(5) // d = 5 written out
		grid := 2 + rng.IntN(5)
		means := make([][]float64, n)
		for i := range means {
			means[i] = make([]float64, d)
		}
		var f algos.FrontTracker
		f.Reserve(n, d)
		z := make([]float64, d)
		for step := 0; step < 20; step++ {
			var moved []int             // the arms that may have moved: repeats and unmoved arms too
			for range 1 + rng.IntN(n) { // move a few arms
				i := rng.IntN(n)
				moved = append(moved, i, rng.IntN(n))
				for l := range means[i] {
					means[i][l] = float64(rng.IntN(grid)) / float64(grid-1)
					if means[i][l] == 0 && rng.IntN(2) == 0 {
						means[i][l] = math.Copysign(0, -1) // the nadir's sign of zero too
					}
				}
			}
			nadir(&f, means, moved, step%7 == 6, z)
			want := naiveFront(means)
			got := make([]bool, n)
			for i := range got {
				got[i] = f.OnFront(i)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("trial %d step %d: front %v, want %v (means %v)", trial, step, got, want, means)
			}
			for l := range z {
				wz := math.Inf(1)
				for i, m := range means {
					if want[i] {
						wz = min(wz, m[l])
					}
				}
				if math.Float64bits(z[l]) != math.Float64bits(wz) {
					t.Fatalf("nadir %v, coordinate %d want %v", z, l, wz)
				}
			}
		}
	}
}

func setState(p *Policy, means [][]float64, counts []int) {
	for i := range means {
		copy(p.Mean[i], means[i])
		p.Count[i] = counts[i]
	}
}

// ChebyshevUCB+ by hand: n = 4, d = 2, T = 100, η = 0.5, so
// β_i = sqrt(0.5·ln(4·2·100²)/(2N_i)) = sqrt(0.25·ln 80000 / N_i).
// Front {A, B, C} (D is dominated by all), nadir z = (0.2, 0.1).
func TestChebyshevUCBPlusByHand(t *testing.T) {
	prob := algos.Problem{N: 4, D: 2, K: 3, T: 100}
	p := build(t, "ChebyshevUCB+", prob, 0.5, rand.New(rand.NewPCG(1, 1)))
	means := [][]float64{{0.9, 0.1}, {0.5, 0.5}, {0.2, 0.8}, {0.1, 0.05}}
	counts := []int{100, 100, 400, 2}
	setState(p, means, counts)
	beta := func(n float64) float64 { return math.Sqrt(0.25 * math.Log(80000) / n) }
	b100, b400, b2 := beta(100), beta(400), beta(2) // ≈ 0.1680, 0.0840, 1.1879
	want := []float64{
		min(0.9+b100-0.2, 0.1+b100-0.1) / 2, // A: ≈ 0.0840
		min(0.5+b100-0.2, 0.5+b100-0.1) / 2, // B: ≈ 0.2340
		min(0.2+b400-0.2, 0.8+b400-0.1) / 2, // C: ≈ 0.0420
		min(0.1+b2-0.2, 0.05+b2-0.1) / 2,    // D: ≈ 0.5439
	}
	slate := make([]int, 3)
	p.Select(200, slate)
	if !slices.Equal(slate, []int{3, 1, 0}) { // with z = 0 it would be [3 1 2]
		t.Fatalf("slate %v, want [3 1 0]", slate)
	}
	if !slices.Equal(p.nadir, []float64{0.2, 0.1}) {
		t.Fatalf("nadir %v, want [0.2 0.1]", p.nadir)
	}
	for i, w := range want {
		if math.Abs(p.score(i)-w) > 1e-12 {
			t.Errorf("score of arm %d = %v, want %v", i, p.score(i), w)
		}
	}
	// The standard bonus does not depend on t.
	p.Select(1e6, slate)
	if !slices.Equal(slate, []int{3, 1, 0}) {
		t.Fatalf("t = 10⁶: slate %v, want [3 1 0]", slate)
	}
}

// ChebyshevUCB, H = 2, d = 2: the lattice is (1/4, 3/4), (1/2, 1/2),
// (3/4, 1/4). Front P1..P5 with nadir z = (0.1, 0.1); with tiny bonuses the
// three weights pick P4, P3, P2 respectively (hand-computed below), so the
// choice reveals which weight was drawn: it must match the draw
// rng.IntN(3) of an identical stream, and be uniform.
func TestChebyshevUCBWeightDraw(t *testing.T) {
	prob := algos.Problem{N: 6, D: 2, K: 1, T: 1000}
	p := New(algos.Config{Problem: prob, Eta: 0.001, Params: map[string]float64{"divisions": 2}, Rand: rand.New(rand.NewPCG(5, 6))})
	twin := rand.New(rand.NewPCG(5, 6))
	// Differences to z: P1 (0, .8), P2 (.3, .7), P3 (.55, .55), P4 (.7, .3), P5 (.8, 0).
	// w = (1/4, 3/4): P4 min(.175, .225) = .175 beats P3 .1375, P2 .075.
	// w = (1/2, 1/2): P3 .275 beats P2, P4 .15.
	// w = (3/4, 1/4): P2 min(.225, .175) = .175 beats P3 .1375, P4 .075.
	// Q = (0.3, 0.3) is dominated (by P3), and scores at most .1 + bonus.
	means := [][]float64{{0.1, 0.9}, {0.4, 0.8}, {0.65, 0.65}, {0.8, 0.4}, {0.9, 0.1}, {0.3, 0.3}}
	setState(p, means, []int{10, 10, 10, 10, 10, 10})
	byWeight := []int{3, 2, 1}
	freq := make([]int, 6)
	slate := make([]int, 1)
	const R = 3000
	for r := 0; r < R; r++ {
		p.Select(100, slate)
		if want := byWeight[twin.IntN(3)]; slate[0] != want {
			t.Fatalf("round %d: chose %d, want %d", r, slate[0], want)
		}
		freq[slate[0]]++
	}
	chi := 0.0
	for _, i := range byWeight {
		e := float64(R) / 3
		chi += (float64(freq[i]) - e) * (float64(freq[i]) - e) / e
	}
	if chi > 20 { // 2 degrees of freedom
		t.Fatalf("weight draws not uniform: frequencies %v (χ² = %.1f)", freq, chi)
	}
}

// ChebyshevUCB's UCB1 bonus sqrt(2η ln t / N_i) grows with t. With H = 0
// (the single weight (1/2, 1/2)), η = 0.5, front P1..P5 (z = (0.1, 0.1)),
// P3 with N = 100 and the dominated Q = (0.3, 0.3) with N = 25:
// Q wins iff 0.2 + sqrt(ln t)/5 > 0.55 + sqrt(ln t)/10, iff ln t > 12.25,
// iff t > e^12.25 ≈ 208981.
func TestChebyshevUCBBonusGrowsWithT(t *testing.T) {
	prob := algos.Problem{N: 6, D: 2, K: 1, T: 1000}
	p := New(algos.Config{Problem: prob, Eta: 0.5, Params: map[string]float64{"divisions": 0}, Rand: rand.New(rand.NewPCG(1, 1))})
	means := [][]float64{{0.1, 0.9}, {0.4, 0.8}, {0.65, 0.65}, {0.8, 0.4}, {0.9, 0.1}, {0.3, 0.3}}
	setState(p, means, []int{100, 100, 100, 100, 100, 25})
	slate := make([]int, 1)
	for _, c := range []struct{ t, want int }{{1000, 2}, {200000, 2}, {220000, 5}, {1000000, 5}} {
		p.Select(c.t, slate)
		if slate[0] != c.want {
			t.Errorf("t = %d: chose %d, want %d", c.t, slate[0], c.want)
		}
		b := math.Sqrt(math.Log(float64(c.t)) / 25)
		if want := min(0.3+b-0.1, 0.3+b-0.1) / 2; math.Abs(p.score(5)-want) > 1e-12 {
			t.Errorf("t = %d: score of Q = %v, want %v", c.t, p.score(5), want)
		}
	}
}

// TestNoiselessPlaysFront: see algotest.CheckPlaysFront.
func TestNoiselessPlaysFront(t *testing.T) { algotest.CheckPlaysFront(t, "ChebyshevUCB+") }

func TestSelectAllocFree(t *testing.T) { algotest.CheckSelectAllocFree(t, names, 0.3) }

// BenchmarkSelect times whole runs and learned-state rounds in the paper's
// d = 5 setting (algotest.BenchmarkRuns).
func BenchmarkSelect(b *testing.B) {
	algotest.BenchmarkRuns(b, names, 0.3)
}

// TestSelectDoesNotAllocate: not on the first call after New, nor later,
// when the front moves (the FrontTracker reserved in New).
func TestSelectDoesNotAllocate(t *testing.T) {
	const n, d = 150, 5
	for _, name := range names {
		fresh := func() *Policy {
			p := build(t, name, algos.Problem{N: n, D: d, K: 6, T: 1000}, 0.1, rand.New(rand.NewPCG(1, 1)))
			rng := rand.New(rand.NewPCG(2, 2))
			for i := range n {
				for l := range d {
					p.Mean[i][l] = rng.Float64()
				}
				p.Count[i] = 2 + i%5
			}
			return p
		}
		slate := make([]int, 6)
		if m := algotest.FirstCallMallocs(3, func() func() {
			p := fresh()
			return func() { p.Select(300, slate) }
		}); m != 0 {
			t.Errorf("%s: first Select after New allocated %d times", name, m)
		}
		p := fresh()
		p.Select(300, slate)
		round := 301
		if a := testing.AllocsPerRun(20, func() {
			for _, i := range slate { // the played arms move
				p.Mean[i][round%d] += 0.01
			}
			p.Select(round, slate)
			round++
		}); a != 0 {
			t.Errorf("%s: Select allocates %v times per call", name, a)
		}
	}
}

// TestScoresBitIdentical: Select's scores (score, and the candidates'
// scores, their terms taken in another order) are the loop's
// min_l w_l·((μ̂_il + β_i) − z_l) from +Inf bit for bit, −0 and zero counts
// included, for both algorithms and d = 2 to 6.
func TestScoresBitIdentical(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 5))
	for trial := range 600 {
		d, n := 2+trial%5, 1+rng.IntN(20)
		cfg := algos.Config{Problem: algos.Problem{N: n, D: d, K: 1, T: 100}, Eta: 0.3, Params: map[string]float64{"divisions": 3}, Rand: rand.New(rand.NewPCG(uint64(trial), 1))}
		p := NewPlus(cfg)
		if trial%2 == 1 {
			p = New(cfg)
		}
		for i := range n {
			p.Count[i] = rng.IntN(4)
			for l := range d {
				switch rng.IntN(4) {
				case 0:
					p.Mean[i][l] = math.Copysign(0, -1)
				case 1:
					p.Mean[i][l] = -rng.Float64()
				default:
					p.Mean[i][l] = float64(rng.IntN(4)) / 4
				}
			}
		}
		tt := 1 + rng.IntN(100)
		// The weights Select draws: replay the policy's stream.
		w := p.weights[0]
		c := p.c
		if p.ucb1 {
			w = p.weights[rand.New(rand.NewPCG(uint64(trial), 1)).IntN(len(p.weights))]
			c = 2 * p.eta * fmath.Log(float64(tt))
		}
		p.Select(tt, make([]int, 1))
		want := make([]float64, n)
		for i, m := range p.Mean {
			b := math.Sqrt(c / float64(max(1, p.Count[i])))
			s := math.Inf(1)
			for l, mu := range m {
				u := mu + b
				s = min(s, w[l]*(u-p.nadir[l]))
			}
			want[i] = s
			if got := p.score(i); math.Float64bits(got) != math.Float64bits(s) {
				t.Fatalf("trial %d (d = %d): score %d = %v, want %v", trial, d, i, got, s)
			}
		}
		for a, i := range p.cand.Arms {
			if got := p.cand.Scores[a]; math.Float64bits(got) != math.Float64bits(want[i]) {
				t.Fatalf("trial %d (d = %d): candidate %d's score = %v, want %v", trial, d, i, got, want[i])
			}
		}
	}
}

// TestRoundingMergedScoresDecideExactly: arm 1's UCB vector is one ulp
// above arm 0's in the coordinate that sets both scores, so arm 1's score
// is larger in exact arithmetic, but the product by w rounds both to the
// same number. The exact rule plays arm 1; the computed scores with the
// lowest index on their tie would play arm 0. Arms 2 and 3, on the front
// too, keep the nadir at 0. States (and ChebyshevUCB's weights) are drawn
// until the rounding merges the two scores.
func TestRoundingMergedScoresDecideExactly(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	for _, name := range names {
		for trial := 0; ; trial++ {
			if trial == 100000 {
				t.Fatalf("%s: no scores merged by rounding found", name)
			}
			x := 0.2 + 0.6*rng.Float64()
			prob := algos.Problem{N: 4, D: 3, K: 1, T: 1000}
			p := build(t, name, prob, 0.01, rand.New(rand.NewPCG(uint64(trial), 1)))
			setState(p, [][]float64{{x, 0.9, 0.9}, {math.Nextafter(x, 1), 0.8, 0.9}, {0.99, 0, 0}, {0, 0.95, 0.95}}, []int{1000, 1000, 1000, 1000})
			slate := make([]int, 1)
			p.Select(500, slate)
			if p.score(0) != p.score(1) || p.CompareExact(1, 0) <= 0 {
				continue // the rounding did not merge them, or the set-up differs
			}
			if slate[0] != 1 {
				t.Fatalf("%s: scores %v (arm 1's larger exactly): Select = %v, want [1]", name, []float64{p.score(0), p.score(1)}, slate)
			}
			break
		}
	}
}

// TestNadirSettersTie: arms 0, 1 and 2 each set the nadir in one
// coordinate (a, b and 0.6), with equal counts, so each scores w_ℓ·β in
// that coordinate, its minimum: equal in exact arithmetic wherever the
// weights of those coordinates are (ChebyshevUCB+ always), a tie which
// the rounding of μ̂ + β before z is subtracted splits. The exact rule
// (the lowest index among the exactly largest) must be played; states are
// drawn until the computed scores would play another arm.
func TestNadirSettersTie(t *testing.T) {
	rng := rand.New(rand.NewPCG(43, 44))
	for _, name := range names {
		for trial := 0; ; trial++ {
			if trial == 100000 {
				t.Fatalf("%s: no state whose computed scores split the tie", name)
			}
			a, b := 0.05+0.3*rng.Float64(), 0.05+0.3*rng.Float64()
			p := build(t, name, algos.Problem{N: 3, D: 3, K: 1, T: 1000}, 0.01, rand.New(rand.NewPCG(uint64(trial), 1)))
			setState(p, [][]float64{{0.7, a, 0.99}, {0.8, 0.99, b}, {0.6, 0.95, 0.95}}, []int{1000, 1000, 1000})
			slate := make([]int, 1)
			p.Select(500, slate)
			want, computed := 0, 0
			for i := 1; i < 3; i++ {
				if p.CompareExact(i, want) > 0 {
					want = i
				}
				if p.score(i) > p.score(computed) {
					computed = i
				}
			}
			if computed == want || p.CompareExact(computed, want) != 0 {
				continue // the computed scores choose the same, or the tie is not exact
			}
			if slate[0] != want {
				t.Fatalf("%s: scores %v (arms %d and %d equal exactly): Select = %v, want [%d]", name, []float64{p.score(0), p.score(1), p.score(2)}, want, computed, slate, want)
			}
			break
		}
	}
}

// TestCompareExactByExpansions: CompareExact (floating-point expansions)
// agrees with math/big's rationals (exactScore) on states with ties:
// means on a grid, nadir setters, duplicate arms.
func TestCompareExactByExpansions(t *testing.T) {
	rng := rand.New(rand.NewPCG(45, 46))
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
		var a, b big.Rat
		for i := range n {
			for j := range n {
				if got, want := p.CompareExact(i, j), p.exactScore(i, &a).Cmp(p.exactScore(j, &b)); got != want {
					t.Fatalf("trial %d: arms %d, %d: CompareExact %d, math/big %d", trial, i, j, got, want)
				}
			}
		}
	}
}

// TestSelectRuledOutExact: the arms scoreCandidates rules out by one term
// are in no exact top k. Over rounds of moving states (grids, twins and
// arms one ulp apart, so that exact ties and near ties occur, and the
// memo's guesses go stale), Select plays the exact top k of all arms
// (math/big, the lowest index first on ties), and every candidate's score
// is score's bit for bit.
func TestSelectRuledOutExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(73, 74))
	ruled := 0
	for trial := range 300 {
		name := names[trial%2]
		d, n := 2+trial%5, 2+rng.IntN(60)
		k := 1 + rng.IntN(min(n, 6))
		cfg := algos.Config{Problem: algos.Problem{N: n, D: d, K: k, T: 1000}, Eta: 0.3, Params: map[string]float64{"divisions": 2}, Rand: rand.New(rand.NewPCG(uint64(trial), 9))}
		p := NewPlus(cfg)
		if name == "ChebyshevUCB" {
			p = New(cfg)
		}
		for round := range 8 {
			algotest.MoveArms(rng, &p.Stats, round)
			slate := make([]int, k)
			p.Select(2+round, slate)
			ruled += n - len(p.cand.Arms)
			for a, i := range p.cand.Arms {
				if got, want := p.cand.Scores[a], p.score(i); math.Float64bits(got) != math.Float64bits(want) {
					t.Fatalf("trial %d round %d: candidate %d's score %v, want %v", trial, round, i, got, want)
				}
			}
			exact := make([]*big.Rat, n)
			for i := range n {
				exact[i] = p.exactScore(i, new(big.Rat))
			}
			want := make([]int, n)
			for i := range want {
				want[i] = i
			}
			slices.SortStableFunc(want, func(a, b int) int { return exact[b].Cmp(exact[a]) })
			if !slices.Equal(slate, want[:k]) {
				t.Fatalf("trial %d round %d (%s, d = %d, n = %d): slate %v, exact top %d %v", trial, round, name, d, n, slate, k, want[:k])
			}
		}
	}
	if ruled < 1000 {
		t.Fatalf("%d arms ruled out: the test does not exercise it", ruled)
	}
}
