package all

import (
	"fmt"
	"testing"

	"thv/algos"
	"thv/envs"
)

// BenchmarkPaperRun times one whole run of every algorithm in the paper's
// d = 4 and d = 5 settings (concave front, seed 0, η = 0.1).
func BenchmarkPaperRun(b *testing.B) {
	for _, s := range []struct {
		d, n, k, T int
		sigma      float64
	}{{4, 100, 5, 5000, 0.025}, {5, 150, 6, 5000, 0.02}} {
		in, _ := envs.Generate(envs.Concave, s.d, s.n, 0)
		bench := algos.ComputeBenchmarks(in, s.k, nil)
		for _, spec := range algos.All() {
			b.Run(fmt.Sprintf("d=%d/%s", s.d, spec.Name), func(b *testing.B) {
				for b.Loop() {
					if _, _, err := algos.Run(algos.RunSpec{Algo: spec.Name, Eta: 0.1, Instance: in, K: s.k, T: s.T, Sigma: s.sigma, MinPulls: 2, Window: 100}, bench); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
