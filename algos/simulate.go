package algos

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"

	"thv/envs"
	"thv/hv"
)

// DefaultMinPulls is the paper's m0: every arm is pulled this many times by
// the shared round-robin initialisation before any policy decides.
const DefaultMinPulls = 2

// InitRounds returns the number of forced initialisation rounds,
// ⌈n·m0/k⌉.
func InitRounds(n, k, m0 int) int { return (n*m0 + k - 1) / k }

// Trace is what one simulated run records.
type Trace struct {
	HV     []float64 // HV(S_t) on the true means, t = 1..T
	Slates [][]int   // S_t, t = 1..T, arms sorted ascending
	// InitRounds is how many rounds the forced initialisation played,
	// t₀ = ⌈n·m0/k⌉ (the first InitRounds entries of HV and Slates).
	InitRounds int
}

// Simulate runs policy p for T rounds with slates of k arms against bandit b.
// While some arm has fewer than m0 pulls the slate is the k arms with the
// fewest pulls (lowest index first on ties) for every policy alike; then
// p.Select decides. Each round it records HV(S_t) on the true means.
func Simulate(p Policy, b *envs.Bandit, k, T, m0 int, ref []float64) (*Trace, error) {
	return SimulateWith(p, b, k, T, m0, ref, nil)
}

// How the forced initialisation breaks ties between arms of equally few
// pulls ("ties broken arbitrarily", Algorithm 1).
const (
	InitTiesLowest = "lowest_index" // the lowest index first
	InitTiesRandom = "random"       // uniformly at random
	// InitTiesNumpy: as NumPy 1.24's np.argsort(N)[:k] picks them, an
	// unstable introsort (numpysort.go), the paper's stated environment.
	InitTiesNumpy = "numpy_argsort"
)

// InitTieRules lists the rules, the default first.
var InitTieRules = []string{InitTiesLowest, InitTiesRandom, InitTiesNumpy}

// SimulateWith is Simulate with the initialisation's ties broken at random
// from ties (nil: lowest index first).
func SimulateWith(p Policy, b *envs.Bandit, k, T, m0 int, ref []float64, ties *rand.Rand) (*Trace, error) {
	return simulate(p, b, k, T, m0, ref, func(counts, slate []int) { fewestPulls(counts, slate, ties) })
}

// simulate is Simulate with the initialisation's slates chosen by pick,
// which fills slate with k arms of fewest pulls.
func simulate(p Policy, b *envs.Bandit, k, T, m0 int, ref []float64, pick func(counts, slate []int)) (*Trace, error) {
	inst := b.Instance()
	n, d := inst.N(), inst.D()
	if k < 1 || k > n {
		return nil, fmt.Errorf("slate size k = %d must be between 1 and the number of arms n = %d", k, n)
	}
	if m0 < 1 {
		return nil, fmt.Errorf("min pulls m0 = %d must be ≥ 1", m0)
	}
	if init := InitRounds(n, k, m0); T < init {
		return nil, fmt.Errorf("horizon T = %d is shorter than the forced initialisation (%d rounds for n = %d, k = %d, m0 = %d)", T, init, n, k, m0)
	}
	if ref == nil {
		ref = make([]float64, d)
	}
	tr := &Trace{HV: make([]float64, T), Slates: make([][]int, T)}
	slates := make([]int, T*k) // one allocation for every S_t
	counts := make([]int, n)
	slate := make([]int, k)
	rewards := make([][]float64, k)
	for a := range rewards {
		rewards[a] = make([]float64, d)
	}
	seen := make([]int, n) // seen[i] == t marks arm i as used in round t
	hvOf, done := newSlateHV(inst.Means, ref)
	defer done()
	initDone := false
	for t := 1; t <= T; t++ {
		if !initDone {
			initDone = !slices.ContainsFunc(counts, func(c int) bool { return c < m0 })
		}
		if initDone {
			p.Select(t, slate)
		} else {
			pick(counts, slate)
			tr.InitRounds = t
		}
		for _, i := range slate {
			if i < 0 || i >= n || seen[i] == t {
				return nil, fmt.Errorf("round %d: policy returned an invalid slate %v (need %d distinct arms in [0, %d))", t, slate, k, n)
			}
			seen[i] = t
		}
		for a, i := range slate {
			b.Pull(i, rewards[a])
			counts[i]++
		}
		p.Observe(slate, rewards)
		sorted := slates[(t-1)*k : t*k : t*k]
		copy(sorted, slate)
		sortSlate(sorted)
		tr.Slates[t-1] = sorted
		tr.HV[t-1] = hvOf(sorted)
	}
	return tr, nil
}

// sortSlate sorts a slate in increasing order: by insertion for the
// paper's few arms, where slices.Sort's generic entry costs more than the
// sort itself.
func sortSlate(s []int) {
	if len(s) > 12 {
		slices.Sort(s)
		return
	}
	for i := 1; i < len(s); i++ {
		x, j := s[i], i
		for ; j > 0 && s[j-1] > x; j-- {
			s[j] = s[j-1]
		}
		s[j] = x
	}
}

