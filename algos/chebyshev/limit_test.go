package chebyshev

import "testing"

// TestLatticeSize checks latticeSize against C(h+d−1, d−1) computed by
// Pascal's rule, and its cap.
func TestLatticeSize(t *testing.T) {
	binom := func(n, k int) int {
		row := []int{1}
		for i := 1; i <= n; i++ {
			next := make([]int, i+1)
			next[0], next[i] = 1, 1
			for j := 1; j < i; j++ {
				next[j] = row[j-1] + row[j]
			}
			row = next
		}
		return row[k]
	}
	for d := 2; d <= 10; d++ {
		for h := 0; h <= 40; h++ {
			want := binom(h+d-1, d-1)
			if want > MaxLattice {
				want = MaxLattice + 1
			}
			if got := latticeSize(h, d); got != want {
				t.Errorf("latticeSize(%d, %d) = %d, want %d", h, d, got, want)
			}
		}
	}
	if got := latticeSize(MaxLattice, 10); got != MaxLattice+1 {
		t.Errorf("latticeSize(%d, %d) = %d", MaxLattice, 10, got)
	}
}
