package algos

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestFewestPullsLowest: the arms of fewest pulls, taken count by count,
// are the first k of a stable sort of the arms by their pulls, in order.
func TestFewestPullsLowest(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		n := 1 + r.IntN(40)
		k := 1 + r.IntN(n)
		counts := make([]int, n)
		for i := range counts {
			counts[i] = r.IntN(1 + r.IntN(5))
		}
		want := make([]int, n)
		for i := range want {
			want[i] = i
		}
		slices.SortStableFunc(want, func(a, b int) int { return counts[a] - counts[b] })
		got := make([]int, k)
		fewestPullsLowest(counts, got)
		if !slices.Equal(got, want[:k]) {
			t.Fatalf("counts %v, k = %d: got %v, want %v", counts, k, got, want[:k])
		}
	}
}
