// Package fmath holds the elementary functions and random variates whose
// bits THV's hashed results depend on, written so that they give the same
// bits on every architecture Go targets.
//
// Two things make the standard library's results differ between CPUs: the
// compiler fuses x*y + z into one fused multiply-add on arm64, ppc64le,
// s390x, riscv64 and amd64 with GOAMD64=v3 (the Go specification allows it
// unless an explicit conversion forces the rounding), and some functions
// have assembly versions on some architectures only (math.Exp and math.Log
// on amd64, math.Exp on arm64 and s390x; amd64's Exp even picks its FMA path
// at run time). The functions here are the pure Go algorithms of the
// standard library (FreeBSD's msun and Cephes), with every product that
// feeds a sum written as float64(x*y), so that it is rounded on its own and
// never fused. They need not be correctly rounded, only identical
// everywhere and accurate: the tests measure each one's error against a
// math/big reference over its domain and state the bound in ulps.
//
// The same care is needed in every caller: a hashed computation writes
// float64(x*y) + z, or math.FMA where a fused result is wanted everywhere.
package fmath
