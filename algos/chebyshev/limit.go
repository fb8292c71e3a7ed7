package chebyshev

import (
	"fmt"
	"math"
)

// MaxLattice bounds ChebyshevUCB's lattice, C(divisions+d−1, d−1) weight
// vectors built whole for every run: one of the protocol's ceilings
// (docs/reliability.md, "Protocol limits").
const MaxLattice = 100_000

// checkLattice is ChebyshevUCB's algos.Spec.Limit: the lattice that
// params' divisions make at d objectives must hold at most MaxLattice
// weight vectors.
func checkLattice(params map[string]float64, d int, at string) error {
	h, ok := params["divisions"]
	if !ok {
		return nil
	}
	hi := max(0, int(math.Min(math.Round(h), MaxLattice))) // as New rounds it
	if n := latticeSize(hi, d); n > MaxLattice {
		return fmt.Errorf("divisions = %v: C(H+d−1, d−1) weight vectors with d = %d (%s) are more than %d, the limit on ChebyshevUCB's lattice (docs/reliability.md, \"Protocol limits\"): give fewer divisions",
			h, d, at, MaxLattice)
	}
	return nil
}

// latticeSize is C(h+d−1, d−1), or MaxLattice+1 if it is larger.
func latticeSize(h, d int) int {
	if d < 1 {
		return 0
	}
	// C(h+j, j) for j = 1..d−1, each exact: C(h+j, j) = C(h+j−1, j−1)·(h+j)/j.
	c := 1
	for j := 1; j < d; j++ {
		c = c * (h + j) / j
		if c > MaxLattice {
			return MaxLattice + 1
		}
	}
	return c
}
