package fmath

import (
	"math/bits"
	"math/rand/v2"
)

// PCG is math/rand/v2's PCG generator (PCG-DXSM, 128 bits of state) as a
// plain value: the same numbers as rand.NewPCG(hi, lo). Its batch loops
// keep the state in registers for a whole batch, where a *rand.PCG is
// loaded and stored at every draw (a third of a normal sample's cost).
type PCG struct{ hi, lo uint64 }

// NewPCGValue returns the generator rand.NewPCG(seed1, seed2) is.
func NewPCGValue(seed1, seed2 uint64) PCG { return PCG{seed1, seed2} }

// The constants of math/rand/v2's PCG: the 128-bit LCG multiplier and
// increment, and DXSM's output multiplier.
const (
	pcgMulHi    = 2549297995355413924
	pcgMulLo    = 4865540595714422341
	pcgIncHi    = 6364136223846793005
	pcgIncLo    = 1442695040888963407
	pcgCheapMul = 0xda942042e4dd58b5
)

// pcgStep advances the state (hi, lo) one step and returns the new state
// and its output, as rand.PCG.Uint64 does.
func pcgStep(hi, lo uint64) (nhi, nlo, out uint64) {
	nhi, nlo = bits.Mul64(lo, pcgMulLo)
	nhi += hi*pcgMulLo + lo*pcgMulHi
	nlo, c := bits.Add64(nlo, pcgIncLo, 0)
	nhi, _ = bits.Add64(nhi, pcgIncHi, c)
	out = nhi
	out ^= out >> 32
	out *= pcgCheapMul
	out ^= out >> 48
	out *= nlo | 1
	return nhi, nlo, out
}

// Uint64 returns the next number, as rand.PCG.Uint64.
func (p *PCG) Uint64() uint64 {
	var out uint64
	p.hi, p.lo, out = pcgStep(p.hi, p.lo)
	return out
}

// NormFloat64s fills dst with standard normal samples: the values, and
// uses of the generator, of len(dst) calls of NormFloat64PCG on the
// rand.PCG p is (TestPCG). The common case runs in normRun's loop, which
// calls nothing; the rest of a sample is finished here.
func (p *PCG) NormFloat64s(dst []float64) {
	k := 0
	for {
		var u uint64
		if k, u = p.normRun(dst, k); k == len(dst) {
			return
		}
		j := int32(u) // possibly negative
		i := u >> 32 & 0x7F
		x, ok := normOutside(p, j, i, float64(j)*float64(wn[i]))
		if !ok { // that try failed: the sample's next tries, as NormFloat64PCG makes them
			x = normFloat64(p)
		}
		dst[k] = x
		k++
	}
}

// normRun fills dst[k:] while the draws fall inside their strips'
// rectangles (better than 99% of them) and returns len(dst), or else the
// index of the sample whose draw u fell outside, and u.
func (p *PCG) normRun(dst []float64, k int) (int, uint64) {
	hi, lo := p.hi, p.lo
	// The constants loaded once, so that they stay in registers: as
	// immediates they are rematerialised at every draw.
	c := &pcgConsts
	mulHi, mulLo, incHi, incLo, cheapMul := c[0], c[1], c[2], c[3], c[4]
	for ; k < len(dst); k++ {
		h, l := bits.Mul64(lo, mulLo)
		h += hi*mulLo + lo*mulHi
		l, carry := bits.Add64(l, incLo, 0)
		h, _ = bits.Add64(h, incHi, carry)
		hi, lo = h, l
		u := h
		u ^= u >> 32
		u *= cheapMul
		u ^= u >> 48
		u *= l | 1
		j := int32(u) // possibly negative
		z := &zig[u>>32&0x7F]
		if absInt32(j) >= z.k {
			p.hi, p.lo = hi, lo
			return k, u
		}
		dst[k] = float64(j) * z.w
	}
	p.hi, p.lo = hi, lo
	return k, 0
}

var pcgConsts = [5]uint64{pcgMulHi, pcgMulLo, pcgIncHi, pcgIncLo, pcgCheapMul}

// zig holds kn and wn side by side for normRun: one index for both.
var zig = func() (z [128]struct {
	k uint32
	w float64
}) {
	for i := range z {
		z[i].k, z[i].w = kn[i], float64(wn[i])
	}
	return z
}()

// pcgState returns the state of r, which rand.PCG keeps unexported, by
// its binary encoding ("pcg:", then hi and lo big-endian).
func pcgState(r *rand.PCG) PCG {
	var buf [20]byte
	b, _ := r.AppendBinary(buf[:0])
	return PCG{beUint64(b[4:12]), beUint64(b[12:20])}
}

func beUint64(b []byte) uint64 {
	_ = b[7]
	return uint64(b[7]) | uint64(b[6])<<8 | uint64(b[5])<<16 | uint64(b[4])<<24 |
		uint64(b[3])<<32 | uint64(b[2])<<40 | uint64(b[1])<<48 | uint64(b[0])<<56
}
