package hv_test

import (
	"fmt"
	"testing"
	"time"

	"thv/envs"
	"thv/hv"
)

func TestPaperSettingsTiming(t *testing.T) {
	for _, s := range []struct{ d, n, k int }{{2, 36, 3}, {3, 60, 4}, {4, 100, 5}, {5, 150, 6}} {
		for _, g := range []envs.Geometry{envs.Linear, envs.Convex, envs.Concave, envs.Clusters} {
			var worst time.Duration
			nd := 0
			for seed := uint64(0); seed < 10; seed++ {
				in, err := envs.Generate(g, s.d, s.n, seed)
				if err != nil {
					t.Fatal(err)
				}
				nd = max(nd, len(hv.NonDominated(in.Means)))
				st := time.Now()
				hv.BestSubset(in.Means, s.k, nil)
				worst = max(worst, time.Since(st))
			}
			fmt.Printf("d=%d %-8s maxND=%d worst BestSubset %v\n", s.d, g, nd, worst)
		}
	}
}
