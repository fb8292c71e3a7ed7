package hv

import (
	"cmp"
	"math"
	"slices"
)

// BestSubset returns an exact maximum-hypervolume subset of size k, as
// indices in increasing order, and its hypervolume V*. If k ≥ len(points)
// it returns every index.
//
// Only points that are non-dominated (NonDominated) and strictly above ref
// are candidates: some best subset never needs another point. If there are
// at most k candidates, the result is all of them, padded with the other
// points of largest box volume (lowest index first among equal volumes),
// which add nothing.
//
// Otherwise a branch and bound over the candidates finds the optimum. Its
// incumbent is the greedy subset improved by single swaps; a node (a
// partial subset S) is bounded by HV(S) plus the largest k−|S|
// contributions of the remaining candidates to S, which is valid because
// hypervolume is submodular, and explores the candidates by decreasing
// contribution. Values are compared as computed by Volume on the points in
// increasing index order; among subsets of equal value the result is the
// one whose sorted index list is lexicographically smallest, so the result
// is deterministic.
func BestSubset(points [][]float64, k int, ref []float64) (idx []int, value float64) {
	return bestSubset(points, k, ref, true)
}

// bestSubset is BestSubset; warm false starts the search without an
// incumbent, which tests use to check the search alone.
func bestSubset(points [][]float64, k int, ref []float64, warm bool) (idx []int, value float64) {
	n := len(points)
	d := dimension(points, ref)
	c := pool.Get().(*Calculator)
	defer pool.Put(c)
	if k <= 0 || n == 0 {
		return []int{}, 0
	}
	if k >= n {
		idx = make([]int, n)
		for i := range idx {
			idx[i] = i
		}
		return idx, c.Volume(points, ref)
	}
	var cand []int
	for _, i := range NonDominated(points) {
		if boxVolume(points[i], ref) > 0 {
			cand = append(cand, i)
		}
	}
	if len(cand) <= k {
		idx = pad(points, ref, cand, k)
		return idx, c.subsetVolume(points, ref, idx)
	}
	b := &bnb{c: c, k: k, d: d, m: len(cand), idx: cand}
	for _, i := range cand {
		b.pts = translate(b.pts, points[i], ref)
	}
	b.run(warm)
	idx = make([]int, k)
	for j, p := range b.best {
		idx[j] = cand[p]
	}
	return idx, b.bestVal
}

// pad returns cand (sorted) plus the k − len(cand) other points of largest
// box volume, lowest index first among equal volumes, in increasing order.
func pad(points [][]float64, ref []float64, cand []int, k int) []int {
	in := make([]bool, len(points))
	for _, i := range cand {
		in[i] = true
	}
	var rest []int
	for i := range points {
		if !in[i] {
			rest = append(rest, i)
		}
	}
	box := make([]float64, len(points))
	for _, i := range rest {
		box[i] = boxVolume(points[i], ref)
	}
	slices.SortStableFunc(rest, func(a, b int) int { return cmp.Compare(box[b], box[a]) })
	idx := append(append([]int(nil), cand...), rest[:k-len(cand)]...)
	slices.Sort(idx)
	return idx
}

// subsetVolume returns the hypervolume of points[idx...] in the order of
// idx: the canonical value of a subset when idx is sorted.
func (c *Calculator) subsetVolume(points [][]float64, ref []float64, idx []int) float64 {
	sub := make([][]float64, len(idx))
	for j, i := range idx {
		sub[j] = points[i]
	}
	return c.Volume(sub, ref)
}

// bnb is the branch and bound of BestSubset over m candidates (positions
// 0…m−1 into idx, their input indices in increasing order; pts holds them
// minus ref).
type bnb struct {
	c       *Calculator
	k, d, m int
	idx     []int
	pts     []float64

	best    []int   // best subset so far, candidate positions in increasing order
	bestVal float64 // its canonical volume
	slack   float64 // rounding allowance of the bounds

	chosen []int       // the partial subset of the current node
	set    []float64   // its points
	contr  [][]float64 // per depth: contribution of each candidate
	order  [][]int     // per depth: the candidates to branch on, best first
	leaf   []int       // scratch for the canonical value of a leaf
}

// value returns the canonical volume of the candidate positions in s,
// which must be in increasing order.
func (b *bnb) value(s []int) float64 {
	c := b.c
	c.d, c.n = b.d, len(s)
	c.pts = c.pts[:0]
	for _, p := range s {
		c.pts = append(c.pts, b.pts[p*b.d:p*b.d+b.d]...)
	}
	return c.volume()
}

