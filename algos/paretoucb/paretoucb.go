// Package paretoucb implements the Pareto-layer UCB family of the paper's
// baselines: ParetoUCB, the top-k adaptation of Drugan & Nowé's Pareto UCB1,
// and our variants ParetoUCB+, ParetoUCB-Div and ParetoUCB-Crowd.
//
// All four build UCB vectors U_i = μ̂_i + β_i·1 (not clipped) and fill the
// slate with whole Pareto layers of U, best layer first, while they fit;
// the layer that overflows the slate is resolved by the algorithm's
// tie-break:
//
//	ParetoUCB        uniformly at random (the policy's stream)
//	ParetoUCB+       largest Σ_j U_ij
//	ParetoUCB-Div    greedy farthest point: maximin ℓ∞ distance in U space
//	ParetoUCB-Crowd  largest NSGA-II crowding distance within the layer
//
// The lowest arm index wins any remaining tie.
package paretoucb

import (
	"math"
	"math/rand/v2"

	"thv/algos"
	"thv/envs/fmath"
)

// TieBreak says how arms are chosen within the overflowing Pareto layer.
type TieBreak int

// The tie-breaks of the four algorithms.
const (
	Uniform  TieBreak = iota // a uniformly random subset (ParetoUCB)
	SumUCB                   // largest Σ_j U_ij (ParetoUCB+)
	Farthest                 // greedy farthest point in ℓ∞ (ParetoUCB-Div)
	Crowding                 // largest crowding distance, then Σ_j U_ij (ParetoUCB-Crowd)
)

func init() {
	for _, v := range []struct {
		name, cite, summary string
		fid                 algos.Fidelity
		eta                 bool
		tb                  TieBreak
	}{
		{"ParetoUCB", "Drugan2013MOBandits",
			"Pareto layers of the UCB vectors, radius sqrt(2 ln(t (d|F̂|)^¼)/N_i); uniformly random arms of the overflowing layer",
			algos.Faithful, false, Uniform},
		{"ParetoUCB+", "Drugan2013MOBandits",
			"ParetoUCB with radius sqrt(2η ln(t (d|F̂|)^¼)/N_i) and the largest Σ_j U_ij in the overflowing layer",
			algos.Extension, true, SumUCB},
		{"ParetoUCB-Div", "Drugan2013MOBandits",
			"ParetoUCB+ with a greedy farthest-point (maximin ℓ∞ in UCB space) choice in the overflowing layer",
			algos.Extension, true, Farthest},
		{"ParetoUCB-Crowd", "Drugan2013MOBandits,Deb2002NSGA2",
			"ParetoUCB+ with the largest NSGA-II crowding distance in the overflowing layer",
			algos.Extension, true, Crowding},
	} {
		cost := map[string]float64{"ParetoUCB": 4, "ParetoUCB+": 2, "ParetoUCB-Div": 7, "ParetoUCB-Crowd": 4}[v.name]
		algos.Register(algos.Spec{
			Name: v.name, Family: "paretoucb", Fidelity: v.fid, UsesEta: v.eta, Cost: cost, Learns: true,
			Cite: v.cite, Summary: v.summary,
			New: func(cfg algos.Config) algos.Policy {
				eta := 1.0 // ParetoUCB's radius has no η
				if v.eta {
					eta = cfg.Eta
				}
				return New(cfg, eta, v.tb)
			},
		})
	}
}

// Policy is a Pareto-layer UCB learner. Its fields Count and Mean (the
// embedded Stats) may be set directly to put it in a given state.
type Policy struct {
	algos.Stats
	d   int
	eta float64
	tb  TieBreak
	rng *rand.Rand

	upper  [][]float64 // U_i
	sum    []float64   // Σ_j U_ij
	layers algos.Layers
	front  algos.FrontTracker // |F̂| on μ̂
	crowd  algos.Crowding
	dist   []float64 // per overflow member: crowding or maximin distance
}

// New returns a policy with radius scale eta (1 for ParetoUCB) and
// tie-break tb. A nil cfg.Rand is replaced by a fixed stream.
func New(cfg algos.Config, eta float64, tb TieBreak) *Policy {
	n, d := cfg.N, cfg.D
	p := &Policy{
		Stats: algos.NewStats(n, d),
		d:     d, eta: eta, tb: tb, rng: cfg.Rand,
		upper: make([][]float64, n),
		sum:   make([]float64, n),
		dist:  make([]float64, n),
	}
	if p.rng == nil {
		p.rng = rand.New(rand.NewPCG(0, 0))
	}
	flat := make([]float64, n*d)
	for i := range p.upper {
		p.upper[i] = flat[i*d : (i+1)*d : (i+1)*d]
	}
	p.layers.Reserve(n)
	p.front.Reserve(n, d)
	p.crowd.Reserve(n, d)
	return p
}

// logTerm is ln(t·(d·|F̂|)^{1/4}), with |F̂| read as at least 1.
func logTerm(t, d, frontSize int) float64 {
	return fmath.Log(float64(t)) + float64(0.25*fmath.Log(float64(d)*float64(max(1, frontSize))))
}

// Radius is the family's confidence radius
// β_i = sqrt(2η·ln(t·(d·|F̂|)^{1/4}) / N_i) at round t with d objectives, an
// empirical Pareto front of frontSize arms (read as at least 1) and N_i =
// pulls (read as at least 1). ParetoUCB uses η = 1.
func Radius(eta float64, t, d, frontSize, pulls int) float64 {
	return math.Sqrt(2 * eta * logTerm(t, d, frontSize) / float64(max(1, pulls)))
}

