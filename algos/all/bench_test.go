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
	for _, s := range paperSettings[2:] {
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

// setting is one of params.yaml's settings.
type setting struct {
	d, n, k, T int
	sigma      float64
}

// paperSettings are params.yaml's four settings.
var paperSettings = []setting{{2, 36, 3, 2000, 0.05}, {3, 60, 4, 3000, 0.035}, {4, 100, 5, 5000, 0.025}, {5, 150, 6, 5000, 0.02}}

// readingSettings are the paper's d = 2 and d = 3 settings, the ones a
// reading (thv readings) runs.
var readingSettings = paperSettings[:2]

// BenchmarkReadingRun times, per algorithm, the runs of one seed of a
// reading's d = 2 or d = 3 setting: one run per geometry (instance seed 0,
// environment seed 0, η = 0.1).
func BenchmarkReadingRun(b *testing.B) {
	for _, s := range readingSettings {
		var insts []*envs.Instance
		var benches []algos.Benchmarks
		for _, g := range envs.Geometries {
			in, err := envs.Generate(g, s.d, s.n, 0)
			if err != nil {
				b.Fatal(err)
			}
			insts = append(insts, in)
			benches = append(benches, algos.ComputeBenchmarks(in, s.k, nil))
		}
		for _, spec := range algos.All() {
			b.Run(fmt.Sprintf("d=%d/%s", s.d, spec.Name), func(b *testing.B) {
				for b.Loop() {
					for g, in := range insts {
						if _, _, err := algos.Run(algos.RunSpec{Algo: spec.Name, Eta: 0.1, Instance: in, K: s.k, T: s.T, Sigma: s.sigma, MinPulls: 2, Window: 100}, benches[g]); err != nil {
							b.Fatal(err)
						}
					}
				}
			})
		}
	}
}

// paperParams are params.yaml's fixed parameters.
var paperParams = map[string]map[string]float64{
	"THV-UCB":      {"delta": 0, "clip": 1},
	"ChebyshevUCB": {"divisions": 4},
	"ParetoTS+":    {"sigma_prior": 0.1},
	"RandomK":      {"once": 1},
}

// BenchmarkReadingMix is the run tasks of one seed of a reading in the
// proportions a reading has them (runMix) on the d = 2 and d = 3 settings
// (352 runs). A reading is ten such seeds, on instances of its instance
// seed.
func BenchmarkReadingMix(b *testing.B) {
	for b.Loop() {
		for _, s := range readingSettings {
			runMix(b, s, 1)
		}
	}
}

// BenchmarkPaperMix is the run tasks of two seeds of the paper pass in its
// proportions (runMix), one setting per sub-benchmark (352 runs each).
func BenchmarkPaperMix(b *testing.B) {
	for _, s := range paperSettings {
		b.Run(fmt.Sprintf("d=%d", s.d), func(b *testing.B) {
			for b.Loop() {
				runMix(b, s, 2)
			}
		})
	}
}

// runMix runs every algorithm at every η of params.yaml's grid (once for
// those without η) on the four geometries of setting s (instance seed 0),
// for environment seeds 0 to seeds − 1: 44 runs per geometry and seed.
func runMix(b *testing.B, s setting, seeds uint64) {
	etas := []float64{0.01, 0.1, 0.3, 1.0}
	for _, g := range envs.Geometries {
		in, err := envs.Generate(g, s.d, s.n, 0)
		if err != nil {
			b.Fatal(err)
		}
		bench := algos.ComputeBenchmarks(in, s.k, nil)
		for _, name := range algos.PaperOrder {
			spec, err := algos.Lookup(name)
			if err != nil {
				b.Fatal(err)
			}
			grid := etas
			if !spec.UsesEta {
				grid = etas[:1]
			}
			for _, eta := range grid {
				for seed := range seeds {
					if _, _, err := algos.Run(algos.RunSpec{Algo: name, Eta: eta, Params: paperParams[name], Instance: in, K: s.k, T: s.T, Sigma: s.sigma, Seed: seed, MinPulls: 2, Window: 100}, bench); err != nil {
						b.Fatal(err)
					}
				}
			}
		}
	}
}
