package algos

import (
	"cmp"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"

	"thv/envs"
)

func TestTopK(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 500; trial++ {
		n := 1 + rng.IntN(30)
		k := 1 + rng.IntN(n)
		scores := make([]float64, n)
		for i := range scores {
			scores[i] = float64(rng.IntN(5)) // many ties
		}
		idx := make([]int, n)
		for i := range idx {
			idx[i] = i
		}
		sort.SliceStable(idx, func(a, b int) bool { return scores[idx[a]] > scores[idx[b]] })
		got := make([]int, k)
		TopK(scores, got)
		if !slices.Equal(got, idx[:k]) {
			t.Fatalf("TopK(%v, %d) = %v, want %v", scores, k, got, idx[:k])
		}
	}
	// Outside the documented range too, TopK keeps cmp.Compare's order
	// (NaN below every number, −0 equal to +0), the lower index first.
	special := []float64{math.NaN(), math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1), 1, 1, -1}
	for trial := 0; trial < 2000; trial++ {
		n := 1 + rng.IntN(12)
		k := 1 + rng.IntN(n)
		scores := make([]float64, n)
		for i := range scores {
			scores[i] = special[rng.IntN(len(special))]
		}
		idx := make([]int, n)
		for i := range idx {
			idx[i] = i
		}
		slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(scores[b], scores[a]) })
		got := make([]int, k)
		TopK(scores, got)
		if !slices.Equal(got, idx[:k]) {
			t.Fatalf("TopK(%v, %d) = %v, want %v", scores, k, got, idx[:k])
		}
	}
}

func TestStats(t *testing.T) {
	s := NewStats(3, 2)
	s.Observe([]int{2, 0}, [][]float64{{1, 0}, {0.5, 0.5}})
	s.Observe([]int{2}, [][]float64{{0, 1}})
	if s.Count[2] != 2 || s.Count[0] != 1 || s.Count[1] != 0 {
		t.Fatalf("counts %v", s.Count)
	}
	if !slices.Equal(s.Mean[2], []float64{0.5, 0.5}) || !slices.Equal(s.Mean[0], []float64{0.5, 0.5}) {
		t.Fatalf("means %v", s.Mean)
	}
}

func TestSummarize(t *testing.T) {
	hvs := []float64{0.1, 0.2, 0.9, 1.0}
	s := Summarize(hvs, 2, 1.0, 0.8, 2)
	a := Alpha * 1.0
	if s.HVLast != 0.95 || s.VAlpha != 1.0 {
		t.Fatalf("HVLast %v VAlpha %v", s.HVLast, s.VAlpha)
	}
	if want := 4*a - 2.2; math.Abs(s.RegretAlpha-want) > 1e-12 {
		t.Fatalf("RegretAlpha %v want %v", s.RegretAlpha, want)
	}
	if want := (a - 0.1) + (a - 0.2); math.Abs(s.RegretPos-want) > 1e-12 {
		t.Fatalf("RegretPos %v want %v", s.RegretPos, want)
	}
	if want := 4 - 2.2; math.Abs(s.RegretExact-want) > 1e-12 {
		t.Fatalf("RegretExact %v want %v", s.RegretExact, want)
	}
	if s3 := Summarize(hvs, 3, 1.0, 0.8, 100); s3.VAlpha != 0.8 || s3.Window != 4 {
		t.Fatalf("d=3 uses HV(G*): VAlpha %v window %d", s3.VAlpha, s3.Window)
	}
}

// lastArms always plays the k highest-index arms and records what it saw.
type lastArms struct {
	Stats
	n        int
	selected int
}

func (p *lastArms) Select(t int, slate []int) {
	p.selected++
	for a := range slate {
		slate[a] = p.n - 1 - a
	}
}

type badPolicy struct{ Stats }

func (*badPolicy) Select(t int, slate []int) {
	for a := range slate {
		slate[a] = 0
	}
}

