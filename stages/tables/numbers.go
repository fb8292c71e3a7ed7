package tables

import (
	"fmt"
	"math"
	"strings"

	"thv/envs/fmath"
)

// formatValue prints a mean with digits decimals (for the tables).
func formatValue(v float64, digits int) string { return fmt.Sprintf("%.*f", digits, v) }

// formatCI prints a CI half-width as the paper does: "$\pm$h", or "$<$0.001"
// when it rounds to zero at the shown precision.
func formatCI(h float64, digits int) string {
	if math.Round(h*math.Pow10(digits)) == 0 {
		return fmt.Sprintf("$<$%s", formatValue(math.Pow10(-digits), digits))
	}
	return "$\\pm$" + formatValue(h, digits)
}

// formatP prints a p-value: 4 decimals, or scientific below 0.001.
func formatP(p float64) string {
	if p < 1e-3 {
		return fmt.Sprintf("$%.1f\\times10^{%d}$", p/math.Pow10(int(math.Floor(fmath.Log10(p)))), int(math.Floor(fmath.Log10(p))))
	}
	return fmt.Sprintf("%.4f", p)
}

// formatSigned prints v with digits decimals and an explicit minus sign in math mode.
func formatSigned(v float64, digits int) string {
	s := formatValue(v, digits)
	if strings.Trim(s, "-0.") == "" {
		return strings.TrimPrefix(s, "-") // no "−0.0000"
	}
	if strings.HasPrefix(s, "-") {
		return "$-$" + s[1:]
	}
	return s
}

// formatCohen prints Cohen's d with 2 decimals (∞ when the differences do not vary).
func formatCohen(d float64) string {
	switch {
	case math.IsInf(d, 1):
		return "$\\infty$"
	case math.IsInf(d, -1):
		return "$-\\infty$"
	case math.IsNaN(d):
		return "n/a"
	}
	return formatSigned(d, 2)
}

// roundTo rounds v to digits decimals.
func roundTo(v float64, digits int) float64 {
	f := math.Pow10(digits)
	return math.Round(v*f) / f
}
