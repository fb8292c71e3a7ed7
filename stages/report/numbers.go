package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// The numbers are printed as stages/tables prints them in LaTeX (digits,
// "<0.001" for a half-width that rounds to zero, bold for the best as
// printed). These few lines are repeated rather than exported from
// stages/tables: editing that package would change the tables task's code
// identity, hence its key in every lock.

// Digits of the summary table: HV_last100 with 4 decimals ± 3, regret with 1 ± 1.
const (
	hvDigits, hvCIDigits         = 4, 3
	regretDigits, regretCIDigits = 1, 1
)

func fixed(v float64, digits int) string { return fmt.Sprintf("%.*f", digits, v) }

// halfWidth prints a CI half-width: "± h", or "± <0.001" when it rounds to
// zero at the shown precision.
func halfWidth(h float64, digits int) string {
	if math.Round(h*math.Pow10(digits)) == 0 {
		return "± &lt;" + fixed(math.Pow10(-digits), digits)
	}
	return "± " + fixed(h, digits)
}

// signed prints v with digits decimals, a true minus sign, and no "−0".
func signed(v float64, digits int) string {
	s := fixed(v, digits)
	if strings.Trim(s, "-0.") == "" {
		return strings.TrimPrefix(s, "-")
	}
	if strings.HasPrefix(s, "-") {
		return "−" + s[1:]
	}
	return s
}

// pValue prints a p-value: 4 decimals, or scientific below 0.001.
func pValue(p float64) string {
	if math.IsNaN(p) {
		return "n/a"
	}
	if p < 1e-3 {
		m, e, _ := strings.Cut(fmt.Sprintf("%.1e", p), "e") // no math.Log10 under stages/ (fma_test.go)
		n, _ := strconv.Atoi(e)
		return m + "×10<sup>" + signed(float64(n), 0) + "</sup>"
	}
	return fmt.Sprintf("%.4f", p)
}

// cohen prints Cohen's d with 2 decimals (∞ when the differences do not vary).
func cohen(d float64) string {
	switch {
	case math.IsInf(d, 1):
		return "∞"
	case math.IsInf(d, -1):
		return "−∞"
	case math.IsNaN(d):
		return "n/a"
	}
	return signed(d, 2)
}

func roundTo(v float64, digits int) float64 {
	f := math.Pow10(digits)
	return math.Round(v*f) / f
}
