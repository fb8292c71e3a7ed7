package compare

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"thv/stages/formats"
)

// Results are our statistics per setting ("d2" → its cells), as the
// summarize stage computed them.
type Results map[string][]formats.Cell

// metricOf returns a cell's mean of one of our metrics (ourMetric) and
// whether higher is better.
func metricOf(c *formats.Cell, metric string) (float64, bool) {
	e, _ := c.Metric(metric)
	return e.Mean, metric == "hv_last"
}

// settingsByD orders the settings of res by dimension (d2 before d10).
func (res Results) settingsByD() []string {
	names := make([]string, 0, len(res))
	for s := range res {
		names = append(names, s)
	}
	dim := func(s string) int { d, _ := strconv.Atoi(strings.TrimPrefix(s, "d")); return d }
	slices.SortFunc(names, func(a, b string) int { return cmp.Or(cmp.Compare(dim(a), dim(b)), cmp.Compare(a, b)) })
	return names
}

// bestOther returns the best cell of geometry g other than algo's, and
// algo's own cell.
func bestOther(cells []formats.Cell, g, algo, metric string) (own, best *formats.Cell) {
	for i := range cells {
		c := &cells[i]
		if c.Geometry != g {
			continue
		}
		if c.Algo == algo {
			own = c
			continue
		}
		v, higher := metricOf(c, metric)
		if best == nil {
			best = c
			continue
		}
		b, _ := metricOf(best, metric)
		if higher && v > b || !higher && v < b {
			best = c
		}
	}
	return own, best
}

// CheckClaims checks every claim against res, the results of protocol
// proto, with a claim about final_regret read as our metric regret
// (formats.RegretMetrics); a claim about every cell is judged over the
// geometries in this order. A claim is not judged where proto cannot
// reproduce the published values of its metric.
func CheckClaims(claims []Claim, proto Protocol, res Results, regret string, geometries []string) []formats.ClaimCheck {
	out := make([]formats.ClaimCheck, len(claims))
	for i, c := range claims {
		out[i] = formats.ClaimCheck{ID: c.ID, Kind: c.Kind, Text: c.Text}
		if why := proto.claimReason(c.Metric); why != "" {
			out[i].NotComparable = why
			continue
		}
		c.Metric = ourMetric(c.Metric, regret)
		switch c.Kind {
		case "best":
			out[i].Holds, out[i].Detail = checkBest(c, res, geometries)
		case "margin_grows":
			out[i].Holds, out[i].Detail = checkMargin(c, res)
		case "eta_star":
			out[i].Holds, out[i].Detail = checkEta(c, res)
		}
	}
	return out
}

// TieRule is how a claim of being best treats a tie, stated wherever a
// tie is shown.
const TieRule = "a tie for the best counts as best: no other algorithm is better"

// checkBest: the algorithm's mean is the best of its (setting, geometry)
// in every cell. Means equal to the last bit are a tie (an algorithm that
// accrues regret in the shared initialisation alone ties with any other
// that does), decided by TieRule.
func checkBest(c Claim, res Results, geometries []string) (bool, string) {
	var fails, ties []string
	n := 0
	for _, s := range res.settingsByD() {
		for _, g := range geometries {
			own, best := bestOther(res[s], g, c.Algorithm, c.Metric)
			if own == nil || best == nil {
				continue
			}
			n++
			v, higher := metricOf(own, c.Metric)
			b, _ := metricOf(best, c.Metric)
			switch {
			case v == b:
				ties = append(ties, fmt.Sprintf("%s/%s with %s at %s", s, g, best.Algo, significant(v, 4)))
			case higher && v > b || !higher && v < b:
			default:
				theirs, ours := distinct(b, v)
				fails = append(fails, fmt.Sprintf("%s/%s: %s %s vs %s %s", s, g, best.Algo, theirs, c.Algorithm, ours))
			}
		}
	}
	if n == 0 {
		return false, "no cell of " + c.Algorithm + " in the results"
	}
	tied := ""
	if len(ties) > 0 {
		tied = fmt.Sprintf("; tied for best in %d (%s; %s)", len(ties), strings.Join(ties, "; "), TieRule)
	}
	if len(fails) == 0 {
		return true, fmt.Sprintf("best in all %d (setting, geometry) cells%s", n, tied)
	}
	return false, fmt.Sprintf("not best in %d of %d cells: %s%s", len(fails), n, strings.Join(fails, "; "), tied)
}

// significant prints v with digits significant digits.
func significant(v float64, digits int) string { return strconv.FormatFloat(v, 'g', digits, 64) }

// distinct prints a and b (a ≠ b) with the fewest significant digits, at
// least 4, that tell them apart: two different numbers never print alike.
func distinct(a, b float64) (string, string) {
	for digits := 4; digits < 17; digits++ {
		if x, y := significant(a, digits), significant(b, digits); x != y {
			return x, y
		}
	}
	return strconv.FormatFloat(a, 'g', -1, 64), strconv.FormatFloat(b, 'g', -1, 64)
}

func checkMargin(c Claim, res Results) (bool, string) {
	var parts []string
	holds, prev, n := true, math.Inf(-1), 0
	for _, s := range res.settingsByD() {
		own, best := bestOther(res[s], c.Geometry, c.Algorithm, c.Metric)
		if own == nil || best == nil {
			continue
		}
		v, higher := metricOf(own, c.Metric)
		b, _ := metricOf(best, c.Metric)
		margin := v - b
		if !higher {
			margin = b - v
		}
		parts = append(parts, fmt.Sprintf("%s %s (vs %s)", s, signedSignificant(margin, 4), best.Algo))
		if n > 0 && !(margin > prev) {
			holds = false
		}
		prev = margin
		n++
	}
	if n < 2 {
		return false, "fewer than two settings to compare"
	}
	return holds, "margins on " + c.Geometry + ": " + strings.Join(parts, ", ") + " (it holds if each is larger than the one before; an equal margin does not grow)"
}

// signedSignificant is significant with a sign.
func signedSignificant(v float64, digits int) string {
	s := significant(v, digits)
	if s[0] != '-' {
		s = "+" + s
	}
	return s
}

func checkEta(c Claim, res Results) (bool, string) {
	var fails []string
	n := 0
	for _, s := range res.settingsByD() {
		for _, cell := range res[s] {
			if cell.Algo != c.Algorithm {
				continue
			}
			n++
			if cell.EtaStar != c.Value {
				fails = append(fails, fmt.Sprintf("%s/%s: η* = %g", s, cell.Geometry, cell.EtaStar))
			}
		}
	}
	if n == 0 {
		return false, "no cell of " + c.Algorithm + " in the results"
	}
	if len(fails) == 0 {
		return true, fmt.Sprintf("η* = %g in all %d cells", c.Value, n)
	}
	return false, fmt.Sprintf("η* ≠ %g in %d of %d cells: %s", c.Value, len(fails), n, strings.Join(fails, "; "))
}