func TestSimulateForcedInit(t *testing.T) {
	in, _ := envs.Generate(envs.Concave, 2, 36, 1)
	b, _ := envs.NewBandit(in, 0.05, 1)
	p := &lastArms{Stats: NewStats(36, 2), n: 36}
	tr, err := Simulate(p, b, 3, 50, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	// 36 arms × 2 pulls / 3 per round = 24 round-robin rounds, in index order.
	for r := 0; r < 24; r++ {
		first := (3 * r) % 36
		if want := []int{first, first + 1, first + 2}; !slices.Equal(tr.Slates[r], want) {
			t.Fatalf("init round %d played %v, want %v", r+1, tr.Slates[r], want)
		}
	}
	if p.selected != 26 {
		t.Fatalf("policy selected %d times, want 26", p.selected)
	}
	for _, c := range p.Count {
		if c < 2 {
			t.Fatalf("counts after run %v", p.Count)
		}
	}
	if len(tr.HV) != 50 || tr.HV[49] <= 0 {
		t.Fatalf("trajectory %v", tr.HV)
	}
}

func TestSimulateErrors(t *testing.T) {
	in, _ := envs.Generate(envs.Concave, 2, 36, 1)
	b, _ := envs.NewBandit(in, 0.05, 1)
	for _, c := range []struct {
		k, T, m0 int
		want     string
	}{{37, 100, 2, "between 1 and the number of arms"}, {3, 23, 2, "shorter than the forced initialisation"}, {3, 100, 0, "m0"}} {
		_, err := Simulate(&lastArms{Stats: NewStats(36, 2), n: 36}, b, c.k, c.T, c.m0, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("k=%d T=%d m0=%d: err %v, want %q", c.k, c.T, c.m0, err, c.want)
		}
	}
	if _, err := Simulate(&badPolicy{NewStats(36, 2)}, b, 3, 100, 2, nil); err == nil || !strings.Contains(err.Error(), "invalid slate") {
		t.Fatalf("duplicate arms accepted: %v", err)
	}
}

// TestRegisterOrdersDoesNotGate: Register takes any well-formed new name;
// All lists the paper's algorithms in PaperOrder, then the others by name;
// malformed, duplicate (also up to case) and constructor-less registrations
// panic with a message naming the problem.
func TestRegisterOrdersDoesNotGate(t *testing.T) {
	saved := registry
	registry = map[string]Spec{}
	t.Cleanup(func() { registry = saved })
	newPolicy := func(Config) Policy { return nil }
	for _, name := range []string{"Zeta", "RandomK", "Alpha-2", "THV-UCB", "beta.v1+", "ParetoUCB+"} {
		Register(Spec{Name: name, New: newPolicy})
	}
	var got []string
	for _, s := range All() {
		got = append(got, s.Name)
	}
	if want := []string{"THV-UCB", "ParetoUCB+", "RandomK", "Alpha-2", "Zeta", "beta.v1+"}; !slices.Equal(got, want) {
		t.Fatalf("All() = %v, want %v", got, want)
	}
	if s, err := Lookup("Zeta"); err != nil || s.Name != "Zeta" {
		t.Fatalf("Lookup(Zeta) = %v, %v", s.Name, err)
	}
	for _, tc := range []struct{ name, want string }{
		{"", "empty algorithm name"},
		{"a/b", `contains '/'`},
		{"run/x", `contains '/'`},
		{"x y", `contains ' '`},
		{"UCB_2", `contains '_'`},
		{"UCB:2", `contains ':'`},
		{"η-UCB", "want an ASCII letter first"},
		{"UCB-η", `contains 'η'`},
		{"..", "want an ASCII letter first"},
		{"-UCB", "want an ASCII letter first"},
		{"eta=1", `contains '='`},
		{"A\x00", `contains '\x00'`},
		{strings.Repeat("A", maxNameLen+1), "more than 64"},
		{"Zeta", "duplicate registration of Zeta"},
		{"ZETA", "ZETA differs from the registered Zeta only in case"},
		{"NoConstructor", "NoConstructor has no constructor"},
	} {
		func() {
			defer func() {
				r := recover()
				msg, _ := r.(string)
				if !strings.HasPrefix(msg, "algos: ") || !strings.Contains(msg, tc.want) {
					t.Errorf("Register(%q) panicked with %v, want a message containing %q", tc.name, r, tc.want)
				}
			}()
			s := Spec{Name: tc.name, New: newPolicy}
			if tc.name == "NoConstructor" {
				s.New = nil
			}
			Register(s)
		}()
	}
	if len(registry) != 6 {
		t.Fatalf("refused registrations changed the registry: %d entries", len(registry))
	}
	Register(Spec{Name: strings.Repeat("A", maxNameLen), New: newPolicy}) // the longest accepted
}

// TestBetterIsCompare: TopK's order is cmp.Compare's, then the index, on
// every pair of scores from a set with ±0, ±Inf and NaN.
func TestBetterIsCompare(t *testing.T) {
	vals := []float64{math.NaN(), math.Inf(-1), -1, math.Copysign(0, -1), 0, 0.5, math.Nextafter(0.5, 1), math.Inf(1)}
	for _, s := range vals {
		for _, u := range vals {
			for _, ij := range [][2]int{{0, 1}, {1, 0}, {2, 2}} {
				want := cmp.Compare(s, u) > 0 || cmp.Compare(s, u) == 0 && ij[0] < ij[1]
				if got := better(s, ij[0], u, ij[1]); got != want {
					t.Errorf("better(%v, %d, %v, %d) = %v, want %v", s, ij[0], u, ij[1], got, want)
				}
			}
		}
	}
}

// exactScores are exact values (rationals) behind computed scores.
type exactScores []*big.Rat

func (x exactScores) CompareExact(i, j int) int { return x[i].Cmp(x[j]) }

// TestTopKExact: TopKExact on computed scores, each within its error bound
// of an exact value, chooses what sorting by the exact values (lowest
// index on exact ties) chooses, where TopK on the computed scores alone
// often does not; scores far apart never reach the comparison.
func TestTopKExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	const rel = 0x1p-45
	differ := 0
	for trial := 0; trial < 3000; trial++ {
		n := 1 + rng.IntN(30)
		k := 1 + rng.IntN(n)
		exact := make(exactScores, n)
		scores := make([]float64, n)
		for i := range n {
			v := float64(rng.IntN(6)-2) / 3 // ties in exact arithmetic, negative values too
			if rng.IntN(3) == 0 {
				v = rng.NormFloat64()
			}
			exact[i] = new(big.Rat).SetFloat64(v)
			// computed within the bound, as rounding leaves it
			scores[i] = v * (1 + rel/4*(2*rng.Float64()-1))
		}
		idx := make([]int, n)
		for i := range idx {
			idx[i] = i
		}
		slices.SortStableFunc(idx, func(a, b int) int { return -exact[a].Cmp(exact[b]) })
		got := make([]int, k)
		TopKExact(scores, rel, 0, got, exact)
		if !slices.Equal(got, idx[:k]) {
			t.Fatalf("trial %d: TopKExact %v, by exact values %v (scores %v)", trial, got, idx[:k], scores)
		}
		plain := make([]int, k)
		TopK(scores, plain)
		if !slices.Equal(plain, got) {
			differ++
		}
		// Told a bar that k scores reach (the k-th largest, or below it),
		// TopKExactAbove chooses the same; so it does with an absolute
		// error instead of the relative one.
		sorted := slices.Sorted(slices.Values(scores))
		bar := sorted[n-k]
		for _, b := range []float64{bar, bar - math.Abs(bar)*rng.Float64(), math.Inf(-1)} {
			above := make([]int, k)
			TopKExactAbove(scores, rel, 0, b, above, exact)
			if !slices.Equal(above, idx[:k]) {
				t.Fatalf("trial %d: TopKExactAbove(bar %v) %v, by exact values %v (scores %v)", trial, b, above, idx[:k], scores)
			}
		}
		const abs = 0x1p-40
		for i := range n {
			v, _ := exact[i].Float64()
			scores[i] = v + abs/4*(2*rng.Float64()-1)
		}
		sorted = slices.Sorted(slices.Values(scores))
		above := make([]int, k)
		TopKExactAbove(scores, 0, abs, sorted[n-k], above, exact)
		if !slices.Equal(above, idx[:k]) {
			t.Fatalf("trial %d: TopKExactAbove with abs %v, by exact values %v (scores %v)", trial, above, idx[:k], scores)
		}
	}
	if differ < 100 {
		t.Fatalf("TopK on the computed scores differed in %d trials only: the test draws too few ties", differ)
	}
}

