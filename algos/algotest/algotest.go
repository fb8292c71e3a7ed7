// Package algotest holds the benchmark helpers shared by the algorithm
// families' tests, so that every family is timed the same way.
package algotest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"thv/algos"
	"thv/envs"
)

// D5 is the paper's d = 5 setting (concave front, instance seed 0).
var D5 = struct {
	D, N, K, T int
	Sigma      float64
}{5, 150, 6, 5000, 0.02}

// New builds the registered algorithm name for prob with confidence
// parameter eta and random stream rng, failing tb on any error.
func New(tb testing.TB, name string, prob algos.Problem, eta float64, rng *rand.Rand) algos.Policy {
	tb.Helper()
	spec, err := algos.Lookup(name)
	if err != nil {
		tb.Fatal(err)
	}
	p, err := spec.NewPolicy(prob, eta, nil, rng)
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// RunOn simulates name on instance in for T rounds with slates of k arms:
// the bandit's noise is envSigma (seeded by envSeed), the policy is told
// σ = policySigma and draws from rng.
func RunOn(tb testing.TB, name string, in *envs.Instance, eta, envSigma, policySigma float64, k, T int, envSeed uint64, rng *rand.Rand) *algos.Trace {
	tb.Helper()
	p := New(tb, name, algos.Problem{N: in.N(), D: in.D(), K: k, T: T, Sigma: policySigma}, eta, rng)
	b, err := envs.NewBandit(in, envSigma, envSeed)
	if err != nil {
		tb.Fatal(err)
	}
	tr, err := algos.Simulate(p, b, k, T, algos.DefaultMinPulls, nil)
	if err != nil {
		tb.Fatalf("%s: %v", name, err)
	}
	return tr
}

// NewD5 returns the registered algorithm name, with confidence parameter
// eta, and a bandit of the d = 5 setting, both seeded by seed.
func NewD5(tb testing.TB, name string, eta float64, seed uint64) (algos.Policy, *envs.Bandit) {
	tb.Helper()
	s := D5
	in, err := envs.Generate(envs.Concave, s.D, s.N, 0)
	if err != nil {
		tb.Fatal(err)
	}
	p := New(tb, name, algos.Problem{N: s.N, D: s.D, K: s.K, T: s.T, Sigma: s.Sigma}, eta, envs.NewStream(seed, "policy"))
	bandit, err := envs.NewBandit(in, s.Sigma, seed)
	if err != nil {
		tb.Fatal(err)
	}
	return p, bandit
}

// BenchmarkRuns times, for each algorithm, whole d = 5 runs through
// algos.Simulate ("run": environment and per-round hypervolume included,
// ns/round reported) and one Select in the state reached after a run
// ("learned": the policy's own cost per round).
func BenchmarkRuns(b *testing.B, names []string, eta float64) {
	for _, name := range names {
		b.Run(name+"/run", func(b *testing.B) {
			for b.Loop() {
				p, bandit := NewD5(b, name, eta, 0)
				if _, err := algos.Simulate(p, bandit, D5.K, D5.T, algos.DefaultMinPulls, nil); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*D5.T), "ns/round")
		})
		b.Run(name+"/learned", func(b *testing.B) {
			p, bandit := NewD5(b, name, eta, 0)
			if _, err := algos.Simulate(p, bandit, D5.K, D5.T, algos.DefaultMinPulls, nil); err != nil {
				b.Fatal(err)
			}
			slate := make([]int, D5.K)
			b.ReportAllocs()
			for b.Loop() {
				p.Select(D5.T+1, slate)
			}
		})
	}
}

// Simulate runs the registered algorithm name on the instance (g, d, n,
// seed) for T rounds with slates of k arms, noise sigma and confidence
// parameter eta; the policy's stream is derived from seed.
func Simulate(tb testing.TB, name string, g envs.Geometry, d, n, k, T int, sigma, eta float64, seed uint64) (*algos.Trace, *envs.Instance) {
	tb.Helper()
	inst, err := envs.Generate(g, d, n, seed)
	if err != nil {
		tb.Fatal(err)
	}
	return RunOn(tb, name, inst, eta, sigma, sigma, k, T, seed, envs.NewStream(seed, "policy/"+name)), inst
}

