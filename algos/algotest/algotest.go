// Package algotest holds the benchmark helpers shared by the algorithm
// families' tests, so that every family is timed the same way.
package algotest

import (
	"testing"

	"thv/algos"
	"thv/envs"
)

// D5 is the paper's d = 5 setting (concave front, instance seed 0).
var D5 = struct {
	D, N, K, T int
	Sigma      float64
}{5, 150, 6, 5000, 0.02}

// NewD5 returns the registered algorithm name, with confidence parameter
// eta, and a bandit of the d = 5 setting, both seeded by seed.
func NewD5(tb testing.TB, name string, eta float64, seed uint64) (algos.Policy, *envs.Bandit) {
	tb.Helper()
	s := D5
	in, err := envs.Generate(envs.Concave, s.D, s.N, 0)
	if err != nil {
		tb.Fatal(err)
	}
	spec, err := algos.Lookup(name)
	if err != nil {
		tb.Fatal(err)
	}
	p, err := spec.NewPolicy(algos.Problem{N: s.N, D: s.D, K: s.K, T: s.T, Sigma: s.Sigma}, eta, nil, envs.NewStream(seed, "policy"))
	if err != nil {
		tb.Fatal(err)
	}
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
