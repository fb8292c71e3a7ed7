// Adapted from Go's math/exp.go (BSD-style license, The Go Authors), which
// follows FreeBSD's e_exp.c; products that feed a sum are rounded on their
// own (float64(x*y)) so that no architecture fuses them.

package fmath

import "math"

// Exp returns e**x, within 1 ulp (TestExpAccuracy). Special cases are
// those of math.Exp.
func Exp(x float64) float64 {
	const (
		ln2Hi = 6.93147180369123816490e-01
		ln2Lo = 1.90821492927058770002e-10
		log2e = 1.44269504088896338700e+00

		overflow  = 7.09782712893383973096e+02
		underflow = -7.45133219101941108420e+02
		nearZero  = 1.0 / (1 << 28) // 2**-28
	)

	switch {
	case math.IsNaN(x):
		return x
	case x > overflow: // handles case where x is +∞
		return math.Inf(1)
	case x < underflow: // handles case where x is -∞
		return 0
	case -nearZero < x && x < nearZero:
		return 1 + x
	}

	// reduce; computed as r = hi - lo for extra precision.
	var k int
	switch {
	case x < 0:
		k = int(float64(log2e*x) - 0.5)
	case x > 0:
		k = int(float64(log2e*x) + 0.5)
	}
	hi := x - float64(float64(k)*ln2Hi)
	lo := float64(k) * ln2Lo
	return expmulti(hi, lo, k)
}

// expmulti returns e**r × 2**k where r = hi - lo and |r| ≤ ln(2)/2.
func expmulti(hi, lo float64, k int) float64 {
	const (
		p1 = 1.66666666666666657415e-01  /* 0x3FC55555; 0x55555555 */
		p2 = -2.77777777770155933842e-03 /* 0xBF66C16C; 0x16BEBD93 */
		p3 = 6.61375632143793436117e-05  /* 0x3F11566A; 0xAF25DE2C */
		p4 = -1.65339022054652515390e-06 /* 0xBEBBBD41; 0xC5D26BF1 */
		p5 = 4.13813679705723846039e-08  /* 0x3E663769; 0x72BEA4D0 */
	)

	r := hi - lo
	t := r * r
	q := p4 + float64(t*p5)
	q = p3 + float64(t*q)
	q = p2 + float64(t*q)
	q = p1 + float64(t*q)
	c := r - float64(t*q)
	y := 1 - ((lo - (r*c)/(2-c)) - hi)
	return math.Ldexp(y, k)
}