// fewestPulls fills slate with the arms of fewest pulls, lowest index first
// on ties, or in a uniformly random order on ties if ties is not nil.
func fewestPulls(counts []int, slate []int, ties *rand.Rand) {
	if ties == nil {
		fewestPullsLowest(counts, slate)
		return
	}
	idx := make([]int, len(counts))
	for i := range idx {
		idx[i] = i
	}
	if ties != nil {
		ties.Shuffle(len(idx), func(a, b int) { idx[a], idx[b] = idx[b], idx[a] })
	}
	slices.SortStableFunc(idx, func(a, b int) int { return counts[a] - counts[b] })
	copy(slate, idx[:len(slate)])
}

// fewestPullsLowest is fewestPulls without ties: the first len(slate) arms
// of the stable sort by pulls, taken one pull count at a time in index
// order, without sorting (the initialisation's counts span a level or two).
func fewestPullsLowest(counts, slate []int) {
	level := slices.Min(counts)
	for n := 0; n < len(slate); {
		next := math.MaxInt
		for i, c := range counts {
			switch {
			case c == level && n < len(slate):
				slate[n] = i
				n++
			case c > level:
				next = min(next, c)
			}
		}
		level = next
	}
}

// numpyFewestPulls fills slate as np.argsort(counts)[:k] does in NumPy 1.24.
func numpyFewestPulls(counts, slate []int) {
	idx := make([]int, len(counts))
	numpyArgsort(counts, idx)
	copy(slate, idx[:len(slate)])
}

// newSlateHV memoises HV of sorted slates: after learning, policies replay
// the same few slates, and the hypervolume of a slate never changes. A
// slate of at most 6 arms below 1024 (the paper's) is keyed by its arms
// packed into 10-bit fields of an integer (packSlate), kept in a table of
// this run's own; others by 3 bytes per arm in a map. The table is the
// run's alone: a memo shared by the runs on one instance cost more in
// locks and cache misses than the volumes it spared (docs/performance.md).
// The table and the calculator's scratch come from earlier runs of the
// process (slateScratch); done gives them back.
func newSlateHV(means [][]float64, ref []float64) (hvOf func(sorted []int) float64, done func()) {
	sc, _ := slateScratch.Get().(*slateMemo)
	if sc == nil {
		sc = new(slateMemo)
	}
	sc.packed.reset()
	packed, calc := &sc.packed, &sc.calc
	var memo map[string]float64
	key := make([]byte, 0, 32)
	volume := func(sorted []int) float64 {
		pts := sc.pts[:0]
		for _, i := range sorted {
			pts = append(pts, means[i])
		}
		sc.pts = pts
		return calc.Volume(pts, ref)
	}
	var lastKey uint64 // the last packed slate (0: none) and its volume
	var lastHV float64
	hvOf = func(sorted []int) float64 {
		if k, ok := packSlate(sorted, len(means)); ok {
			if k == lastKey { // a learned policy replays its slate
				return lastHV
			}
			v, ok := packed.get(k)
			if !ok {
				v = volume(sorted)
				packed.put(k, v)
			}
			lastKey, lastHV = k, v
			return v
		}
		key = key[:0]
		for _, i := range sorted {
			key = append(key, byte(i), byte(i>>8), byte(i>>16))
		}
		if v, ok := memo[string(key)]; ok {
			return v
		}
		v := volume(sorted)
		if memo == nil {
			memo = map[string]float64{}
		}
		memo[string(key)] = v
		return v
	}
	done = func() {
		clear(sc.pts[:cap(sc.pts)]) // keep no instance's means alive
		slateScratch.Put(sc)
	}
	return hvOf, done
}

// slateMemo is the scratch of newSlateHV that runs pass on to later runs:
// a run's table grows to thousands of slots, and growing it anew by
// doubling cost about as much as filling it.
type slateMemo struct {
	packed slateTable
	calc   hv.Calculator
	pts    [][]float64
}

var slateScratch sync.Pool

// packSlate packs a sorted slate of at most 6 arms of fewer than 1023 into
// 10-bit fields, arm i as i+1 (so that slates of different sizes differ: a
// field of 0 is no arm), and reports whether it could. A packed slate is
// never 0.
func packSlate(sorted []int, n int) (uint64, bool) {
	if len(sorted) == 0 || len(sorted) > 6 || n > 1<<10-1 {
		return 0, false
	}
	var k uint64
	for _, i := range sorted {
		k = k<<10 | uint64(i+1)
	}
	return k, true
}

// slateTable maps packed slates to volumes: an open-addressing hash table
// with linear probing, key 0 marking an empty slot. A lookup touches one
// slot (one cache line) where the runtime's map reads a control word and
// then a slot; the memo looks up once per round that changes the slate.
// The zero value is an empty table.
type slateTable struct {
	slots []slateSlot // a power of two of them, at most half full
	n     int
}

type slateSlot struct {
	key uint64
	hv  float64
}

