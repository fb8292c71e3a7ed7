package compare

import (
	"fmt"
	"math"
	"strconv"
)

// Numbers are printed with the precision they carry: a mean to the
// decimal of its CI's second significant digit (at most 4 decimals, the
// paper's), the CI to the same decimal, "< 0.0001" for a CI that rounds
// to zero there (seeds that agree to the last bits give a CI of 1e-16,
// which is rounding, not information). No logarithm: the decimals come
// from comparisons, exactly.

// maxDecimals is the finest decimal printed: the paper's tables print
// HV_last100 to 4.
const maxDecimals = 4

// decimalsFor is the decimal of the second significant digit of ci, in
// [0, maxDecimals].
func decimalsFor(ci float64) int {
	d := 0
	for limit := 10.0; d < maxDecimals && ci < limit; limit /= 10 {
		d++
	}
	return d
}

// Estimate prints a mean and its 95% CI half-width: "0.6499 ± 0.0007",
// "79.7 ± 3.1", "4.7120 ± < 0.0001"; a CI that is not a number (one
// seed) as "0.6499 (no CI)".
func Estimate(mean, ci float64) string {
	if math.IsNaN(mean) {
		return "—"
	}
	if math.IsNaN(ci) || math.IsInf(ci, 0) {
		return fmt.Sprintf("%.4g (no CI)", mean)
	}
	d := decimalsFor(ci)
	half := strconv.FormatFloat(ci, 'f', d, 64)
	if math.Round(float64(ci*math.Pow10(d))) == 0 {
		half = "< " + strconv.FormatFloat(math.Pow10(-d), 'f', d, 64)
	}
	return strconv.FormatFloat(mean, 'f', d, 64) + " ± " + half
}

// Published prints a published value and its CI as transcribed (the
// shortest decimal that reads back as the same number).
func Published(v, ci float64) string {
	return strconv.FormatFloat(v, 'f', -1, 64) + " ± " + strconv.FormatFloat(ci, 'f', -1, 64)
}

// Diff prints ours − published with the decimals of our CI, and a
// sign.
func Diff(diff, ci float64) string {
	if math.IsNaN(diff) {
		return "—"
	}
	d := maxDecimals
	if !math.IsNaN(ci) && !math.IsInf(ci, 0) {
		d = decimalsFor(ci)
	}
	s := strconv.FormatFloat(diff, 'f', d, 64)
	if s[0] != '-' {
		s = "+" + s
	}
	return s
}

// Relative prints a relative difference as a signed percentage with one
// decimal.
func Relative(rel float64) string {
	if math.IsNaN(rel) {
		return "—"
	}
	return fmt.Sprintf("%+.1f%%", 100*rel)
}

// Percentile prints a percentile rank (0–100) with no decimal, "—" for
// none.
func Percentile(p float64) string {
	if math.IsNaN(p) {
		return "—"
	}
	return fmt.Sprintf("%.0f", p)
}
