package algos

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestFrontTracker follows random sequences of edits (a few vectors moved,
// sometimes onto another one, sometimes a whole new set or a new size) and
// compares the tracked front, its size and its members, with the
// brute-force one.
func TestFrontTracker(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	var f FrontTracker
	for trial := range 500 {
		n, d := 1+rng.IntN(25), 1+rng.IntN(5)
		pts := randomPoints(rng, n, d)
		for step := range 20 {
			switch r := rng.IntN(10); {
			case r == 0:
				pts = randomPoints(rng, n, d)
			case r == 1:
				copy(pts[rng.IntN(n)], pts[rng.IntN(n)])
			case r == 2: // signs of zeros flipped: equal values, other bits
				for _, p := range pts {
					for j, x := range p {
						if x == 0 {
							p[j] = -x
						}
					}
				}
			default:
				for range 1 + rng.IntN(3) {
					pts[rng.IntN(n)][rng.IntN(d)] = float64(rng.IntN(5)) / 4
				}
			}
			front := bruteLayers(pts)[0]
			if got := f.Size(pts); got != len(front) {
				t.Fatalf("trial %d step %d, points %v: tracked front size %d, want %d", trial, step, pts, got, len(front))
			}
			checkDeps(t, &f, pts)
			for i := range pts {
				if got, want := f.OnFront(i), slices.Contains(front, i); got != want {
					t.Fatalf("trial %d step %d, points %v: OnFront(%d) = %v, want %v", trial, step, pts, i, got, want)
				}
			}
		}
	}
}

// frontPoints draws n points of which about half lie on the positive unit
// sphere (mutually non-dominated: large first layers, which switch the
// signature filter on) and the rest inside it, with exact duplicates and
// one-ulp neighbours.
func frontPoints(rng *rand.Rand, n, d int) [][]float64 {
	pts := make([][]float64, n)
	for i := range pts {
		p := make([]float64, d)
		var s float64
		for j := range p {
			p[j] = math.Abs(rng.NormFloat64())
			s += p[j] * p[j]
		}
		scale := 1 / math.Sqrt(s)
		if rng.IntN(2) == 0 {
			scale *= rng.Float64()
		}
		for j := range p {
			p[j] *= scale
		}
		switch r := rng.IntN(20); {
		case i > 0 && r == 0:
			copy(p, pts[rng.IntN(i)])
		case i > 0 && r == 1:
			copy(p, pts[rng.IntN(i)])
			j := rng.IntN(d)
			p[j] = math.Nextafter(p[j], float64(rng.IntN(2)))
		}
		pts[i] = p
	}
	return pts
}

// TestFrontTrackerBandit follows the sequences a bandit makes: n = 36 or 60
// arms of d = 2 or 3 (a reading's settings), k of them moving every round
// by a running mean of rewards on a coarse grid (so exact ties, duplicates
// and −0 are common), sometimes an arm moved onto another, and compares the
// tracked front with the brute-force one every round; half the trials tell
// the tracker which arms moved (SizeAfter), as the policies do.
func TestFrontTrackerBandit(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 3))
	for trial := range 40 {
		n, d, k := 36, 2, 3
		switch trial % 4 {
		case 1:
			n, d, k = 60, 3, 4
		case 3: // more than one word of dep per arm
			n, d, k = 150, 3, 6
		}
		pts := make([][]float64, n)
		count := make([]int, n)
		for i := range pts {
			pts[i] = make([]float64, d)
		}
		var f FrontTracker
		told := trial/4%2 == 1 // SizeAfter, told which arms moved
		for round := range 300 {
			var moved []int
			for _, i := range rng.Perm(n)[:k] {
				moved = append(moved, i)
				count[i]++
				for j := range d {
					x := float64(rng.IntN(5)-1) / 4
					pts[i][j] += (x - pts[i][j]) / float64(count[i])
					if pts[i][j] == 0 && rng.IntN(2) == 0 {
						pts[i][j] = math.Copysign(0, -1)
					}
				}
			}
			if rng.IntN(10) == 0 {
				i := rng.IntN(n)
				copy(pts[i], pts[rng.IntN(n)])
				moved = append(moved, i)
			}
			front := bruteLayers(pts)[0]
			size := f.Size
			if told {
				size = func(pts [][]float64) int { return f.SizeAfter(pts, moved, false) }
			}
			if got := size(pts); got != len(front) {
				t.Fatalf("trial %d round %d (told %v): tracked front size %d, want %d", trial, round, told, got, len(front))
			}
			checkDeps(t, &f, pts)
			for i := range pts {
				if got, want := f.OnFront(i), slices.Contains(front, i); got != want {
					t.Fatalf("trial %d round %d: OnFront(%d) = %v, want %v", trial, round, i, got, want)
				}
			}
		}
	}
}

// checkDeps checks FrontTracker's witness sets against their definition:
// dep[w] holds exactly the dominated arms i with wit[i] = w, and each
// witness dominates its arm.
func checkDeps(t *testing.T, f *FrontTracker, pts [][]float64) {
	t.Helper()
	for w := range pts {
		for i := range pts {
			in := f.dep[w*f.words+i/64]>>(i%64)&1 == 1
			if want := !f.nd[i] && f.wit[i] == w; in != want {
				t.Fatalf("dep[%d] has arm %d: %v, want %v (nd %v, wit %d)", w, i, in, want, f.nd[i], f.wit[i])
			}
		}
		if !f.nd[w] && !Dominates(pts[f.wit[w]], pts[w]) {
			t.Fatalf("arm %d: witness %d does not dominate it", w, f.wit[w])
		}
	}
}
