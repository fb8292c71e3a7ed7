package hvscalar

import (
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"

	"thv/algos"
	"thv/algos/algotest"
)

var names = []string{"HVScalarUCB", "HVScalarUCB+"}

func build(t testing.TB, name string, prob algos.Problem, eta float64, rng *rand.Rand) *Policy {
	t.Helper()
	return algotest.New(t, name, prob, eta, rng).(*Policy)
}

func TestRegistered(t *testing.T) {
	for _, c := range []struct{ name, cite string }{{"HVScalarUCB", "zhang2020random"}, {"HVScalarUCB+", "Zhang2023HypervolumeRegret"}} {
		s, err := algos.Lookup(c.name)
		if err != nil {
			t.Fatal(err)
		}
		if s.Family != "hvscalar" || s.Fidelity != algos.Faithful || !s.UsesEta || s.Cite != c.cite {
			t.Errorf("%s: spec %+v", c.name, s)
		}
	}
}

// Determinism for a seed on every geometry is checked for all fourteen
// algorithms at once in algos/all (TestEveryPolicy).

// Directions lie on the positive unit sphere and are uniform there: for
// d = 2 the angle is uniform on [0, π/2]; for d = 3 each coordinate of a
// uniform point on S² is uniform on [0, 1] (Archimedes).
func TestDirection(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const R, bins = 20000, 10
	for _, d := range []int{2, 3, 5} {
		freq := make([]int, bins)
		lam := make([]float64, d)
		for r := 0; r < R; r++ {
			Direction(rng, lam)
			var ss float64
			for _, v := range lam {
				if !(v > 0) {
					t.Fatalf("d=%d: non-positive coordinate in %v", d, lam)
				}
				ss += v * v
			}
			if math.Abs(ss-1) > 1e-12 {
				t.Fatalf("d=%d: |λ|² = %v", d, ss)
			}
			var u float64 // uniform on [0, 1) when λ is uniform
			switch d {
			case 2:
				u = math.Atan2(lam[1], lam[0]) / (math.Pi / 2)
			case 3:
				u = lam[0]
			default:
				continue
			}
			freq[min(bins-1, int(u*bins))]++
		}
		if d > 3 {
			continue
		}
		chi, e := 0.0, float64(R)/bins
		for _, f := range freq {
			chi += (float64(f) - e) * (float64(f) - e) / e
		}
		if chi > 40 { // 9 degrees of freedom: p ≈ 10⁻⁵
			t.Errorf("d=%d: directions not uniform: %v (χ² = %.1f)", d, freq, chi)
		}
	}
}

func setState(p *Policy, means [][]float64, counts []int) {
	for i := range means {
		copy(p.Mean[i], means[i])
		p.Count[i] = counts[i]
	}
}

// HVScalarUCB with r = (0.1, 0.1), n = 4, η = 0.01, T = 100, N_i = 1000:
// β = sqrt(0.01·ln(4·2·100²)/2000) ≈ 0.0075. A = (0.05, 0.9) is below r in
// its first coordinate whatever the bonus, so it scores 0 for every λ
// (with r ignored it would beat D for λ ≈ (0.1, 0.995)); B > C > D
// coordinate-wise, so they rank first, second, third for every λ.
// The scores themselves are checked against the same λ drawn from an
// identical stream.
func TestHVScalarUCBByHand(t *testing.T) {
	prob := algos.Problem{N: 4, D: 2, K: 3, T: 100, Ref: []float64{0.1, 0.1}}
	p := build(t, "HVScalarUCB", prob, 0.01, rand.New(rand.NewPCG(9, 9)))
	twin := rand.New(rand.NewPCG(9, 9))
	means := [][]float64{{0.05, 0.9}, {0.5, 0.5}, {0.3, 0.3}, {0.2, 0.25}}
	setState(p, means, []int{1000, 1000, 1000, 1000})
	b := math.Sqrt(0.01 * math.Log(80000) / 2000)
	slate := make([]int, 3)
	lam := make([]float64, 2)
	for r := 0; r < 500; r++ {
		p.Select(100+r, slate)
		if !slices.Equal(slate, []int{1, 2, 3}) {
			t.Fatalf("round %d: slate %v, want [1 2 3]", r, slate)
		}
		Direction(twin, lam)
		for i, m := range means {
			s := max(0, min((m[0]+b-0.1)/lam[0], (m[1]+b-0.1)/lam[1]))
			if got, want := max(0, p.achievement(i)), s; math.Abs(got-want) > 1e-12*max(1, want) {
				t.Fatalf("round %d: score of arm %d = %v, want %v", r, i, got, want)
			}
		}
	}
}

