// Adapted from Go's math/sin.go (BSD-style license, The Go Authors), from
// Cephes' sin.c by Stephen L. Moshier; products that feed a sum are rounded
// on their own (float64(x*y)) so that no architecture fuses them. The
// standard library's polynomials are fused on arm64 and elsewhere: about 1%
// of calls differed in their last bit.

package fmath

import "math"

// sin coefficients
var sinCoef = [...]float64{
	1.58962301576546568060e-10, // 0x3de5d8fd1fd19ccd
	-2.50507477628578072866e-8, // 0xbe5ae5e5a9291f5d
	2.75573136213857245213e-6,  // 0x3ec71de3567d48a1
	-1.98412698295895385996e-4, // 0xbf2a01a019bfdf03
	8.33333333332211858878e-3,  // 0x3f8111111110f7d0
	-1.66666666666666307295e-1, // 0xbfc5555555555548
}

// cos coefficients
var cosCoef = [...]float64{
	-1.13585365213876817300e-11, // 0xbda8fa49a0861a9b
	2.08757008419747316778e-9,   // 0x3e21ee9d7b4e3f05
	-2.75573141792967388112e-7,  // 0xbe927e4f7eac4bc6
	2.48015872888517045348e-5,   // 0x3efa01a019c844f5
	-1.38888888888730564116e-3,  // 0xbf56c16c16c14f91
	4.16666666666665929218e-2,   // 0x3fa555555555554b
}

// Pi/4 split into three parts.
const (
	pi4A = 7.85398125648498535156e-1  // 0x3fe921fb40000000
	pi4B = 3.77489470793079817668e-8  // 0x3e64442d00000000
	pi4C = 2.69515142907905952645e-15 // 0x3ce8469898cc5170
)

// Cos returns the cosine of the radian argument x, within 1 ulp where
// |x| ≤ 2π (TestSinCosAccuracy). Special cases are those of math.Cos.
func Cos(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return math.NaN()
	}
	sign := false
	x = math.Abs(x)
	j, z := reduce(x)
	if j > 3 {
		j -= 4
		sign = !sign
	}
	if j > 1 {
		sign = !sign
	}
	var y float64
	if j == 1 || j == 2 {
		y = sinPoly(z)
	} else {
		y = cosPoly(z)
	}
	if sign {
		y = -y
	}
	return y
}

// Sin returns the sine of the radian argument x, within 1 ulp where
// |x| ≤ 2π (TestSinCosAccuracy). Special cases are those of math.Sin.
func Sin(x float64) float64 {
	switch {
	case x == 0 || math.IsNaN(x):
		return x // ±0 or NaN
	case math.IsInf(x, 0):
		return math.NaN()
	}
	sign := false
	if x < 0 {
		x = -x
		sign = true
	}
	j, z := reduce(x)
	if j > 3 {
		sign = !sign
		j -= 4
	}
	var y float64
	if j == 1 || j == 2 {
		y = cosPoly(z)
	} else {
		y = sinPoly(z)
	}
	if sign {
		y = -y
	}
	return y
}

// reduce returns the octant j (mod 8, zeros mapped to the origin) and the
// remainder z of x ≥ 0 by Pi/4.
func reduce(x float64) (j uint64, z float64) {
	if x >= reduceThreshold {
		return trigReduce(x)
	}
	j = uint64(float64(x * (4 / math.Pi))) // integer part of x/(Pi/4); riscv64 and ppc64le would fuse the product into the conversion
	y := float64(j)
	if j&1 == 1 {
		j++
		y++
	}
	j &= 7
	z = ((x - float64(y*pi4A)) - float64(y*pi4B)) - float64(y*pi4C) // extended precision
	return j, z
}

// sinPoly is sin(z) for |z| ≤ Pi/4.
func sinPoly(z float64) float64 {
	zz := z * z
	p := float64(sinCoef[0]*zz) + sinCoef[1]
	p = float64(p*zz) + sinCoef[2]
	p = float64(p*zz) + sinCoef[3]
	p = float64(p*zz) + sinCoef[4]
	p = float64(p*zz) + sinCoef[5]
	return z + float64(z*zz*p)
}

// cosPoly is cos(z) for |z| ≤ Pi/4.
func cosPoly(z float64) float64 {
	zz := z * z
	p := float64(cosCoef[0]*zz) + cosCoef[1]
	p = float64(p*zz) + cosCoef[2]
	p = float64(p*zz) + cosCoef[3]
	p = float64(p*zz) + cosCoef[4]
	p = float64(p*zz) + cosCoef[5]
	return (1.0 - float64(0.5*zz)) + float64(zz*zz*p)
}
