// Package paretodiv implements ParetoUCB-Div, the variant of the
// Pareto-layer UCB family (package paretoucb) whose overflowing layer is
// filled by a greedy farthest-point choice: maximin ℓ∞ distance in U space.
// It registers the algorithm itself, so that the runs of the family's
// other three algorithms cannot reach its code.
package paretodiv

import (
	"math"
	"math/big"

	"thv/algos"
	"thv/algos/paretoucb"
)

func init() {
	algos.Register(algos.Spec{
		Name: "ParetoUCB-Div", Family: "paretoucb", Fidelity: algos.Extension, UsesEta: true, Cost: 7, Learns: true,
		Cite:    "Drugan2013MOBandits",
		Summary: "ParetoUCB+ with a greedy farthest-point (maximin ℓ∞ in UCB space) choice in the overflowing layer",
		New:     func(cfg algos.Config) algos.Policy { return New(cfg, cfg.Eta) },
	})
}

// New returns a ParetoUCB-Div policy with radius scale eta.
func New(cfg algos.Config, eta float64) *paretoucb.Policy {
	return paretoucb.NewChoosing(cfg, eta, newFarthest(cfg.N))
}

// farthest is the greedy farthest-point choice, with its scratch for n
// arms.
type farthest struct {
	flat  []float64 // U, as Choose was given it
	d     int
	order *algos.SumOrder

	gap    []int64 // per overflow member: maximin distance's bits, over folded[:upTo]
	upTo   []int   // per overflow member: how many of folded gap holds
	folded []int   // the arms chosen so far, whose distances the maximin takes
	fa, fb big.Float
}

func newFarthest(n int) *farthest {
	return &farthest{gap: make([]int64, n), upTo: make([]int, n), folded: make([]int, 0, n)}
}

// Choose fills out greedily: each slot takes the member of layer whose
// minimum ℓ∞ distance in U space to the arms already chosen (chosen, then
// the earlier slots) is largest, the lowest index on ties; with nothing
// chosen yet the first pick is the largest Σ_j U_ij (lowest index on ties).
//
// Distances are kept as their bit patterns (gap): for floats ≥ 0 that are
// not NaN, the order and equality of the bit patterns, read as integers,
// are those of the values (|x| turns −0 into +0), so integer min and max
// give the bits of the float min and max, branch-free and without the
// builtin's NaN and signed-zero handling. A taken member holds −1, which
// min keeps. Each slot finds its best in one pass, folding in the
// distances to the arms chosen since a member's were last brought up to
// date only for the members that can still be best: a member's distance
// only falls as arms are folded in, so one whose distance so far is
// already below the best found in the pass is below it in the end (and
// cannot tie it) and is left as it is. U must not be NaN.
func (f *farthest) Choose(flat []float64, d int, order *algos.SumOrder, chosen, layer, out []int) {
	f.flat, f.d, f.order = flat, d, order
	dist := f.gap[:len(layer)]
	for c := range dist {
		dist[c] = inf
	}
	clear(f.upTo[:len(layer)])
	f.folded = f.folded[:0]
	// Folding in lazily pays on large layers (the first layer at d = 5,
	// of 90–140 arms), where most members fall behind the best.
	lazy := len(layer) >= lazyFrom
	last := -1 // the chosen arm whose distances are not folded in yet
	for _, s := range chosen {
		if last >= 0 {
			if lazy {
				f.folded = append(f.folded, last) // folded in when needed
			} else {
				f.foldAll(layer, dist, last)
			}
		}
		last = s
	}
	for a := range out {
		best := -1
		if last < 0 {
			best = f.order.First(layer)
		} else {
			var tied bool
			if lazy {
				best, tied = f.fold(layer, dist, last)
			} else {
				best, tied = f.foldAll(layer, dist, last)
			}
			if tied {
				best = f.breakTies(layer, dist, best)
			}
		}
		out[a] = layer[best]
		dist[best] = -1 // taken (distances are ≥ 0)
		last = layer[best]
	}
}

