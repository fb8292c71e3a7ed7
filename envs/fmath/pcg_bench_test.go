package fmath

import "testing"

func BenchmarkPCGNormFloat64s5(b *testing.B) {
	p := NewPCGValue(1, 2)
	buf := make([]float64, 5)
	for b.Loop() {
		p.NormFloat64s(buf)
	}
}
