package algos

import (
	"fmt"
	"math/rand/v2"

	"thv/envs"
	"thv/hv"
)

// RunSpec fully determines one bandit run.
type RunSpec struct {
	Algo     string             // algorithm name, as the paper prints it
	Eta      float64            // η, for algorithms that have it
	Params   map[string]float64 // fixed parameters (defaults for those missing)
	Instance *envs.Instance
	K, T     int
	Sigma    float64
	Seed     uint64 // environment seed: noise streams and the policy's stream
	MinPulls int
	// InitTies breaks the forced initialisation's ties: InitTiesLowest
	// ("" too) or InitTiesRandom.
	InitTies string
	Ref      []float64 // nil: the origin
	Window   int       // HV_last window
}

// Benchmarks are the hindsight values a run is measured against.
type Benchmarks struct {
	VStar    float64 // exact best size-k hypervolume
	SStar    []int   // an optimal slate
	HVGreedy float64 // HV(G*)
	GStar    []int   // the greedy slate on true means, in selection order
}

// ComputeBenchmarks returns V* (exact) and HV(G*) for slates of k arms.
func ComputeBenchmarks(inst *envs.Instance, k int, ref []float64) Benchmarks {
	s, v := hv.BestSubset(inst.Means, k, ref)
	g := hv.Greedy(inst.Means, k, ref)
	pts := make([][]float64, len(g))
	for a, i := range g {
		pts[a] = inst.Means[i]
	}
	return Benchmarks{VStar: v, SStar: s, HVGreedy: hv.Volume(pts, ref), GStar: g}
}

// Run simulates spec and summarises it against the benchmarks.
func Run(spec RunSpec, bench Benchmarks) (*Trace, Summary, error) {
	algo, err := Lookup(spec.Algo)
	if err != nil {
		return nil, Summary{}, err
	}
	inst := spec.Instance
	if err := inst.Validate(); err != nil {
		return nil, Summary{}, err
	}
	if !algo.UsesEta {
		spec.Eta = 0
	}
	prob := Problem{N: inst.N(), D: inst.D(), K: spec.K, T: spec.T, Sigma: spec.Sigma, Ref: spec.Ref}
	pol, err := algo.NewPolicy(prob, spec.Eta, spec.Params, envs.NewStream(spec.Seed, "policy/"+algo.Name))
	if err != nil {
		return nil, Summary{}, err
	}
	bandit, err := envs.NewBandit(inst, spec.Sigma, spec.Seed)
	if err != nil {
		return nil, Summary{}, err
	}
	var ties *rand.Rand
	switch spec.InitTies {
	case "", InitTiesLowest:
	case InitTiesRandom:
		// Its own stream: the same initial slates for every algorithm of a
		// seed, as the shared initialisation must be.
		ties = envs.NewStream(spec.Seed, "init-ties")
	default:
		return nil, Summary{}, fmt.Errorf("init ties %q: want %s or %s", spec.InitTies, InitTiesLowest, InitTiesRandom)
	}
	tr, err := SimulateWith(pol, bandit, spec.K, spec.T, spec.MinPulls, spec.Ref, ties)
	if err != nil {
		return nil, Summary{}, fmt.Errorf("%s: %w", algo.Name, err)
	}
	return tr, Summarize(tr.HV, inst.D(), bench.VStar, bench.HVGreedy, spec.Window), nil
}
