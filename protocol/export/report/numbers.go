package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"thv/stages/tables"
)

// The numbers are printed as stages/tables prints them in LaTeX (digits,
// "<0.001" for a half-width that rounds to zero, bold for the best as
// printed), in HTML.
var notation = tables.Notation{Minus: "−", Infinity: "∞", NegInfinity: "−∞", PlusMinus: "± ", Below: "± &lt;"}

// pValue prints a p-value: 4 decimals, or scientific below 0.001.
func pValue(p float64) string {
	if math.IsNaN(p) {
		return "n/a"
	}
	if p < 1e-3 {
		m, e, _ := strings.Cut(fmt.Sprintf("%.1e", p), "e") // no math.Log10 under stages/ (fma_test.go)
		n, _ := strconv.Atoi(e)
		return m + "×10<sup>" + notation.Signed(float64(n), 0) + "</sup>"
	}
	return fmt.Sprintf("%.4f", p)
}
