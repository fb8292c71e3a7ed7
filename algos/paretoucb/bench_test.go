package paretoucb

import (
	"testing"

	"thv/algos"
	"thv/envs"
)

func benchRun(b *testing.B, name string) {
	in, _ := envs.Generate(envs.Concave, 5, 150, 0)
	bench := algos.Benchmarks{VStar: 1, HVGreedy: 1}
	for b.Loop() {
		if _, _, err := algos.Run(algos.RunSpec{Algo: name, Eta: 0.1, Instance: in, K: 6, T: 5000, Sigma: 0.02, MinPulls: 2, Window: 100}, bench); err != nil {
			b.Fatal(err)
		}
	}
}
