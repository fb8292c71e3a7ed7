// Adapted from Go's math/atan.go (BSD-style license, The Go Authors), from
// Cephes' atan.c by Stephen L. Moshier; products that feed a sum are rounded
// on their own (float64(x*y)) so that no architecture fuses them.

package fmath

import "math"

// Atan returns the arctangent of x in radians (TestAtanAccuracy states the
// bound). Special cases are those of math.Atan.
func Atan(x float64) float64 {
	if x == 0 {
		return x
	}
	if x > 0 {
		return satan(x)
	}
	return -satan(-x)
}

// xatan evaluates a series valid in the range [0, 0.66].
func xatan(x float64) float64 {
	const (
		p0 = -8.750608600031904122785e-01
		p1 = -1.615753718733365076637e+01
		p2 = -7.500855792314704667340e+01
		p3 = -1.228866684490136173410e+02
		p4 = -6.485021904942025371773e+01
		q0 = +2.485846490142306297962e+01
		q1 = +1.650270098316988542046e+02
		q2 = +4.328810604912902668951e+02
		q3 = +4.853903996359136964868e+02
		q4 = +1.945506571482613964425e+02
	)
	z := float64(x * x) // rounded: it also feeds z + q0
	p := float64(p0*z) + p1
	p = float64(p*z) + p2
	p = float64(p*z) + p3
	p = float64(p*z) + p4
	q := z + q0
	q = float64(q*z) + q1
	q = float64(q*z) + q2
	q = float64(q*z) + q3
	q = float64(q*z) + q4
	z = z * p / q
	return float64(x*z) + x
}

// satan reduces its argument (known to be positive) to the range [0, 0.66]
// and calls xatan.
func satan(x float64) float64 {
	const (
		morebits = 6.123233995736765886130e-17 // pi/2 = PIO2 + morebits
		tan3pio8 = 2.41421356237309504880      // tan(3*pi/8)
	)
	if x <= 0.66 {
		return xatan(x)
	}
	if x > tan3pio8 {
		return math.Pi/2 - xatan(1/x) + morebits
	}
	return math.Pi/4 + xatan((x-1)/(x+1)) + 0.5*morebits
}