// breakTies returns the member of layer, among those whose maximin
// distance is best's to the bit, of largest exact maximin distance, the
// lowest index on exact ties. A computed distance is the exact one
// rounded (max and min are exact, |a − b| rounded once, rounding is
// monotone), so only equal computed distances can be in another order, or
// equal, exactly; those are compared with math/big.
func (f *farthest) breakTies(layer []int, dist []int64, best int) int {
	top := dist[best]
	for c, x := range dist[:len(layer)] {
		if x != top || c == best {
			continue
		}
		if cmp := f.exactMaximin(layer[c], &f.fa).Cmp(f.exactMaximin(layer[best], &f.fb)); cmp > 0 || cmp == 0 && layer[c] < layer[best] {
			best = c
		}
	}
	return best
}

// exactMaximin returns, in z, arm i's minimum over the folded arms of its
// ℓ∞ distance to them in U space, exactly.
func (f *farthest) exactMaximin(i int, z *big.Float) *big.Float {
	d := f.d
	ui := f.flat[d*i : d*i+d]
	var x, y, m big.Float
	for a, s := range f.folded {
		us := f.flat[d*s : d*s+d]
		m.SetPrec(exactPrec).SetInt64(0)
		for j := range ui {
			x.SetPrec(exactPrec).SetFloat64(ui[j])
			y.SetPrec(exactPrec).SetFloat64(us[j])
			x.Sub(&x, &y).Abs(&x)
			if x.Cmp(&m) > 0 {
				m.Set(&x)
			}
		}
		if a == 0 || m.Cmp(z) < 0 {
			z.SetPrec(exactPrec).Set(&m)
		}
	}
	return z
}

// exactPrec makes sums and differences of two floats exact (algos.Sum's).
const exactPrec = 1 << 13

// inf is the bit pattern of +Inf, the distance to nothing.
const inf = int64(0x7ff0000000000000)

// gapBits is the bit pattern of |x|.
func gapBits(x float64) int64 { return int64(math.Float64bits(x) &^ (1 << 63)) }

// lazyFrom is the size of layer from which Choose folds in lazily (a
// variable for the tests, which take both ways on every size).
var lazyFrom = 64

// fold adds s to the chosen arms and returns the member not taken of
// largest maximin distance over them, the lowest index on ties (−1 if all
// are taken), and whether another member's distance equals it (breakTies
// then decides exactly). dist[c] is brought up to date (upTo) only for
// the members whose distance so far is not below the best found before
// them; the others' can only be lower still.
func (f *farthest) fold(layer []int, dist []int64, s int) (best int, tied bool) {
	f.folded = append(f.folded, s)
	dist = dist[:len(layer)]
	upTo := f.upTo[:len(layer)]
	n := len(f.folded)
	best, top := -1, int64(-1)
	for c, x := range dist {
		if x < top || x < 0 {
			continue
		}
		if upTo[c] < n {
			x = f.lower(layer[c], x, f.folded[upTo[c]:])
			dist[c], upTo[c] = x, n
		}
		best, top, tied = lead(layer, best, top, tied, c, x)
	}
	return best, tied
}

// lower returns min(x, the ℓ∞ distances between U_i and U_s for s in
// picks), as bit patterns (see Choose); written out for d = 2–5 (the
// paper's settings).
func (f *farthest) lower(i int, x int64, picks []int) int64 {
	d, flat := f.d, f.flat
	a := flat[d*i : d*i+d : d*i+d]
	switch d {
	case 2:
		a0, a1 := a[0], a[1]
		for _, s := range picks {
			b := flat[2*s : 2*s+2 : 2*s+2]
			x = min(x, max(gapBits(a0-b[0]), gapBits(a1-b[1])))
		}
	case 3:
		a0, a1, a2 := a[0], a[1], a[2]
		for _, s := range picks {
			b := flat[3*s : 3*s+3 : 3*s+3]
			x = min(x, max(gapBits(a0-b[0]), gapBits(a1-b[1]), gapBits(a2-b[2])))
		}
	case 4:
		a0, a1, a2, a3 := a[0], a[1], a[2], a[3]
		for _, s := range picks {
			b := flat[4*s : 4*s+4 : 4*s+4]
			x = min(x, max(gapBits(a0-b[0]), gapBits(a1-b[1]), gapBits(a2-b[2]), gapBits(a3-b[3])))
		}
	case 5:
		a0, a1, a2, a3, a4 := a[0], a[1], a[2], a[3], a[4]
		for _, s := range picks {
			b := flat[5*s : 5*s+5 : 5*s+5]
			x = min(x, max(gapBits(a0-b[0]), gapBits(a1-b[1]), gapBits(a2-b[2]), gapBits(a3-b[3]), gapBits(a4-b[4])))
		}
	default:
		for _, s := range picks {
			b := flat[d*s : d*s+d : d*s+d]
			g := int64(0)
			for j, y := range a {
				g = max(g, gapBits(y-b[j]))
			}
			x = min(x, g)
		}
	}
	return x
}