// offer makes s (candidate positions, increasing) the best subset if its
// value is larger, or equal with a lexicographically smaller index list.
// Positions and indices are in the same order, so comparing positions is
// enough.
func (b *bnb) offer(s []int) {
	v := b.value(s)
	if b.best == nil || v > b.bestVal || v == b.bestVal && slices.Compare(s, b.best) < 0 {
		b.best = append(b.best[:0], s...)
		b.bestVal = v
	}
}

func (b *bnb) contribution(p int) float64 {
	return b.c.contribution(b.pts[p*b.d:p*b.d+b.d], b.set, len(b.chosen))
}

func (b *bnb) push(p int) {
	b.chosen = append(b.chosen, p)
	b.set = append(b.set, b.pts[p*b.d:p*b.d+b.d]...)
}

func (b *bnb) pop() {
	b.chosen = b.chosen[:len(b.chosen)-1]
	b.set = b.set[:len(b.set)-b.d]
}

func (b *bnb) run(warm bool) {
	if warm {
		b.incumbent()
	} else {
		b.bestVal = math.Inf(-1)
	}
	b.slack = 0
	for p := range b.m {
		b.slack = max(b.slack, product(b.pts[p*b.d:p*b.d+b.d]))
	}
	b.slack *= 1e-9 * float64(b.k)
	b.contr = make([][]float64, b.k)
	b.order = make([][]int, b.k)
	for i := range b.k {
		b.contr[i] = make([]float64, b.m)
		b.order[i] = make([]int, 0, b.m)
	}
	all := make([]int, b.m)
	for i := range all {
		all[i] = i
	}
	b.search(all, 0)
}

// search explores every subset that adds k − |chosen| candidates from
// allowed to the current partial subset, whose volume is hv.
func (b *bnb) search(allowed []int, hv float64) {
	depth := len(b.chosen)
	r := b.k - depth
	contr := b.contr[depth]
	order := append(b.order[depth][:0], allowed...)
	for _, p := range order {
		contr[p] = b.contribution(p)
	}
	slices.SortFunc(order, func(x, y int) int {
		if c := cmp.Compare(contr[y], contr[x]); c != 0 {
			return c
		}
		return cmp.Compare(x, y)
	})
	if r == 1 {
		for _, p := range order {
			if hv+contr[p]+b.slack < b.bestVal {
				break
			}
			b.leaf = append(append(b.leaf[:0], b.chosen...), p)
			slices.Sort(b.leaf)
			b.offer(b.leaf)
		}
		return
	}
	for i, p := range order {
		if len(order)-i < r {
			break
		}
		// By submodularity no completion through p can beat hv plus the
		// r largest contributions from here on; they shrink with i.
		ub := hv
		for _, q := range order[i : i+r] {
			ub += contr[q]
		}
		if ub+b.slack < b.bestVal {
			break
		}
		b.push(p)
		b.search(order[i+1:], hv+contr[p])
		b.pop()
	}
}

// incumbent sets best to the greedy subset improved by single swaps until
// none gains more than rounding noise.
func (b *bnb) incumbent() {
	in := make([]bool, b.m)
	var hv float64
	for len(b.chosen) < b.k {
		best, bv := -1, 0.0
		for p := range b.m {
			if !in[p] {
				if v := b.contribution(p); best < 0 || v > bv {
					best, bv = p, v
				}
			}
		}
		in[best] = true
		b.push(best)
		hv += bv
	}
	cur := append([]int(nil), b.chosen...)
	for improved := true; improved; {
		improved = false
		for out := 0; out < b.k && !improved; out++ {
			b.chosen, b.set = b.chosen[:0], b.set[:0]
			for j, p := range cur {
				if j != out {
					b.push(p)
				}
			}
			base := b.value(sortedCopy(b.chosen))
			for p := range b.m {
				if in[p] {
					continue
				}
				if v := b.contribution(p); base+v > hv*(1+1e-12) {
					in[cur[out]], in[p] = false, true
					cur[out] = p
					hv = base + v
					improved = true
					break
				}
			}
		}
	}
	b.chosen, b.set = b.chosen[:0], b.set[:0]
	b.offer(sortedCopy(cur))
}

func sortedCopy(s []int) []int {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}