// HVScalarUCB+ with k = 2: A = (0.9, 0.9) dominates every arm, so it wins
// the first direction every round; the second slot must go to another arm
// (B, C or D, whichever is best in the second direction λ^(2), replayed
// from an identical stream), and all three must occur.
func TestHVScalarUCBPlusDistinctPerDirection(t *testing.T) {
	prob := algos.Problem{N: 4, D: 2, K: 2, T: 100}
	p := build(t, "HVScalarUCB+", prob, 0.01, rand.New(rand.NewPCG(2, 3)))
	twin := rand.New(rand.NewPCG(2, 3))
	means := [][]float64{{0.9, 0.9}, {0.8, 0.1}, {0.1, 0.8}, {0.4, 0.4}}
	setState(p, means, []int{500, 1000, 1000, 1000})
	c := 0.01 * math.Log(80000) / 2
	slate := make([]int, 2)
	lam1, lam2 := make([]float64, 2), make([]float64, 2)
	seen := make([]int, 4)
	for r := 0; r < 2000; r++ {
		p.Select(100+r, slate)
		Direction(twin, lam1)
		Direction(twin, lam2)
		best, bestV := -1, math.Inf(-1)
		for i := 1; i < 4; i++ {
			b := math.Sqrt(c / 1000)
			if v := min((means[i][0]+b)/lam2[0], (means[i][1]+b)/lam2[1]); v > bestV {
				best, bestV = i, v
			}
		}
		if slate[0] != 0 || slate[1] != best {
			t.Fatalf("round %d: slate %v, want [0 %d] (λ2 = %v)", r, slate, best, lam2)
		}
		seen[slate[1]]++
	}
	for i := 1; i < 4; i++ {
		if seen[i] == 0 {
			t.Errorf("arm %d never second: %v", i, seen)
		}
	}
}

// Slot j uses direction j: with B, C, D alone (k = 3), all rounds are
// permutations of {B, C, D}; which arm comes first depends on λ^(1).
func TestHVScalarUCBPlusSlotOrder(t *testing.T) {
	prob := algos.Problem{N: 3, D: 2, K: 3, T: 100}
	p := build(t, "HVScalarUCB+", prob, 0.01, rand.New(rand.NewPCG(4, 4)))
	means := [][]float64{{0.8, 0.1}, {0.1, 0.8}, {0.4, 0.4}}
	setState(p, means, []int{1000, 1000, 1000})
	first := make([]int, 3)
	slate := make([]int, 3)
	for r := 0; r < 600; r++ {
		p.Select(100+r, slate)
		s := slices.Clone(slate)
		slices.Sort(s)
		if !slices.Equal(s, []int{0, 1, 2}) {
			t.Fatalf("slate %v is not a permutation of the 3 arms", slate)
		}
		first[slate[0]]++
	}
	for i, f := range first {
		if f == 0 {
			t.Errorf("arm %d never first: %v", i, first)
		}
	}
}

// TestNoiselessPlaysFront: see algotest.CheckPlaysFront.
func TestNoiselessPlaysFront(t *testing.T) { algotest.CheckPlaysFront(t, "HVScalarUCB+") }

func TestSelectAllocFree(t *testing.T) { algotest.CheckSelectAllocFree(t, names, 0.3) }

// BenchmarkSelect times whole runs and learned-state rounds in the paper's
// d = 5 setting (algotest.BenchmarkRuns).
func BenchmarkSelect(b *testing.B) {
	algotest.BenchmarkRuns(b, names, 0.3)
}