// CheckPlaysFront runs name without noise (σ = 0) in the paper's d = 2
// setting (n = 36, k = 3) for 50,000 rounds, seeds 1–3, and checks the last
// 200 slates. On the clusters, concave and convex fronts they must hold only
// Pareto-optimal arms. On the linear front that is not a property of a
// scalarising algorithm (the front is flat, and the clip at 0.01 makes some
// generated front arms dominated with a larger coordinate sum, so the true
// top-k of a scalarisation can hold a dominated arm); there a slate must be
// closed upward: every arm that dominates a played arm is played too. The
// linear fronts have near-ties (score gaps of 10⁻³ and below) that η = 0.01
// does not resolve in 50,000 rounds, so the linear runs use η = 10⁻⁶.
func CheckPlaysFront(t *testing.T, name string) {
	t.Helper()
	for _, g := range envs.Geometries {
		for seed := uint64(1); seed <= 3; seed++ {
			t.Run(fmt.Sprintf("%s/%s/seed%d", name, g, seed), func(t *testing.T) {
				eta := 0.01
				if g == envs.Linear {
					eta = 1e-6
				}
				tr, inst := Simulate(t, name, g, 2, 36, 3, 50000, 0, eta, seed)
				means := inst.Means
				for r, s := range tr.Slates[len(tr.Slates)-200:] {
					for _, i := range s {
						for j := range means {
							if !algos.Dominates(means[j], means[i]) {
								continue
							}
							if g != envs.Linear {
								t.Fatalf("round %d of the last 200: arm %d (%v) is dominated by arm %d (%v)", r, i, means[i], j, means[j])
							}
							if !slices.Contains(s, j) {
								t.Fatalf("round %d of the last 200: arm %d (%v) is played without arm %d (%v) that dominates it", r, i, means[i], j, means[j])
							}
						}
					}
				}
			})
		}
	}
}

// CheckSelectAllocFree checks that Select allocates nothing once a d = 5
// policy has run for a while.
func CheckSelectAllocFree(t *testing.T, names []string, eta float64) {
	t.Helper()
	for _, name := range names {
		p, b := NewD5(t, name, eta, 1)
		if _, err := algos.Simulate(p, b, D5.K, 200, algos.DefaultMinPulls, nil); err != nil {
			t.Fatal(err)
		}
		slate := make([]int, D5.K)
		if a := testing.AllocsPerRun(100, func() { p.Select(201, slate) }); a != 0 {
			t.Errorf("%s: Select allocates %v times per call", name, a)
		}
	}
}

// FirstCallMallocs counts the heap allocations of a first call: prepare
// sets up afresh (a new policy) and returns the call. Like
// testing.AllocsPerRun it runs with GOMAXPROCS(1), and it reads the
// process-wide malloc count, which another goroutine (the runtime's, or a
// loaded emulator's timing) can move: so it tries up to attempts fresh
// setups and returns the fewest. A call that allocates does so every
// time, so the minimum still catches it.
func FirstCallMallocs(attempts int, prepare func() func()) uint64 {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	fewest := ^uint64(0)
	for range attempts {
		call := prepare()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		call()
		runtime.ReadMemStats(&after)
		fewest = min(fewest, after.Mallocs-before.Mallocs)
		if fewest == 0 {
			break
		}
	}
	return fewest
}

// MoveArms changes the statistics of s as a test of exact decisions
// wants them: in round 0 every arm, later about a third of them, each
// observed once more with means on a grid of quarters or uniform, and
// some made a twin of an earlier arm or one ulp from it (exact ties and
// near ties); every changed arm is declared by Touch.
func MoveArms(rng *rand.Rand, s *algos.Stats, round int) {
	for i := range s.Mean {
		if round > 0 && rng.IntN(3) != 0 {
			continue
		}
		s.Count[i]++
		for l := range s.Mean[i] {
			if rng.IntN(3) == 0 {
				s.Mean[i][l] = float64(rng.IntN(4)) / 4
			} else {
				s.Mean[i][l] = rng.Float64()
			}
		}
		if i > 0 && rng.IntN(4) == 0 {
			j := rng.IntN(i)
			copy(s.Mean[i], s.Mean[j])
			s.Count[i] = s.Count[j]
			if rng.IntN(2) == 0 {
				l := rng.IntN(len(s.Mean[i]))
				s.Mean[i][l] = math.Nextafter(s.Mean[i][l], float64(rng.IntN(2)*2-1))
			}
		}
		s.Touch(i)
	}
}