// TestCompareSums: the sign of Σa − Σb by expansions is math/big's, on
// permutations (equal sums that the rounded sums often tell apart),
// neighbours one ulp apart, cancelling terms of wide magnitude range.
func TestCompareSums(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 34))
	for trial := 0; trial < 20000; trial++ {
		n := 1 + rng.IntN(8)
		a := make([]float64, n)
		for j := range a {
			a[j] = rng.NormFloat64() * math.Ldexp(1, rng.IntN(60)-30)
		}
		b := slices.Clone(a)
		switch trial % 3 {
		case 0:
			rng.Shuffle(n, func(x, y int) { b[x], b[y] = b[y], b[x] })
		case 1:
			j := rng.IntN(n)
			b[j] = math.Nextafter(b[j], math.Inf(2*rng.IntN(2)-1))
		default:
			b = append(b, -b[0]*0.5, -b[0]*0.5)
		}
		var x, y Sum
		want := x.Reset().AddAll(a).Cmp(y.Reset().AddAll(b))
		if got := CompareSums(a, b); got != want {
			t.Fatalf("trial %d: CompareSums(%v, %v) = %d, want %d", trial, a, b, got, want)
		}
	}
}

// TestTopBySumExactTies: the overflowing layer's members are chosen by
// their exact sums: arms whose coordinates are permutations of each other
// tie (the lowest index wins), however the sums formed in coordinate order
// differ.
func TestTopBySumExactTies(t *testing.T) {
	rng := rand.New(rand.NewPCG(35, 36))
	differ := 0
	for trial := 0; trial < 2000; trial++ {
		x, y, z := rng.Float64(), rng.Float64(), rng.Float64()
		// One layer: the permutations are mutually non-dominated.
		pts := [][]float64{{x, y, z}, {y, z, x}, {z, x, y}, {y, x, z}}
		sums := make([]float64, len(pts))
		CoordSums(pts, sums)
		var l Layers
		slate := make([]int, 1)
		l.TopBySum(pts, slate)
		if slate[0] != 0 {
			t.Fatalf("trial %d: %v (sums %v): TopBySum %v, want [0]", trial, pts, sums, slate)
		}
		if slices.Max(sums) != sums[0] {
			differ++
		}
	}
	if differ == 0 {
		t.Fatal("the rounded sums never differed: the test does not exercise the rule")
	}
}