// TestAchievementBitIdentical: achievement, written out for d = 2–5, is
// the loop's min_ℓ (U_iℓ − r_ℓ)/λ_ℓ from +Inf bit for bit, on gaps with
// −0, +0, negative values and infinities, d = 1 to 5.
func TestAchievementBitIdentical(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 6))
	vals := []float64{0, math.Copysign(0, -1), 0.25, -0.5, 1, math.Inf(1), math.Inf(-1)}
	for trial := range 2000 {
		d, n := 1+trial%5, 1+rng.IntN(10)
		p := build(t, names[trial%2], algos.Problem{N: n, D: d, K: 1, T: 100}, 0.3, rand.New(rand.NewPCG(uint64(trial), 2)))
		for a := range p.gap {
			if rng.IntN(2) == 0 {
				p.gap[a] = vals[rng.IntN(len(vals))]
			} else {
				p.gap[a] = rng.NormFloat64()
			}
		}
		Direction(rng, p.lambda)
		for i := range n {
			s := math.Inf(1)
			for l, g := range p.gap[i*d : (i+1)*d] {
				s = min(s, g/p.lambda[l])
			}
			if got := p.achievement(i); math.Float64bits(got) != math.Float64bits(s) {
				t.Fatalf("trial %d (d = %d): achievement(%d) = %v, want %v", trial, d, i, got, s)
			}
		}
	}
}

// TestSelectPlusExact: HVScalarUCB+ trying the last round's slate first
// and ruling arms out without dividing chooses what the plain loop over
// every arm in index order, in exact arithmetic, chooses (the same
// directions), over rounds of a bandit-like state with equal means,
// duplicate arms, gaps ≤ 0 and a reference point. Ruling out tries the
// coordinate of largest λ first, from a transposed copy of the gaps: the
// copy must match them bit for bit.
func TestSelectPlusExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(61, 62))
	ruled := 0
	for trial := range 400 {
		d, n := 1+trial%5, 2+rng.IntN(60)
		k := 1 + rng.IntN(min(n, 6))
		seed := uint64(trial)
		p := build(t, "HVScalarUCB+", algos.Problem{N: n, D: d, K: k, T: 1000}, 0.3, rand.New(rand.NewPCG(seed, 9)))
		stream := rand.New(rand.NewPCG(seed, 9)) // the directions p draws, in step
		if trial%3 == 0 {
			for l := range p.ref {
				p.ref[l] = 0.1 * float64(rng.IntN(3))
			}
		}
		for round := range 8 {
			for i := range n {
				if round > 0 && rng.IntN(4) != 0 {
					continue // most arms keep their statistics between rounds
				}
				p.Count[i]++
				for l := range d {
					switch rng.IntN(4) {
					case 0:
						p.Mean[i][l] = float64(rng.IntN(4)) / 4 // ties
					case 1:
						p.Mean[i][l] = rng.Float64() * 0.3 // low: pruned
					default:
						p.Mean[i][l] = rng.Float64()
					}
				}
				if i > 0 && rng.IntN(6) == 0 {
					copy(p.Mean[i], p.Mean[rng.IntN(i)])
					p.Count[i] = p.Count[rng.IntN(i)]
				}
				p.Touch(i) // changed directly, after the first Select
			}
			slate := make([]int, k)
			p.Select(1+round, slate)
			for a, g := range p.gap { // the columns ruledOut's first test reads
				if i, l := a/d, a%d; math.Float64bits(p.gapT[l*n+i]) != math.Float64bits(g) {
					t.Fatalf("trial %d round %d: gapT[%d·n+%d] = %v, gap %v", trial, round, l, i, p.gapT[l*n+i], g)
				}
			}
			// The plain loop, on the same gaps and directions.
			want := make([]int, k)
			taken := make([]bool, n)
			for j := range want {
				Direction(stream, p.lambda)
				best, bestV := -1, 0.0
				for i := range n {
					if taken[i] {
						continue
					}
					v := p.achievement(i)
					if best < 0 || refBeats(p, i, v, best, bestV) {
						best, bestV = i, v
					}
				}
				want[j], taken[best] = best, true
				// Arms the visit rules out without dividing, by the best's
				// own thresholds (it may find them earlier).
				p.thresholds(bestV)
				for i := range n {
					if !taken[i] && p.ruledOut(i) {
						ruled++
					}
				}
			}
			if !slices.Equal(slate, want) {
				t.Fatalf("trial %d round %d (d = %d, n = %d): Select %v, every arm %v", trial, round, d, n, slate, want)
			}
		}
	}
	if ruled < 1000 {
		t.Fatalf("the visit could rule out %d arms: the test does not exercise it", ruled)
	}
}

