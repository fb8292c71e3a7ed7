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

// TestGainBitIdentical: the unrolled d = 2, 3, 4, 5 gains and the loop over shifted
// corners (gainLoop) both equal the textbook formula (plainGain) bitwise,
// with exact ties (coordinates on a grid), sides ≤ 0 and a reference point
// other than the origin; and so does a gain continued from the gain given
// a prefix of the set (gainFrom), as greedy's later steps continue them.
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
		d := 2 + trial%4 // the unrolled ones
		if trial%5 == 0 {
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
		var set [][]float64
		u := vec(d)
		size := rng.IntN(6)
		prefix := rng.IntN(size + 1)
		var partial float64 // the gain given the first prefix arms of set
		for s := size; s > 0; s-- {
			if len(set) == prefix {
				partial = ts.gain(u)
			}
			set = append(set, vec(d))
			ts.add(set[len(set)-1])
		}
		if prefix == size {
			partial = ts.gain(u)
		}
		want := plainGain(set, u, ref)
		if got := ts.gain(u); math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("trial %d (d=%d, %d terms): gain %v, textbook %v", trial, d, len(ts.signs), got, want)
		}
		if got := ts.gainLoop(box(u, ref), u, 0); math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("trial %d (d=%d, %d terms): gainLoop %v, textbook %v", trial, d, len(ts.signs), got, want)
		}
		if got := ts.gainFrom(partial, u, 1<<prefix-1); math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("trial %d (d=%d, %d terms): gain continued after %d arms %v, textbook %v", trial, d, len(ts.signs), prefix, got, want)
		}
	}
}

// plainGain is the textbook formula box(u) − Σ_T sign_T · box(min(u, min T)),
// with corners min T kept as they are (not shifted by ref) and the terms in
// the order terms.add makes them.
func plainGain(set [][]float64, u, ref []float64) float64 {
	type term struct {
		corner []float64
		sign   float64
	}
	var ts []term
	for _, s := range set {
		for _, t := range slices.Clone(ts) {
			c := make([]float64, len(u))
			for j := range c {
				c[j] = min(t.corner[j], s[j])
			}
			ts = append(ts, term{c, -t.sign})
		}
		ts = append(ts, term{slices.Clone(s), 1})
	}
	g := box(u, ref)
	for _, t := range ts {
		b := 1.0
		for j := range u {
			c := min(u[j], t.corner[j]) - ref[j]
			if !(c > 0) {
				b = 0
				break
			}
			b *= c
		}
		g -= t.sign * b
	}
	return g
}