// Select builds U, takes whole Pareto layers of U while they fit and
// resolves the overflowing layer with the policy's tie-break.
func (p *Policy) Select(t int, slate []int) {
	c := 2 * p.eta * logTerm(t, p.d, p.front.Size(p.Mean))
	for i, m := range p.Mean {
		b := math.Sqrt(c / float64(max(1, p.Count[i])))
		u := p.upper[i][:len(m)]
		s := 0.0
		for j, x := range m {
			u[j] = x + b
			s += u[j]
		}
		p.sum[i] = s
	}
	if p.tb == SumUCB { // the same choice as Peel + PickLargest, found early
		p.layers.TopBySum(p.upper, slate)
		return
	}
	full, over := p.layers.Peel(p.upper, len(slate))
	n := copy(slate, full)
	if n == len(slate) {
		return
	}
	rest := slate[n:]
	switch p.tb {
	case Uniform:
		algos.PickUniform(over, rest, p.rng)
	case Farthest:
		p.farthest(full, over, rest)
	case Crowding:
		p.crowding(over, rest)
	}
}

// farthest fills out greedily: each slot takes the member of layer whose
// minimum ℓ∞ distance in U space to the arms already chosen (chosen, then
// the earlier slots) is largest, the lowest index on ties; with nothing
// chosen yet the first pick is the largest Σ_j U_ij (lowest index on ties).
func (p *Policy) farthest(chosen, layer, out []int) {
	dist := p.dist[:len(layer)]
	for c := range dist {
		dist[c] = math.Inf(1)
	}
	for _, s := range chosen {
		p.nearer(layer, dist, s)
	}
	for a := range out {
		best := -1
		if a == 0 && len(chosen) == 0 {
			for c, i := range layer {
				if best < 0 || p.sum[i] > p.sum[layer[best]] ||
					p.sum[i] == p.sum[layer[best]] && i < layer[best] {
					best = c
				}
			}
		} else {
			for c, x := range dist {
				if x >= 0 && (best < 0 || x > dist[best] ||
					x == dist[best] && layer[c] < layer[best]) {
					best = c
				}
			}
		}
		out[a] = layer[best]
		dist[best] = -1 // taken (distances are ≥ 0)
		if a+1 < len(out) {
			p.nearer(layer, dist, layer[best])
		}
	}
}

// nearer lowers dist[c] to the ℓ∞ distance between U_layer[c] and U_s.
// For d = 2, 3 (a reading's settings) linf's expression is written out in
// the loop, which the compiler does not inline.
func (p *Policy) nearer(layer []int, dist []float64, s int) {
	us := p.upper[s]
	dist = dist[:len(layer)]
	switch len(us) {
	case 2:
		b0, b1 := us[0], us[1]
		for c, i := range layer {
			if dist[c] < 0 {
				continue
			}
			a := p.upper[i][:2]
			dist[c] = min(dist[c], max(math.Abs(a[0]-b0), math.Abs(a[1]-b1)))
		}
	case 3:
		b0, b1, b2 := us[0], us[1], us[2]
		for c, i := range layer {
			if dist[c] < 0 {
				continue
			}
			a := p.upper[i][:3]
			dist[c] = min(dist[c], max(math.Abs(a[0]-b0), math.Abs(a[1]-b1), math.Abs(a[2]-b2)))
		}
	default:
		for c, i := range layer {
			if dist[c] < 0 {
				continue
			}
			dist[c] = min(dist[c], linf(p.upper[i], us))
		}
	}
}

// linf is the ℓ∞ distance, unrolled for the paper's dimensions. The
// builtin max compiles to branch-free code, which matters: on real data the
// larger coordinate gap is unpredictable.
func linf(a, b []float64) float64 {
	switch len(b) {
	case 2:
		a := a[:2]
		return max(math.Abs(a[0]-b[0]), math.Abs(a[1]-b[1]))
	case 3:
		a := a[:3]
		return max(math.Abs(a[0]-b[0]), math.Abs(a[1]-b[1]), math.Abs(a[2]-b[2]))
	case 4:
		a := a[:4]
		return max(max(math.Abs(a[0]-b[0]), math.Abs(a[1]-b[1])),
			max(math.Abs(a[2]-b[2]), math.Abs(a[3]-b[3])))
	case 5:
		a := a[:5]
		return max(max(math.Abs(a[0]-b[0]), math.Abs(a[1]-b[1])),
			max(math.Abs(a[2]-b[2]), math.Abs(a[3]-b[3])), math.Abs(a[4]-b[4]))
	}
	a = a[:len(b)]
	d := 0.0
	for j, x := range b {
		d = max(d, math.Abs(a[j]-x))
	}
	return d
}

// crowding fills out with the members of layer of largest crowding distance
// (computed on U within the layer), then largest Σ_j U_ij, then lowest index.
func (p *Policy) crowding(layer, out []int) {
	dist := p.dist[:len(layer)]
	p.crowd.Distance(p.upper, layer, dist)
	for a := range out {
		best := -1
		for c, i := range layer {
			if dist[c] < 0 {
				continue
			}
			b := layer[max(best, 0)]
			if best < 0 || dist[c] > dist[best] || dist[c] == dist[best] &&
				(p.sum[i] > p.sum[b] || p.sum[i] == p.sum[b] && i < b) {
				best = c
			}
		}
		out[a] = layer[best]
		dist[best] = -1 // taken (distances are ≥ 0)
	}
}
