package tables

import (
	"fmt"
	"math"
	"strings"

	"thv/envs/fmath"
	"thv/stages/formats"
)

// Digits of the summary table: HV_last with 4 decimals ± 3, regret with 1 ± 1.
const (
	HVDigits, HVCIDigits         = 4, 3
	RegretDigits, RegretCIDigits = 1, 1
)

// A Notation writes the tables' numbers in one markup: LaTeX for the
// tables, HTML for thv report's page, which prints them as the tables do.
type Notation struct {
	Minus       string // before the digits of a negative number
	Infinity    string // +∞
	NegInfinity string // −∞
	PlusMinus   string // before a CI half-width
	Below       string // before 10^−digits, for a half-width that rounds to zero
}

// LaTeX is the tables' notation.
var LaTeX = Notation{Minus: "$-$", Infinity: "$\\infty$", NegInfinity: "$-\\infty$", PlusMinus: "$\\pm$", Below: "$<$"}

// Fixed prints v with digits decimals.
func Fixed(v float64, digits int) string { return fmt.Sprintf("%.*f", digits, v) }

// CI prints a CI half-width as the paper does: "±h", or "<0.001" when it
// rounds to zero at the shown precision.
func (n Notation) CI(h float64, digits int) string {
	if math.Round(h*math.Pow10(digits)) == 0 {
		return n.Below + Fixed(math.Pow10(-digits), digits)
	}
	return n.PlusMinus + Fixed(h, digits)
}

// Signed prints v with digits decimals, the notation's minus sign, and no
// "−0".
func (n Notation) Signed(v float64, digits int) string {
	s := Fixed(v, digits)
	if strings.Trim(s, "-0.") == "" {
		return strings.TrimPrefix(s, "-")
	}
	if strings.HasPrefix(s, "-") {
		return n.Minus + s[1:]
	}
	return s
}

// Cohen prints Cohen's d with 2 decimals (∞ when the differences do not vary).
func (n Notation) Cohen(d float64) string {
	switch {
	case math.IsInf(d, 1):
		return n.Infinity
	case math.IsInf(d, -1):
		return n.NegInfinity
	case math.IsNaN(d):
		return "n/a"
	}
	return n.Signed(d, 2)
}

// formatP prints a p-value: 4 decimals, or scientific below 0.001.
func formatP(p float64) string {
	if p < 1e-3 {
		return fmt.Sprintf("$%.1f\\times10^{%d}$", p/math.Pow10(int(math.Floor(fmath.Log10(p)))), int(math.Floor(fmath.Log10(p))))
	}
	return fmt.Sprintf("%.4f", p)
}

// RoundTo rounds v to digits decimals.
func RoundTo(v float64, digits int) float64 {
	f := math.Pow10(digits)
	return math.Round(v*f) / f
}

// BestAsPrinted returns, per geometry, the best mean of the summary table's
// columns as printed (the highest HV_last, the lowest final regret):
// a mean printed the same is best, and bold.
func BestAsPrinted(p Params, cells []formats.Cell) (hv, regret map[string]string) {
	hv, regret = map[string]string{}, map[string]string{}
	for _, g := range p.Geometries {
		h, r := math.Inf(-1), math.Inf(1)
		for _, a := range p.Algorithms {
			c, ok := formats.CellOf(cells, g, a.Name)
			if !ok {
				continue
			}
			if v := RoundTo(c.HVLast.Mean, HVDigits); v > h {
				h = v
			}
			if v := RoundTo(c.RegretPos.Mean, RegretDigits); v < r {
				r = v
			}
		}
		hv[g], regret[g] = Fixed(h, HVDigits), Fixed(r, RegretDigits)
	}
	return hv, regret
}