// TestExpansion: the sign of an expansion of sums and products is
// math/big's, on terms that cancel exactly or to the last bit.
func TestExpansion(t *testing.T) {
	rng := rand.New(rand.NewPCG(37, 38))
	for trial := 0; trial < 20000; trial++ {
		var x Expansion
		var s Sum
		x.Reset()
		s.Reset()
		var terms [][2]float64
		for range 1 + rng.IntN(10) {
			a := rng.NormFloat64() * math.Ldexp(1, rng.IntN(40)-20)
			b := float64(rng.IntN(7)-3) / 3
			if rng.IntN(3) == 0 {
				b = rng.NormFloat64()
			}
			terms = append(terms, [2]float64{a, b})
		}
		// Cancel some terms exactly, others to the last bit.
		for _, tm := range terms[:rng.IntN(len(terms)+1)] {
			b := -tm[1]
			if rng.IntN(2) == 0 {
				b = math.Nextafter(b, 0)
			}
			terms = append(terms, [2]float64{tm[0], b})
		}
		for _, tm := range terms {
			x.AddProduct(tm[0], tm[1])
			s.AddProduct(tm[0], tm[1])
		}
		if !x.Ok() {
			t.Fatalf("trial %d: expansion out of range on in-range terms", trial)
		}
		if got, want := x.Sign(), s.v.Sign(); got != want {
			t.Fatalf("trial %d: sign %d, math/big %d (terms %v)", trial, got, want, terms)
		}
	}
}

// A product that underflows to 0 is not a zero term: 0.8·2⁻¹⁰⁷⁴ is
// positive in exact arithmetic, so the sum must not claim its sign is 0.
func TestExpansionUnderflowedProduct(t *testing.T) {
	tiny := math.SmallestNonzeroFloat64
	for _, c := range []struct{ a, b float64 }{{0.8, tiny}, {tiny, 0.3}, {-tiny, tiny}, {0x1p-600, 0x1p-600}} {
		var x Expansion
		x.Reset().AddProduct(c.a, c.b)
		if x.Ok() {
			t.Errorf("%g·%g: the expansion says it is exact (sign %d); the product is lost", c.a, c.b, x.Sign())
		}
	}
	var x Expansion
	x.Reset().AddProduct(0, tiny)
	x.AddProduct(-0.0, 3)
	if !x.Ok() || x.Sign() != 0 {
		t.Errorf("products with a zero factor: ok %v sign %d, want exact 0", x.Ok(), x.Sign())
	}
}
