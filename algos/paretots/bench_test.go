package paretots

import (
	"testing"

	"thv/algos"
	"thv/envs"
)

// benchSetting is the paper's d = 5 setting on the concave front.
var benchSetting = struct {
	d, n, k, T int
	sigma      float64
}{5, 150, 6, 5000, 0.02}

func benchPolicy(b testing.TB, name string, seed uint64) (algos.Policy, *envs.Bandit) {
	s := benchSetting
	in, err := envs.Generate(envs.Concave, s.d, s.n, 0)
	if err != nil {
		b.Fatal(err)
	}
	spec, err := algos.Lookup(name)
	if err != nil {
		b.Fatal(err)
	}
	p, err := spec.NewPolicy(algos.Problem{N: s.n, D: s.d, K: s.k, T: s.T, Sigma: s.sigma}, 0, nil, envs.NewStream(seed, "policy"))
	if err != nil {
		b.Fatal(err)
	}
	bandit, err := envs.NewBandit(in, s.sigma, seed)
	if err != nil {
		b.Fatal(err)
	}
	return p, bandit
}

// BenchmarkSelect times whole runs of the paper's d = 5 setting (n = 150,
// k = 6, T = 5000, σ = 0.02, concave front) through algos.Simulate, which
// includes the environment and the per-round hypervolume; ns/round is the
// time per round.
func BenchmarkSelect(b *testing.B) {
	for _, name := range []string{"ParetoTS", "ParetoTS+"} {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				p, bandit := benchPolicy(b, name, 0)
				if _, err := algos.Simulate(p, bandit, benchSetting.k, benchSetting.T, algos.DefaultMinPulls, nil); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchSetting.T), "ns/round")
		})
	}
}

// BenchmarkSelectLearned times one Select call in the state reached after
// a whole d = 5 run: the policy's own cost per round, without the
// simulation around it.
func BenchmarkSelectLearned(b *testing.B) {
	for _, name := range []string{"ParetoTS", "ParetoTS+"} {
		b.Run(name, func(b *testing.B) {
			p, bandit := benchPolicy(b, name, 0)
			if _, err := algos.Simulate(p, bandit, benchSetting.k, benchSetting.T, algos.DefaultMinPulls, nil); err != nil {
				b.Fatal(err)
			}
			slate := make([]int, benchSetting.k)
			b.ReportAllocs()
			for b.Loop() {
				p.Select(benchSetting.T+1, slate)
			}
		})
	}
}