// TestDriftBoundsHold checks the inequality the carried bounds rest on,
// during real runs: for rounds r < t, any arm i and any set S,
//
//	gain_t(i | S) ≤ gain_r(i | S) + R_i(t) − R_i(r) + Σ_{s∈S} fallOf(u_s(t), u_s(r)),
//
// with gains evaluated directly on each round's UCB vectors. It covers
// clipped and unclipped UCBs, a run longer than the policy's horizon T
// (which restarts the rise potentials), and runs where the rewards of some
// rounds go to other arms than the slate's (arms observed without having
// been looked at, whose UCB vectors were never computed in that Select).
func TestDriftBoundsHold(t *testing.T) {
	for _, c := range []struct {
		g          envs.Geometry
		d, n, k, T int
		policyT    int
		eta, clip  float64
		elsewhere  bool // observe a random slate every third round
	}{
		{envs.Concave, 5, 40, 6, 600, 600, 0.01, 1, false},
		{envs.Linear, 3, 30, 4, 600, 600, 0.1, 0, false},
		{envs.Clusters, 4, 30, 5, 600, 250, 0.01, 1, false}, // past the horizon
		{envs.Concave, 3, 40, 4, 600, 600, 0.1, 1, true},
		{envs.Convex, 4, 40, 3, 600, 200, 0.1, 1, true}, // and past the horizon
	} {
		in, _ := envs.Generate(c.g, c.d, c.n, 2)
		bd, _ := envs.NewBandit(in, 0.03, 2)
		p := New(algos.Config{Problem: algos.Problem{N: c.n, D: c.d, K: c.k, T: c.policyT}, Eta: c.eta, Params: map[string]float64{"clip": c.clip}})
		type snapshot struct{ upper, rise []float64 }
		var snaps []snapshot
		rec := &recorder{Policy: p, after: func() {
			var s snapshot
			upper, _ := freshVectors(p)
			for _, u := range upper {
				s.upper = append(s.upper, u...)
			}
			s.rise = slices.Clone(p.rise.now)
			snaps = append(snaps, s)
		}}
		if c.elsewhere {
			rng := rand.New(rand.NewPCG(9, 10))
			rec.observe = func(slate []int) []int {
				if len(snaps)%3 != 0 {
					return slate
				}
				return rng.Perm(c.n)[:len(slate)]
			}
		}
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

// recorder calls after once each Select is done, and if observe is set,
// hands the rewards of each round to the arms it returns instead.
type recorder struct {
	*Policy
	after   func()
	observe func(slate []int) []int
}

func (r *recorder) Select(t int, slate []int) {
	r.Policy.Select(t, slate)
	r.after()
}

func (r *recorder) Observe(slate []int, rewards [][]float64) {
	if r.observe != nil && r.Policy.t > 0 {
		slate = r.observe(slate)
	}
	r.Policy.Observe(slate, rewards)
}

func TestSelectAllocFree(t *testing.T) {
	algotest.CheckSelectAllocFree(t, []string{"THV-UCB"}, 0.01)
}

// TestAddBitIdentical: the corners and bit patterns add keeps (its d = 4, 5
// fast path when every vector is above r, the loop otherwise) are those of
// the textbook construction, min of the shifted vectors with the builtin
// min, bit for bit, with ties (coordinates on a grid) and with vectors not
// above r.
func TestAddBitIdentical(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	for trial := range 4000 {
		d := 4 + trial%2
		ref := make([]float64, d)
		if trial%3 == 0 {
			for j := range ref {
				ref[j] = rng.Float64() * 0.1
			}
		}
		var ts terms
		ts.init(d, ref)
		var corners [][]float64
		var signs []float64
		for range 1 + rng.IntN(6) {
			u := make([]float64, d)
			for j := range u {
				switch rng.IntN(3) {
				case 0:
					u[j] = float64(1+rng.IntN(4)) / 4 // ties
				default:
					u[j] = rng.Float64()
				}
				if trial%7 == 0 && rng.IntN(8) == 0 {
					u[j] = ref[j] - 0.1*rng.Float64() // not above r: the loop
				}
			}
			v := make([]float64, d)
			for j := range v {
				v[j] = u[j] - ref[j]
			}
			n := len(corners)
			for k := range n {
				c := make([]float64, d)
				for j := range c {
					c[j] = min(corners[k][j], v[j])
				}
				corners = append(corners, c)
				signs = append(signs, -signs[k])
			}
			corners, signs = append(corners, v), append(signs, 1)
			ts.add(u)
		}
		if len(ts.signs) != len(signs) || len(ts.corners) != len(signs)*d || len(ts.bits) != len(signs)*d {
			t.Fatalf("trial %d: %d signs, %d corner values, %d bit patterns; want %d terms of %d", trial, len(ts.signs), len(ts.corners), len(ts.bits), len(signs), d)
		}
		for k, c := range corners {
			if ts.signs[k] != signs[k] {
				t.Fatalf("trial %d: term %d has sign %v, want %v", trial, k, ts.signs[k], signs[k])
			}
			for j, x := range c {
				if got := ts.corners[k*d+j]; math.Float64bits(got) != math.Float64bits(x) || ts.bits[k*d+j] != math.Float64bits(x) {
					t.Fatalf("trial %d: term %d coordinate %d is %v (bits %#x), want %v", trial, k, j, got, ts.bits[k*d+j], x)
				}
			}
		}
	}
}

// TestFacesBitIdentical: faces, each side computed once, equals facesLoop,
// which computes them in place, to the bit, with sides ≤ 0 and ties.
func TestFacesBitIdentical(t *testing.T) {
	rng := rand.New(rand.NewPCG(10, 11))
	for trial := range 5000 {
		d := 1 + trial%17
		a, b, ref := make([]float64, d), make([]float64, d), make([]float64, d)
		for c := range a {
			a[c], b[c] = rng.Float64(), float64(rng.IntN(4))/4
			if trial%2 == 0 {
				ref[c] = rng.Float64() * 0.3
			}
		}
		got, want := make([]float64, d), make([]float64, d)
		faces(got, a, b, ref)
		facesLoop(want, a, b, ref)
		for c := range got {
			if math.Float64bits(got[c]) != math.Float64bits(want[c]) {
				t.Fatalf("trial %d (d=%d): face %d is %v, want %v", trial, d, c, got[c], want[c])
			}
		}
	}
}
