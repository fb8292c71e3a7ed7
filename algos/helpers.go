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
// Each computed score is within errs[i] of its exact value; where two lie
// close enough for rounding to have ordered them (Near), x decides. Scores
// must not be NaN.
func TopKExact(scores, errs []float64, slate []int, x ExactScores) {
	k := len(slate)
	n := 0
	last := math.Inf(-1) // once the slate is full: the score of its last arm
	lastErr := 0.0
	before := func(i, j int) bool {
		s, t := scores[i], scores[j]
		if Near(s, t, errs[i], errs[j]) {
			c := x.CompareExact(i, j)
			return c > 0 || c == 0 && i < j
		}
		return s > t
	}
	for i, s := range scores {
		// The last arm has a lower index than i: a score clearly below
		// its score does not rank before it (most arms stop here).
		if n == k && s <= last && !Near(s, last, errs[i], lastErr) {
			continue
		}
		if n == k && !before(i, slate[k-1]) {
			continue
		}
		j := min(n, k-1)
		for j > 0 && before(i, slate[j-1]) {
			slate[j] = slate[j-1]
			j--
		}
		slate[j] = i
		if n < k {
			n++
		}
		if n == k {
			last, lastErr = scores[slate[k-1]], errs[slate[k-1]]
		}
	}
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