// hashSlate mixes every bit of a packed slate into every bit of its hash
// (the finaliser of SplitMix64): the table's slot is the hash's low bits.
func hashSlate(key uint64) uint64 {
	key ^= key >> 33
	key *= 0xff51afd7ed558ccd
	return key ^ key>>33
}

// reset empties the table. It keeps the slots unless the last run filled
// few of them: a sparse table only spreads a small run's lookups.
func (t *slateTable) reset() {
	switch {
	case 8*t.n < len(t.slots):
		t.slots = nil
	case t.n > 0:
		clear(t.slots)
	}
	t.n = 0
}

func (t *slateTable) get(key uint64) (float64, bool) {
	if t.n == 0 {
		return 0, false
	}
	mask := len(t.slots) - 1
	for i := int(hashSlate(key)) & mask; ; i = (i + 1) & mask {
		switch t.slots[i].key {
		case key:
			return t.slots[i].hv, true
		case 0:
			return 0, false
		}
	}
}

// put sets key's volume (key ≠ 0).
func (t *slateTable) put(key uint64, hv float64) {
	if 2*(t.n+1) > len(t.slots) {
		t.grow()
	}
	mask := len(t.slots) - 1
	for i := int(hashSlate(key)) & mask; ; i = (i + 1) & mask {
		switch t.slots[i].key {
		case key:
			t.slots[i].hv = hv
			return
		case 0:
			t.slots[i] = slateSlot{key, hv}
			t.n++
			return
		}
	}
}

func (t *slateTable) grow() {
	old := t.slots
	t.slots, t.n = make([]slateSlot, max(64, 2*len(old))), 0
	for _, s := range old {
		if s.key != 0 {
			t.put(s.key, s.hv)
		}
	}
}

// Alpha is the greedy approximation factor 1 − 1/e.
var Alpha = 1 - 1/math.E

// Summary holds the metrics of one run.
type Summary struct {
	HVLast      float64 // mean HV(S_t) over the last Window rounds
	Window      int
	VStar       float64 // exact best size-k hypervolume V*
	HVGreedy    float64 // HV(G*), the greedy benchmark on true means
	VAlpha      float64 // the V the α-regret uses: V* for d = 2, HV(G*) for d ≥ 3, as the paper does
	RegretAlpha float64 // Σ_t (α·VAlpha − HV(S_t)), signed, as the paper defines it
	RegretPos   float64 // Σ_t max(0, α·VAlpha − HV(S_t)), what the paper's tables print
	RegretExact float64 // Σ_t (V* − HV(S_t)), against the exact V* for every d
}

// The readings of how the α-regret is counted (metrics.regret_rounds,
// metrics.benchmark_d3; docs/fidelity.md), the default first of each.
const (
	RegretAllRounds = "all"        // every round t = 1..T, as eq. (regret-alpha) sums
	RegretAfterInit = "after_init" // only t > t₀, after the forced initialisation

	BenchmarkAlphaGreedy = "alpha_hv_greedy" // d ≥ 3: α·HV(G*)
	BenchmarkGreedy      = "hv_greedy"       // d ≥ 3: HV(G*) itself stands for αV*
)

// RegretRoundRules and BenchmarkRules list the readings, the default first.
var (
	RegretRoundRules = []string{RegretAllRounds, RegretAfterInit}
	BenchmarkRules   = []string{BenchmarkAlphaGreedy, BenchmarkGreedy}
)

// RegretReading says how Summarize counts the regrets: SkipRounds leaves
// the first rounds out of every sum, and GreedyBenchmark (d ≥ 3 only) puts
// HV(G*) itself where α·HV(G*) stands. The zero value is the default.
type RegretReading struct {
	SkipRounds      int
	GreedyBenchmark bool
}

// Summarize computes the metrics of a trajectory. d selects which benchmark
// the α-regret uses (the paper: V* for d = 2, HV(G*) for d ≥ 3).
func Summarize(hvs []float64, d int, vStar, hvGreedy float64, window int) Summary {
	return SummarizeWith(hvs, d, vStar, hvGreedy, window, RegretReading{})
}

// SummarizeWith is Summarize under a reading of the regret.
func SummarizeWith(hvs []float64, d int, vStar, hvGreedy float64, window int, r RegretReading) Summary {
	s := Summary{VStar: vStar, HVGreedy: hvGreedy, Window: min(window, len(hvs))}
	s.VAlpha = hvGreedy
	if d == 2 {
		s.VAlpha = vStar
	}
	target := float64(Alpha * s.VAlpha) // rounded: it feeds target − h
	if r.GreedyBenchmark && d > 2 {
		target = s.VAlpha
	}
	for _, h := range hvs[min(r.SkipRounds, len(hvs)):] {
		s.RegretAlpha += target - h
		s.RegretPos += max(0, target-h)
		s.RegretExact += vStar - h
	}
	if s.Window > 0 {
		var sum float64
		for _, h := range hvs[len(hvs)-s.Window:] {
			sum += h
		}
		s.HVLast = sum / float64(s.Window)
	}
	return s
}
