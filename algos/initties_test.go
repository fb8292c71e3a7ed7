package algos

import (
	"slices"
	"testing"

	"thv/envs"
)

// TestSimulateRandomInitTies: with random ties the initialisation still
// pulls every arm m0 times in ⌈n·m0/k⌉ rounds (each round the k arms of
// fewest pulls), but not in index order; the same stream gives the same
// slates (the initialisation is shared by all algorithms of a seed).
func TestSimulateRandomInitTies(t *testing.T) {
	in, _ := envs.Generate(envs.Concave, 2, 36, 1)
	init := InitRounds(36, 3, 2)
	run := func(seed uint64) [][]int {
		b, _ := envs.NewBandit(in, 0.05, 1)
		p := &lastArms{Stats: NewStats(36, 2), n: 36}
		tr, err := SimulateWith(p, b, 3, 50, 2, nil, envs.NewStream(seed, "init-ties"))
		if err != nil {
			t.Fatal(err)
		}
		if p.selected != 50-init {
			t.Fatalf("policy selected %d times, want %d", p.selected, 50-init)
		}
		counts := make([]int, 36)
		for r, s := range tr.Slates[:init] {
			for _, i := range s {
				counts[i]++
			}
			// Round r of a round robin: no arm is two pulls ahead of another.
			lo, hi := slices.Min(counts), slices.Max(counts)
			if hi-lo > 1 {
				t.Fatalf("init round %d: pull counts range %d..%d, want fewest pulls first", r+1, lo, hi)
			}
		}
		for i, c := range counts {
			if c != 2 {
				t.Fatalf("arm %d pulled %d times in the initialisation, want 2", i, c)
			}
		}
		return tr.Slates[:init]
	}
	a, again, other := run(7), run(7), run(8)
	if !slices.EqualFunc(a, again, slices.Equal) {
		t.Fatal("the same ties stream gave different initial slates")
	}
	if slices.EqualFunc(a, other, slices.Equal) {
		t.Fatal("two ties streams gave the same initial slates")
	}
	lowest := true
	for r, s := range a {
		first := (3 * r) % 36
		if !slices.Equal(s, []int{first, first + 1, first + 2}) {
			lowest = false
		}
	}
	if lowest {
		t.Fatal("random ties played the lowest-index round robin")
	}
}
