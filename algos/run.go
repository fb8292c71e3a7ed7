package algos

import (
	"fmt"

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
	// ("" too), InitTiesRandom or InitTiesNumpy.
	InitTies string
	Ref      []float64 // nil: the origin
	Window   int       // HV_last window
	// The readings of the regret (RegretRoundRules, BenchmarkRules) and of
	// η (EtaScales); "" is the default of each.
	RegretRounds string
	BenchmarkD3  string
	EtaScale     string
}

// The readings of η (eta_scale; docs/fidelity.md), the default first.
const (
	// EtaVariance: η inside the root, β = sqrt(2η·log(…)/N), as printed.
	EtaVariance = "variance"
	// EtaRadius: η multiplies the root, β = η·sqrt(2·log(…)/N), as UCB
	// code often writes a "confidence parameter". The policy is given η²,
	// which every family puts inside its root.
	EtaRadius = "radius"
)

// EtaScales lists the readings of η, the default first.
var EtaScales = []string{EtaVariance, EtaRadius}

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
	switch {
	case spec.EtaScale != "" && spec.EtaScale != EtaVariance && spec.EtaScale != EtaRadius:
		return nil, Summary{}, fmt.Errorf("eta scale %q: want one of %v", spec.EtaScale, EtaScales)
	case !algo.UsesEta:
		spec.Eta = 0
	case spec.EtaScale == EtaRadius:
		spec.Eta *= spec.Eta
	}
	var rr RegretReading
	switch spec.RegretRounds {
	case "", RegretAllRounds:
	case RegretAfterInit:
		rr.SkipRounds = -1 // the trace says how many
	default:
		return nil, Summary{}, fmt.Errorf("regret rounds %q: want one of %v", spec.RegretRounds, RegretRoundRules)
	}
	switch spec.BenchmarkD3 {
	case "", BenchmarkAlphaGreedy:
	case BenchmarkGreedy:
		rr.GreedyBenchmark = true
	default:
		return nil, Summary{}, fmt.Errorf("benchmark %q: want one of %v", spec.BenchmarkD3, BenchmarkRules)
	}
	prob := Problem{N: inst.N(), D: inst.D(), K: spec.K, T: spec.T, Sigma: spec.Sigma, Ref: spec.Ref}
	pol, err := algo.NewPolicyOn(prob, spec.Eta, spec.Params, envs.NewPCG(spec.Seed, "policy/"+algo.Name)) // envs.NewStream's generator
	if err != nil {
		return nil, Summary{}, err
	}
	bandit, err := envs.NewBandit(inst, spec.Sigma, spec.Seed)
	if err != nil {
		return nil, Summary{}, err
	}
	var pick func(counts, slate []int)
	switch spec.InitTies {
	case "", InitTiesLowest:
		pick = func(counts, slate []int) { fewestPulls(counts, slate, nil) }
	case InitTiesRandom:
		// Its own stream: the same initial slates for every algorithm of a
		// seed, as the shared initialisation must be.
		ties := envs.NewStream(spec.Seed, "init-ties")
		pick = func(counts, slate []int) { fewestPulls(counts, slate, ties) }
	case InitTiesNumpy:
		pick = numpyFewestPulls
	default:
		return nil, Summary{}, fmt.Errorf("init ties %q: want one of %v", spec.InitTies, InitTieRules)
	}
	tr, err := simulate(pol, bandit, spec.K, spec.T, spec.MinPulls, spec.Ref, pick)
	if err != nil {
		return nil, Summary{}, fmt.Errorf("%s: %w", algo.Name, err)
	}
	if rr.SkipRounds < 0 {
		rr.SkipRounds = tr.InitRounds
	}
	return tr, SummarizeWith(tr.HV, inst.D(), bench.VStar, bench.HVGreedy, spec.Window, rr), nil
}
