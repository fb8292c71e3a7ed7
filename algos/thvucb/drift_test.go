package thvucb

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"thv/algos"
	"thv/algos/algotest"
	"thv/envs"
)

// TestGainBitIdentical: the unrolled d = 5 gain equals the plain loop
// (gainLoop) bitwise, with exact ties (coordinates on a grid), sides ≤ 0 and a
// reference point other than the origin.
func TestGainBitIdentical(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	vec := func(d int) []float64 {
		v := make([]float64, d)
		for j := range v {
			switch rng.IntN(3) {
			case 0:
				v[j] = float64(rng.IntN(5)) / 4 // ties, and sides of exactly 0
			default:
				v[j] = rng.Float64()*1.2 - 0.1
			}
		}
		return v
	}
	for trial := 0; trial < 20000; trial++ {
		d := 5
		if trial%4 == 0 {
			d = 2 + rng.IntN(5)
		}
		ref := make([]float64, d)
		if trial%2 == 0 {
			ref = vec(d)
			for j := range ref {
				ref[j] *= 0.2
			}
		}
		var ts terms
		ts.init(d, ref)
		for s := rng.IntN(6); s > 0; s-- {
			ts.add(vec(d))
		}
		u := vec(d)
		if got, want := ts.gain(u), ts.gainLoop(box(u, ref), u); math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("trial %d (d=%d, %d terms): gain %v, plain loop %v", trial, d, len(ts.signs), got, want)
		}
	}
}

// TestDriftBoundsHold checks the inequality the carried bounds rest on,
// during real runs: for rounds r < t, any arm i and any set S,
//
//	gain_t(i | S) ≤ gain_r(i | S) + R_i(t) − R_i(r) + Σ_{s∈S} fallOf(u_s(t), u_s(r)),
//
// with gains evaluated directly on each round's UCB vectors. It covers
// clipped and unclipped UCBs and a run longer than the policy's horizon T
// (which restarts the rise potentials).
func TestDriftBoundsHold(t *testing.T) {
	for _, c := range []struct {
		g          envs.Geometry
		d, n, k, T int
		policyT    int
		eta, clip  float64
	}{
		{envs.Concave, 5, 40, 6, 600, 600, 0.01, 1},
		{envs.Linear, 3, 30, 4, 600, 600, 0.1, 0},
		{envs.Clusters, 4, 30, 5, 600, 250, 0.01, 1}, // past the horizon
	} {
		in, _ := envs.Generate(c.g, c.d, c.n, 2)
		bd, _ := envs.NewBandit(in, 0.03, 2)
		p := New(algos.Config{Problem: algos.Problem{N: c.n, D: c.d, K: c.k, T: c.policyT}, Eta: c.eta, Params: map[string]float64{"clip": c.clip}})
		type snapshot struct{ upper, rise []float64 }
		var snaps []snapshot
		rec := &recorder{Policy: p, after: func() {
			var s snapshot
			for _, u := range p.upper {
				s.upper = append(s.upper, u...)
			}
			s.rise = slices.Clone(p.rise.now)
			snaps = append(snaps, s)
		}}
		if _, err := algos.Simulate(rec, bd, c.k, c.T, 2, nil); err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(7, 8))
		origin := make([]float64, c.d)
		at := func(s snapshot, i int) []float64 { return s.upper[i*c.d : (i+1)*c.d] }
		gainAt := func(s snapshot, i int, set []int) float64 {
			var ts terms
			ts.init(c.d, origin)
			for _, q := range set {
				ts.add(at(s, q))
			}
			return ts.gain(at(s, i))
		}
		face := make([]float64, c.d)
		checked := 0
		for trial := 0; trial < 20000; trial++ {
			r := rng.IntN(len(snaps) - 1)
			tt := r + 1 + rng.IntN(min(60, len(snaps)-r-1))
			set := rng.Perm(c.n)[:1+rng.IntN(c.k-1)]
			i := set[len(set)-1]
			set = set[:len(set)-1]
			old, now := snaps[r], snaps[tt]
			bound := gainAt(old, i, set) + now.rise[i] - old.rise[i]
			for _, s := range set {
				bound += fallOf(face, at(now, s), at(old, s), origin)
			}
			got := gainAt(now, i, set)
			if got > bound+1e-15 {
				t.Fatalf("%s d=%d: rounds %d→%d, arm %d given %v: gain %.17g above the bound %.17g", c.g, c.d, r, tt, i, set, got, bound)
			}
			if got > gainAt(old, i, set) {
				checked++ // the gain rose: the bound was needed
			}
		}
		if checked < 1000 {
			t.Errorf("%s: only %d of the checks saw a gain rise; the test is too weak", c.g, checked)
		}
	}
}

// recorder calls after once each Select is done.
type recorder struct {
	*Policy
	after func()
}

func (r *recorder) Select(t int, slate []int) {
	r.Policy.Select(t, slate)
	r.after()
}

func TestSelectAllocFree(t *testing.T) {
	algotest.CheckSelectAllocFree(t, []string{"THV-UCB"}, 0.01)
}
