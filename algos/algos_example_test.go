package algos_test

import (
	"fmt"
	"log"
	"math/rand/v2"

	"thv/algos"
	_ "thv/algos/all" // registers every algorithm (one family: import its package)
	"thv/envs"
)

// One run of a registered algorithm, built from the registry by name,
// against a noisy bandit over one of the paper's synthetic instances: 20
// arms on a concave 2-D front, slates of 3 arms, 300 rounds. The last
// slate is compared with an optimal one.
func ExampleSimulate() {
	inst, err := envs.Generate(envs.Concave, 2, 20, 1)
	if err != nil {
		log.Fatal(err)
	}
	const k, T, sigma = 3, 300, 0.1
	spec, err := algos.Lookup("THV-UCB")
	if err != nil {
		log.Fatal(err)
	}
	prob := algos.Problem{N: inst.N(), D: inst.D(), K: k, T: T, Sigma: sigma}
	policy, err := spec.NewPolicy(prob, 0.1, nil, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		log.Fatal(err)
	}
	bandit, err := envs.NewBandit(inst, sigma, 7)
	if err != nil {
		log.Fatal(err)
	}
	trace, err := algos.Simulate(policy, bandit, k, T, algos.DefaultMinPulls, nil)
	if err != nil {
		log.Fatal(err)
	}
	bench := algos.ComputeBenchmarks(inst, k, nil)
	fmt.Printf("HV of the last slate %.4f, V* %.4f\n", trace.HV[T-1], bench.VStar)
	// Output: HV of the last slate 0.6505, V* 0.6639
}

// Run does the same from a RunSpec, which fixes every seed, and measures
// the run against its benchmarks: here the learning THV-UCB against the
// RandomK baseline on the same 3-D instance and noise, 1,000 rounds each.
func ExampleRun() {
	inst, err := envs.Generate(envs.Linear, 3, 24, 2)
	if err != nil {
		log.Fatal(err)
	}
	bench := algos.ComputeBenchmarks(inst, 3, nil)
	for _, name := range []string{"THV-UCB", "RandomK"} {
		spec := algos.RunSpec{Algo: name, Eta: 0.1, Instance: inst, K: 3, T: 1000, Sigma: 0.1, Seed: 1, MinPulls: algos.DefaultMinPulls, Window: 100}
		_, sum, err := algos.Run(spec, bench)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%-8s HV over the last 100 rounds %.4f (HV(G*) %.4f)\n", name, sum.HVLast, sum.HVGreedy)
	}
	// Output:
	// THV-UCB  HV over the last 100 rounds 0.0926 (HV(G*) 0.1286)
	// RandomK  HV over the last 100 rounds 0.0391 (HV(G*) 0.1286)
}
