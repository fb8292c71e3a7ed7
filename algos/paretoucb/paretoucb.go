// Package paretoucb implements the Pareto-layer UCB family: ParetoUCB
// (Drugan & Nowé's Pareto UCB1 adapted to top-k slates), and our variants
// ParetoUCB+, ParetoUCB-Div and ParetoUCB-Crowd, which differ in the
// confidence radius and in how they choose within the layer that overflows
// the slate.
package paretoucb

import (
	"math"
	"math/rand/v2"

	"thv/algos"
)

// tieBreak says how arms are chosen within the overflowing Pareto layer.
type tieBreak int

const (
	uniform  tieBreak = iota // uniformly at random (ParetoUCB)
	sumUCB                   // largest Σ_j U_ij (ParetoUCB+)
	farthest                 // greedy farthest point in ℓ∞ (ParetoUCB-Div)
	crowding                 // largest crowding distance (ParetoUCB-Crowd)
)

func init() {
	for _, v := range []struct {
		name, summary string
		fid           algos.Fidelity
		eta           bool
		tb            tieBreak
		cite          string
	}{
		{"ParetoUCB", "Pareto layers of UCB vectors with the original radius sqrt(2 ln(t (d|F̂|)^¼)/N); uniform choice in the overflowing layer", algos.Faithful, false, uniform, "Drugan2013MOBandits"},
		{"ParetoUCB+", "ParetoUCB with an η-scaled radius and a Σ_j U_ij tie-break in the overflowing layer", algos.Extension, true, sumUCB, "Drugan2013MOBandits"},
		{"ParetoUCB-Div", "ParetoUCB+ with a farthest-point (maximin ℓ∞ in UCB space) choice in the overflowing layer", algos.Extension, true, farthest, "Drugan2013MOBandits"},
		{"ParetoUCB-Crowd", "ParetoUCB+ with an NSGA-II crowding-distance choice in the overflowing layer", algos.Extension, true, crowding, "Drugan2013MOBandits,Deb2002NSGA2"},
	} {
		v := v
		algos.Register(algos.Spec{
			Name: v.name, Family: "paretoucb", Fidelity: v.fid, UsesEta: v.eta, Cite: v.cite, Summary: v.summary,
			New: func(cfg algos.Config) algos.Policy { return newPolicy(cfg, v.eta, v.tb) },
		})
	}
}

// Policy is a Pareto-layer UCB learner.
type Policy struct {
	algos.Stats
	prob   algos.Problem
	eta    float64 // 1 for ParetoUCB, whose radius has no η
	tb     tieBreak
	rng    *rand.Rand
	upper  [][]float64
	layers algos.Layers
	front  algos.Layers
	pick   picker
}

func newPolicy(cfg algos.Config, useEta bool, tb tieBreak) *Policy {
	p := &Policy{Stats: algos.NewStats(cfg.N, cfg.D), prob: cfg.Problem, eta: 1, tb: tb, rng: cfg.Rand}
	if useEta {
		p.eta = cfg.Eta
	}
	flat := make([]float64, cfg.N*cfg.D)
	p.upper = make([][]float64, cfg.N)
	for i := range p.upper {
		p.upper[i] = flat[i*cfg.D : (i+1)*cfg.D : (i+1)*cfg.D]
	}
	return p
}

// Radius is the family's confidence radius
// sqrt(2η ln(t·(d·|F̂|)^{1/4}) / N_i); ParetoUCB uses η = 1.
func Radius(eta float64, t, d, frontSize, pulls int) float64 {
	return math.Sqrt(2 * eta * math.Log(float64(t)*math.Pow(float64(d*max(1, frontSize)), 0.25)) / float64(max(1, pulls)))
}

// Select takes whole Pareto layers of the UCB vectors while they fit and
// resolves the overflowing layer with the algorithm's tie-break.
func (p *Policy) Select(t int, slate []int) {
	f := algos.EmpiricalFrontSize(p.Mean, &p.front)
	c := Radius(p.eta, t, p.prob.D, f, 1) // the radius of an arm pulled once
	for i, m := range p.Mean {
		b := c / math.Sqrt(float64(max(1, p.Count[i])))
		for j, v := range m {
			p.upper[i][j] = v + b
		}
	}
	if p.tb == sumUCB { // the Σ U tie-break lets peeling stop early
		p.layers.TopBySum(p.upper, slate)
		return
	}
	full, overflow := p.layers.Select(p.upper, len(slate))
	n := copy(slate, full)
	p.pick.choose(p.tb, p.upper, slate[:n], overflow, slate[n:], p.rng)
}

// picker chooses len(out) arms of layer, given the arms already chosen.
type picker struct {
	cand  []int
	score []float64
	dist  []float64
}

func (pk *picker) choose(tb tieBreak, u [][]float64, chosen, layer, out []int, rng *rand.Rand) {
	if len(out) == 0 {
		return
	}
	pk.cand = append(pk.cand[:0], layer...)
	switch tb {
	case uniform:
		algos.PickUniform(pk.cand, out, rng)
	case sumUCB:
		algos.PickLargestSum(u, pk.cand, out)
	case crowding:
		pk.dist = append(pk.dist[:0], make([]float64, len(pk.cand))...)
		algos.CrowdingDistance(u, pk.cand, pk.dist)
		pk.score = pk.score[:0]
		for _, i := range pk.cand {
			pk.score = append(pk.score, sum(u[i]))
		}
		topBy(pk.cand, pk.dist, pk.score, out)
	case farthest:
		sel := append([]int(nil), chosen...)
		for a := range out {
			best, bestD, bestS := -1, math.Inf(-1), 0.0
			for _, i := range pk.cand {
				if contains(sel, i) {
					continue
				}
				var d float64
				if len(sel) == 0 {
					d = sum(u[i]) // first pick of an empty slate: the largest Σ U
				} else {
					d = math.Inf(1)
					for _, s := range sel {
						d = min(d, linf(u[i], u[s]))
					}
				}
				s := sum(u[i])
				if d > bestD || (d == bestD && (s > bestS || (s == bestS && i < best))) {
					best, bestD, bestS = i, d, s
				}
			}
			out[a] = best
			sel = append(sel, best)
		}
	}
}

// topBy fills out with the candidates of largest primary score, then
// secondary score (if any), then lowest index.
func topBy(cand []int, primary, secondary []float64, out []int) {
	for a := range out {
		best := -1
		for c, i := range cand {
			if i < 0 {
				continue
			}
			if best < 0 || better(primary, secondary, c, best, cand) {
				best = c
			}
		}
		out[a] = cand[best]
		cand[best] = -1
	}
}

func better(primary, secondary []float64, c, b int, cand []int) bool {
	if primary[c] != primary[b] {
		return primary[c] > primary[b]
	}
	if secondary != nil && secondary[c] != secondary[b] {
		return secondary[c] > secondary[b]
	}
	return cand[c] < cand[b]
}

func sum(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s
}

func linf(a, b []float64) float64 {
	d := 0.0
	for j := range a {
		d = max(d, math.Abs(a[j]-b[j]))
	}
	return d
}

func contains(s []int, x int) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}