// refBeats is the exact rule, written apart from the policy's: arm i, of
// computed achievement v, beats best if its achievement min_ℓ (μ̂_iℓ + β_i
// − r_ℓ)/λ_ℓ is larger in exact arithmetic (math/big), or equal and
// i < best; computed values more than 10⁻⁹ apart decide alone.
func refBeats(p *Policy, i int, v float64, best int, bestV float64) bool {
	if math.Abs(v-bestV) > 1e-9*(math.Abs(v)+math.Abs(bestV)) {
		return v > bestV
	}
	exact := func(a int) *big.Rat {
		var m *big.Rat
		b := math.Sqrt(p.c / float64(max(1, p.Count[a])))
		for l, mu := range p.Mean[a] {
			q := new(big.Rat).Add(new(big.Rat).SetFloat64(mu), new(big.Rat).SetFloat64(b))
			q.Sub(q, new(big.Rat).SetFloat64(p.ref[l]))
			q.Quo(q, new(big.Rat).SetFloat64(p.lambda[l]))
			if m == nil || q.Cmp(m) < 0 {
				m = q
			}
		}
		return m
	}
	c := exact(i).Cmp(exact(best))
	return c > 0 || c == 0 && i < best
}

// TestRoundingMergedAchievementsDecideExactly: arm 1's UCB vector is one
// ulp above arm 0's in every coordinate, so its achievement is larger in
// exact arithmetic for every λ; the quotients by λ often round both to the
// same number (and the power d of HVScalarUCB's scalarization more often
// still). Both algorithms must play arm 1 every round; the computed values
// with the lowest index on their tie would play arm 0 in those rounds.
func TestRoundingMergedAchievementsDecideExactly(t *testing.T) {
	for _, name := range names {
		p := build(t, name, algos.Problem{N: 3, D: 3, K: 1, T: 1000}, 0.01, rand.New(rand.NewPCG(3, 4)))
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
				t.Fatalf("%s round %d: Select = %v, want [1] (achievements %v, %v)", name, r, slate, p.achievement(0), p.achievement(1))
			}
			if p.achievement(0) == p.achievement(1) {
				merged++
			}
		}
		if merged == 0 {
			t.Fatalf("%s: the quotients never rounded to the same number: the test does not exercise the rule", name)
		}
		t.Logf("%s: %d of 2000 rounds with merged achievements", name, merged)
	}
}

// TestCompareExactByExpansions: CompareExact (floating-point expansions)
// agrees with math/big's rationals on states with ties (means on a grid,
// duplicates, gaps ≤ 0, a reference point), for both algorithms.
func TestCompareExactByExpansions(t *testing.T) {
	rng := rand.New(rand.NewPCG(73, 74))
	for trial := range 300 {
		name := names[trial%2]
		n, d := 3+rng.IntN(10), 2+rng.IntN(4)
		p := build(t, name, algos.Problem{N: n, D: d, K: 1, T: 1000}, 0.01, rand.New(rand.NewPCG(uint64(trial), 1)))
		if trial%3 == 0 {
			for l := range p.ref {
				p.ref[l] = 0.25 * float64(rng.IntN(3))
			}
		}
		for i := range n {
			for l := range d {
				p.Mean[i][l] = float64(rng.IntN(7)) / 6
				if rng.IntN(2) == 0 {
					p.Mean[i][l] = rng.Float64()
				}
			}
			p.Count[i] = 1 + rng.IntN(3)
		}
		Direction(rng, p.lambda)
		var a, b big.Rat
		for i := range n {
			for j := range n {
				x, y := p.exactAchievement(i, &a), p.exactAchievement(j, &b)
				if !p.plus {
					if x.Sign() < 0 {
						x.SetInt64(0)
					}
					if y.Sign() < 0 {
						y.SetInt64(0)
					}
				}
				if got, want := p.CompareExact(i, j), x.Cmp(y); got != want {
					t.Fatalf("%s trial %d: arms %d, %d: CompareExact %d, math/big %d", name, trial, i, j, got, want)
				}
			}
		}
	}
}

