package hv

// Greedy selects min(k, len(points)) indices by repeatedly adding the point
// of largest contribution to the points already selected; the lowest index
// wins ties. The result is in selection order. HV of the result is at least
// (1 − 1/e) times the best size-k hypervolume, as hypervolume is monotone
// and submodular.
func Greedy(points [][]float64, k int, ref []float64) []int {
	c := pool.Get().(*Calculator)
	defer pool.Put(c)
	return c.greedy(points, k, ref, false)
}

// LazyGreedy returns exactly what Greedy returns, ties included, usually
// with far fewer contribution evaluations: it keeps the contributions
// computed in earlier rounds as upper bounds in a priority queue, and
// re-evaluates a point only when its bound reaches the top (contributions
// only shrink as the selection grows).
//
// Computed contributions are not exactly submodular: rounding can make a
// fresh value exceed an older one by a few units in the last place of the
// box volume. Stale bounds are therefore raised by 1e-9 times the point's
// box volume, so any near-tie is re-evaluated; a point is selected only
// when its fresh value is at least every bound, and among equal fresh
// values the lowest index is at the top. Both functions compute every
// contribution with the same code on the same points in the same order,
// so their values are bit-identical.
func LazyGreedy(points [][]float64, k int, ref []float64) []int {
	c := pool.Get().(*Calculator)
	defer pool.Put(c)
	return c.greedy(points, k, ref, true)
}

// staleSlack is the relative amount by which LazyGreedy raises stale
// bounds, far above the rounding error of any contribution.
const staleSlack = 1e-9

func (c *Calculator) greedy(points [][]float64, k int, ref []float64, lazy bool) []int {
	n := len(points)
	k = min(k, n)
	if k <= 0 {
		return []int{}
	}
	d := dimension(points, ref)
	tp := make([]float64, 0, n*d)
	for _, p := range points {
		tp = translate(tp, p, ref)
	}
	out := make([]int, 0, k)
	sel := make([]float64, 0, k*d)
	pick := func(i int) {
		out = append(out, i)
		sel = append(sel, tp[i*d:i*d+d]...)
	}
	if !lazy {
		used := make([]bool, n)
		for len(out) < k {
			best, bv := -1, 0.0
			for i := range n {
				if used[i] {
					continue
				}
				if v := c.contribution(tp[i*d:i*d+d], sel, len(out)); best < 0 || v > bv {
					best, bv = i, v
				}
			}
			used[best] = true
			pick(best)
		}
		return out
	}

	h := make(lazyHeap, n)
	slack := make([]float64, n)
	for i := range n {
		v := c.contribution(tp[i*d:i*d+d], sel, 0)
		h[i] = lazyEntry{key: v, val: v, i: int32(i)}
		slack[i] = staleSlack * v
	}
	h.init()
	round := int32(0)
	for len(out) < k {
		top := &h[0]
		if top.round != round {
			i := int(top.i)
			v := c.contribution(tp[i*d:i*d+d], sel, len(out))
			top.key, top.val, top.round = v, v, round
			h.down(0)
			continue
		}
		pick(int(top.i))
		h[0] = h[len(h)-1]
		h = h[:len(h)-1]
		round++
		for j := range h {
			h[j].key = h[j].val + slack[h[j].i]
		}
		h.init()
	}
	return out
}

// lazyEntry is a point in the LazyGreedy queue: val is its contribution as
// of round, key the bound the queue is ordered by (val while fresh).
type lazyEntry struct {
	key, val float64
	i, round int32
}

// lazyHeap is a binary max-heap by key, then lowest index.
type lazyHeap []lazyEntry

func (h lazyHeap) less(a, b int) bool {
	return h[a].key > h[b].key || h[a].key == h[b].key && h[a].i < h[b].i
}

func (h lazyHeap) init() {
	for i := len(h)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

func (h lazyHeap) down(i int) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		j := l
		if r := l + 1; r < len(h) && h.less(r, l) {
			j = r
		}
		if !h.less(j, i) {
			return
		}
		h[i], h[j] = h[j], h[i]
		i = j
	}
}