// foldAll lowers dist[c] to the ℓ∞ distance between U_layer[c] and U_s
// (as bit patterns, see Choose) for every member and returns the member not taken of largest
// distance, the lowest index on ties (−1 if all are taken), and whether
// another member's distance equals it (breakTies then decides exactly). For d = 2–5
// (the paper's settings) the distance is written out in the loop.
func (f *farthest) foldAll(layer []int, dist []int64, s int) (best int, tied bool) {
	f.folded = append(f.folded, s)
	dist = dist[:len(layer)]
	best, top := -1, int64(-1)
	d := f.d
	us := f.flat[d*s : d*s+d : d*s+d]
	switch d {
	case 2:
		b0, b1 := us[0], us[1]
		for c, i := range layer {
			a := f.flat[2*i : 2*i+2 : 2*i+2]
			x := min(dist[c], max(gapBits(a[0]-b0), gapBits(a[1]-b1)))
			dist[c] = x
			best, top, tied = lead(layer, best, top, tied, c, x)
		}
	case 3:
		b0, b1, b2 := us[0], us[1], us[2]
		for c, i := range layer {
			a := f.flat[3*i : 3*i+3 : 3*i+3]
			x := min(dist[c], max(gapBits(a[0]-b0), gapBits(a[1]-b1), gapBits(a[2]-b2)))
			dist[c] = x
			best, top, tied = lead(layer, best, top, tied, c, x)
		}
	case 4:
		b0, b1, b2, b3 := us[0], us[1], us[2], us[3]
		for c, i := range layer {
			a := f.flat[4*i : 4*i+4 : 4*i+4]
			x := min(dist[c], max(gapBits(a[0]-b0), gapBits(a[1]-b1), gapBits(a[2]-b2), gapBits(a[3]-b3)))
			dist[c] = x
			best, top, tied = lead(layer, best, top, tied, c, x)
		}
	case 5:
		b0, b1, b2, b3, b4 := us[0], us[1], us[2], us[3], us[4]
		for c, i := range layer {
			a := f.flat[5*i : 5*i+5 : 5*i+5]
			x := min(dist[c], max(gapBits(a[0]-b0), gapBits(a[1]-b1), gapBits(a[2]-b2), gapBits(a[3]-b3), gapBits(a[4]-b4)))
			dist[c] = x
			best, top, tied = lead(layer, best, top, tied, c, x)
		}
	default:
		for c, i := range layer {
			a := f.flat[d*i : d*i+d : d*i+d]
			g := int64(0)
			for j, y := range us {
				g = max(g, gapBits(a[j]-y))
			}
			x := min(dist[c], g)
			dist[c] = x
			best, top, tied = lead(layer, best, top, tied, c, x)
		}
	}
	return best, tied
}

// lead is the farthest candidate after candidate c at distance x: c if it
// is farther than best (at top); on an exact tie the lower index of the
// layer, and tied set. A negative distance (none yet) never ties.
func lead(layer []int, best int, top int64, tied bool, c int, x int64) (int, int64, bool) {
	switch {
	case x > top:
		return c, x, false
	case x == top && x >= 0:
		if layer[c] < layer[best] {
			best = c
		}
		return best, top, true
	}
	return best, top, tied
}
