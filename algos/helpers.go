package algos

import "math"

// ExactScores compares two arms' scores in exact arithmetic (a policy's
// scores as functions of the floats it holds): the sign of score_i −
// score_j.
type ExactScores interface {
	CompareExact(i, j int) int
}

// TopKExact is TopK deciding in exact arithmetic: the len(slate) arms of
// highest score, in decreasing order, the lowest index winning exact ties.
// Each computed score s is within rel·|s| + abs of its exact value; where
// two lie close enough for rounding to have ordered them (Near), x
// decides. Scores must not be NaN.
func TopKExact(scores []float64, rel, abs float64, slate []int, x ExactScores) {
	TopKExactAbove(scores, rel, abs, math.Inf(-1), slate, x)
}

// TopKExactAbove is TopKExact told bar, a number that at least
// len(slate) of the scores reach (−Inf: none known, as TopKExact): the
// arms that bar proves below those from the start are passed over before
// the slate is full.
func TopKExactAbove(scores []float64, rel, abs, bar float64, slate []int, x ExactScores) {
	k := len(slate)
	n := 0
	last, lastErr := math.NaN(), 0.0 // once the slate is full: its last arm's score and error
	// Below lo, a score s ≥ 0 is below the exact score of k arms: the
	// slate's last arm's (once full) or those that reach bar. Such an s
	// is at most that score b, so its error is at most b's, and s plus
	// it is below b less it (most arms stop there, as in TopK); lo1
	// bounds b less its error, for the other arms. The margins 2⁻⁵⁰·|·|
	// cover the roundings of these bounds themselves.
	lo, lo1 := math.Inf(-1), math.Inf(-1)
	if bar > math.Inf(-1) {
		lo, lo1 = below(bar, float64(rel*math.Abs(bar))+abs)
		if lo != lo || lo1 != lo1 { // NaN: no bound
			lo, lo1 = math.Inf(-1), math.Inf(-1)
		}
	}
	loBar, lo1Bar := lo, lo1
	for i, s := range scores {
		if s >= 0 && s < lo {
			continue
		}
		es := float64(rel*math.Abs(s)) + abs
		if hi := s + es; hi+float64(0x1p-50*math.Abs(hi)) < lo1 {
			continue
		}
		if n == k {
			if Near(s, last, es, lastErr) {
				if !exactlyBefore(i, slate[k-1], x) {
					continue
				}
			} else if !(s > last) {
				continue
			}
		}
		j := min(n, k-1)
		for j > 0 {
			t := scores[slate[j-1]]
			if Near(s, t, es, float64(rel*math.Abs(t))+abs) {
				if !exactlyBefore(i, slate[j-1], x) {
					break
				}
			} else if !(s > t) {
				break
			}
			slate[j] = slate[j-1]
			j--
		}
		slate[j] = i
		if n < k {
			n++
		}
		if n == k {
			last = scores[slate[k-1]]
			lastErr = float64(rel*math.Abs(last)) + abs
			lo, lo1 = below(last, lastErr)
			lo, lo1 = max(lo, loBar), max(lo1, lo1Bar) // NaN (no bound from last) disables both
		}
	}
}

// below returns the bounds of TopKExactAbove for a score b of error e:
// under b − 2e, and under b − e (less the margins).
func below(b, e float64) (lo, lo1 float64) {
	x := b - e
	lo1 = x - float64(0x1p-50*math.Abs(x)) - 0x1p-1000
	x -= e
	lo = x - float64(0x1p-50*math.Abs(x)) - 0x1p-1000
	return lo, lo1
}

// exactlyBefore reports whether arm i ranks before arm j by their exact
// scores (x), the lower index first on exact ties.
func exactlyBefore(i, j int, x ExactScores) bool {
	c := x.CompareExact(i, j)
	return c > 0 || c == 0 && i < j
}

// TopK fills slate with the len(slate) arms of highest score, in decreasing
// score order; the lowest index wins ties. Scores must not be NaN.
func TopK(scores []float64, slate []int) {
	k := len(slate)
	n := 0
	last := math.NaN() // once the slate is full: the score of its last arm
	for i, s := range scores {
		// The last arm has a lower index than i, so a score ≤ its score
		// (both numbers) does not rank before it: most arms stop here.
		if n == k && s <= last {
			continue
		}
		// Insertion into a sorted prefix: k ≤ 6 in the paper, n up to 10⁴.
		if n == k && !better(s, i, scores[slate[k-1]], slate[k-1]) {
			continue
		}
		j := min(n, k-1)
		for j > 0 && better(s, i, scores[slate[j-1]], slate[j-1]) {
			slate[j] = slate[j-1]
			j--
		}
		slate[j] = i
		if n < k {
			n++
		}
		if n == k {
			last = scores[slate[k-1]]
		}
	}
}

// better reports whether score s of arm i ranks before score t of arm j:
// cmp.Compare(s, t) > 0, or equal scores and i < j. Written without
// cmp.Compare's NaN tests first, as s > t or s == t, which decide every
// pair of numbers; the last term keeps cmp.Compare's reading of NaN (below
// every number, equal to itself) for the rest.
func better(s float64, i int, t float64, j int) bool {
	return s > t || s == t && i < j || t != t && (s == s || i < j)
}

// Candidates are the arms a policy ranks in a round, by increasing index
// (positions keep TopKExact's rule, the lowest index first on exact ties),
// with their computed scores: every arm but those proven out of the top k.
// Their CompareExact compares positions a and b as X compares the arms.
type Candidates struct {
	Arms   []int
	Scores []float64
	X      ExactScores
}

// Reset empties c, keeping its storage.
func (c *Candidates) Reset() { c.Arms, c.Scores = c.Arms[:0], c.Scores[:0] }

// Add appends arm i of score s; arms must come by increasing index.
func (c *Candidates) Add(i int, s float64) {
	c.Arms, c.Scores = append(c.Arms, i), append(c.Scores, s)
}

// CompareExact compares candidates a and b (positions in Arms) exactly.
func (c *Candidates) CompareExact(a, b int) int { return c.X.CompareExact(c.Arms[a], c.Arms[b]) }

// InsertDecreasing inserts v into top, decreasing, if it is among its k
// largest values; once it holds k values, its last bounds the k-th
// largest inserted from below.
func InsertDecreasing(top []float64, k int, v float64) []float64 {
	if len(top) == k && !(v > top[k-1]) {
		return top
	}
	if len(top) < k {
		top = append(top, v)
	}
	j := len(top) - 1
	for ; j > 0 && top[j-1] < v; j-- {
		top[j] = top[j-1]
	}
	top[j] = v
	return top
}

// BelowBar returns a number under which a computed value v, within abs
// of its exact value, is below the exact value of a computed bar within
// abs of its own, whatever the roundings: under bar − 2·abs, less the
// margins 2⁻⁵⁰·|·| and 2⁻¹⁰⁰⁰ that cover this bound's own roundings (as
// TopKExact's). NaN (nothing is under it) when bar or abs is not finite.
func BelowBar(bar, abs float64) float64 {
	b := bar - float64(2*abs)
	return b - float64(0x1p-50*math.Abs(b)) - 0x1p-1000
}
