package hv

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The fronts of the benchmarks: concave(n, d, 1), n points on the positive
// unit sphere, none dominated.
var frontsDir = flag.String("fronts", "", "write the benchmark fronts as text files into this directory (TestWriteFronts)")

// TestWriteFronts writes the benchmark fronts, one point per line with 17
// significant digits (which round-trips float64), so that other
// implementations can be timed on the same points: the 12 fronts of
// BenchmarkVolume (concave_dD_nN.txt) and 12 small random sets, slates
// and a few more points with some dominated (random_dD_nN.txt, d = 2–5,
// n = 3, 6, 20), which time a whole command's start-up. Each set is also
// written negated under neg/, for tools that minimise with the reference
// point at the origin (moocore's hv: hv/testdata/refbench/hvcmp.sh):
//
//	go test ./hv -run TestWriteFronts -fronts /tmp/fronts
func TestWriteFronts(t *testing.T) {
	if *frontsDir == "" {
		t.Skip("no -fronts directory")
	}
	if err := os.MkdirAll(filepath.Join(*frontsDir, "neg"), 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name string, pts [][]float64) {
		for _, sign := range []float64{1, -1} {
			var b strings.Builder
			for _, p := range pts {
				for j, x := range p {
					if j > 0 {
						b.WriteByte(' ')
					}
					fmt.Fprintf(&b, "%.17g", sign*x)
				}
				b.WriteByte('\n')
			}
			path := filepath.Join(*frontsDir, name)
			if sign < 0 {
				path = filepath.Join(*frontsDir, "neg", name)
			}
			if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, d := range []int{3, 4, 5} {
		for _, n := range []int{10, 100, 1000, 5000} {
			write(fmt.Sprintf("concave_d%d_n%d.txt", d, n), concave(n, d, 1))
		}
	}
	rng := rand.New(rand.NewPCG(7, 0x5e75))
	for d := 2; d <= 5; d++ {
		for _, n := range []int{3, 6, 20} {
			pts := make([][]float64, n)
			for i := range pts {
				pts[i] = make([]float64, d)
				for j := range pts[i] {
					pts[i][j] = rng.Float64()
				}
			}
			write(fmt.Sprintf("random_d%d_n%d.txt", d, n), pts)
		}
	}
}

func BenchmarkVolume(b *testing.B) {
	for _, d := range []int{3, 4, 5} {
		for _, n := range []int{10, 100, 1000, 5000} {
			b.Run(fmt.Sprintf("d=%d/n=%d", d, n), func(b *testing.B) {
				pts := concave(n, d, 1)
				var c Calculator
				for b.Loop() {
					c.Volume(pts, nil)
				}
			})
		}
	}
}

// BenchmarkVolumeSlate is the hot path of the bandit runs: the volume of a
// slate of k ≤ 6 points.
func BenchmarkVolumeSlate(b *testing.B) {
	for _, tc := range []struct{ d, k int }{{2, 3}, {3, 4}, {4, 5}, {5, 6}} {
		b.Run(fmt.Sprintf("d=%d/k=%d", tc.d, tc.k), func(b *testing.B) {
			pts := concave(tc.k, tc.d, 1)
			ref := make([]float64, tc.d)
			var c Calculator
			for b.Loop() {
				c.Volume(pts, ref)
			}
		})
	}
	b.Run("d=5/k=6/package", func(b *testing.B) {
		pts := concave(6, 5, 1)
		for b.Loop() {
			Volume(pts, nil)
		}
	})
}

func BenchmarkContribution(b *testing.B) {
	pts := concave(6, 5, 2)
	p, set := pts[0], pts[1:]
	b.Run("d=5/set=5", func(b *testing.B) {
		var c Calculator
		for b.Loop() {
			c.Contribution(p, set, nil)
		}
	})
	b.Run("d=5/set=5/package", func(b *testing.B) {
		for b.Loop() {
			Contribution(p, set, nil)
		}
	})
}

func BenchmarkGreedy(b *testing.B) {
	pts := concave(150, 5, 3)
	b.Run("Greedy/d=5/n=150/k=6", func(b *testing.B) {
		for b.Loop() {
			Greedy(pts, 6, nil)
		}
	})
	b.Run("LazyGreedy/d=5/n=150/k=6", func(b *testing.B) {
		for b.Loop() {
			LazyGreedy(pts, 6, nil)
		}
	})
}

// BenchmarkBestSubset runs the largest setting of the paper, a d = 5 front
// of 52 points with k = 6, on a concave front and on a linear one (Σx = 1),
// where subsets differ less and the search is harder.
func BenchmarkBestSubset(b *testing.B) {
	for _, tc := range []struct {
		name string
		pts  [][]float64
	}{
		{"concave", concave(52, 5, 4)},
		{"linear", simplex(52, 5, 4)},
	} {
		b.Run(tc.name+"/d=5/n=52/k=6", func(b *testing.B) {
			for b.Loop() {
				BestSubset(tc.pts, 6, nil)
			}
		})
	}
}