// TestSelectRuledOutExact: HVScalarUCB, ranking only the arms that
// ruledOut leaves, plays the exact top k of max(0, achievement) over every
// arm (math/big, the lowest index first on ties), on states with
// duplicate arms (exact ties) and arms one ulp apart in a mean (near ties
// that rounding may equal or reverse), at the origin and off it; and it
// does rule arms out.
func TestSelectRuledOutExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(71, 72))
	ruled := 0
	for trial := range 300 {
		d, n := 1+trial%5, 2+rng.IntN(60)
		k := 1 + rng.IntN(min(n, 6))
		p := build(t, "HVScalarUCB", algos.Problem{N: n, D: d, K: k, T: 1000}, 0.3, rand.New(rand.NewPCG(uint64(trial), 7)))
		if trial%4 == 0 {
			for l := range p.ref {
				p.ref[l] = 0.1 * float64(rng.IntN(3))
			}
		}
		for round := range 6 {
			algotest.MoveArms(rng, &p.Stats, round)
			slate := make([]int, k)
			p.Select(1+round, slate)
			ruled += n - len(p.cand.Arms)
			exact := make([]*big.Rat, n)
			for i := range n {
				b := math.Sqrt(p.c / float64(max(1, p.Count[i])))
				m := new(big.Rat)
				for l, mu := range p.Mean[i] {
					q := new(big.Rat).Add(new(big.Rat).SetFloat64(mu), new(big.Rat).SetFloat64(b))
					q.Sub(q, new(big.Rat).SetFloat64(p.ref[l]))
					q.Quo(q, new(big.Rat).SetFloat64(p.lambda[l]))
					if l == 0 || q.Cmp(m) < 0 {
						m = q
					}
				}
				if m.Sign() < 0 {
					m.SetInt64(0)
				}
				exact[i] = m
			}
			want := make([]int, n)
			for i := range want {
				want[i] = i
			}
			slices.SortStableFunc(want, func(a, b int) int { return exact[b].Cmp(exact[a]) })
			if !slices.Equal(slate, want[:k]) {
				t.Fatalf("trial %d round %d (d = %d, n = %d, r = %v): slate %v, exact top %d %v", trial, round, d, n, p.ref, slate, k, want[:k])
			}
		}
	}
	if ruled < 1000 {
		t.Fatalf("%d arms ruled out: the test does not exercise it", ruled)
	}
}

// TestNextAbove: the scan four at a time finds what the plain loop finds,
// from every start, thresholds NaN and ±0 and values NaN and ±0 included.
func TestNextAbove(t *testing.T) {
	rng := rand.New(rand.NewPCG(81, 82))
	values := []float64{math.NaN(), 0, math.Copysign(0, -1), 0.25, 0.5, 1, math.Inf(1), math.Inf(-1)}
	for trial := range 2000 {
		column := make([]float64, rng.IntN(20))
		for i := range column {
			column[i] = values[rng.IntN(len(values))]
		}
		thr := values[rng.IntN(len(values))]
		for start := 0; start <= len(column); start++ {
			want := start
			for want < len(column) && column[want] <= thr {
				want++
			}
			if got := nextAbove(column, start, thr); got != want {
				t.Fatalf("trial %d: nextAbove(%v, %d, %v) = %d, want %d", trial, column, start, thr, got, want)
			}
		}
	}
}
