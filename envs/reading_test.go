package envs

import (
	"math"
	"reflect"
	"strings"
	"testing"
)

// TestReadingDefaultIsGenerate: the zero Reading and the explicit defaults
// draw exactly what Generate draws (the default reading consumes no extra
// random numbers), for every geometry.
func TestReadingDefaultIsGenerate(t *testing.T) {
	for _, g := range Geometries {
		want, err := Generate(g, 3, 60, 7)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range []Reading{{}, {Order: "shuffled", ClusterSplit: "halves", Distractors: "uniform"}} {
			got, err := GenerateWith(g, 3, 60, 7, r)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%s, reading %+v: differs from Generate", g, r)
			}
		}
	}
}

// TestReadingOrder: "generated" keeps the front arms first, then the
// distractors, with the same points as the shuffled instance.
func TestReadingOrder(t *testing.T) {
	shuffled, _ := Generate(Concave, 2, 36, 3)
	in, err := GenerateWith(Concave, 2, 36, 3, Reading{Order: "generated"})
	if err != nil {
		t.Fatal(err)
	}
	nFront := FrontSize(36)
	for i, f := range in.Front {
		if f != (i < nFront) {
			t.Fatalf("arm %d: front = %v, want front arms 0..%d first", i, f, nFront-1)
		}
	}
	// The same multiset of points: every generated arm is an arm of the
	// shuffled instance.
	seen := map[[2]float64]int{}
	for _, m := range shuffled.Means {
		seen[[2]float64{m[0], m[1]}]++
	}
	for _, m := range in.Means {
		k := [2]float64{m[0], m[1]}
		if seen[k] == 0 {
			t.Fatalf("generated arm %v is not in the shuffled instance", m)
		}
		seen[k]--
	}
}

// TestReadingClusterSplit: "random" puts each front arm in either cluster's
// angular region, with counts that vary by seed (halves always gives 6/6 at
// n = 36).
func TestReadingClusterSplit(t *testing.T) {
	counts := map[int]bool{}
	for seed := uint64(0); seed < 20; seed++ {
		in, err := GenerateWith(Clusters, 2, 36, seed, Reading{ClusterSplit: "random"})
		if err != nil {
			t.Fatal(err)
		}
		low := 0
		for i, m := range in.Means {
			if !in.Front[i] {
				continue
			}
			th := math.Acos(m[0])
			switch {
			case th <= math.Pi/5+1e-12:
				low++
			case th >= 3*math.Pi/10-1e-12:
			default:
				t.Fatalf("seed %d: front arm %v outside both clusters (θ_0 = %v)", seed, m, th)
			}
		}
		counts[low] = true
	}
	if len(counts) < 3 {
		t.Fatalf("random split gave cluster-1 sizes %v over 20 seeds: not random", counts)
	}
	// The split reading enters only the clusters geometry.
	a, _ := GenerateWith(Concave, 2, 36, 1, Reading{ClusterSplit: "random"})
	b, _ := Generate(Concave, 2, 36, 1)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("clusters_split changed a concave instance")
	}
}

// TestReadingDistractors: "dominated" leaves no distractor that the front
// does not strictly dominate, while "uniform" (as printed) does leave some
// on the linear front, whose points near the axes dominate little.
func TestReadingDistractors(t *testing.T) {
	undominated := func(in *Instance) int {
		var front [][]float64
		for i, m := range in.Means {
			if in.Front[i] {
				front = append(front, m)
			}
		}
		n := 0
		for i, m := range in.Means {
			if !in.Front[i] && !strictlyDominated(m, front) {
				n++
			}
		}
		return n
	}
	uniform := 0
	for seed := uint64(0); seed < 50; seed++ {
		u, _ := Generate(Linear, 2, 36, seed)
		uniform += undominated(u)
		in, err := GenerateWith(Linear, 2, 36, seed, Reading{Distractors: "dominated"})
		if err != nil {
			t.Fatal(err)
		}
		if n := undominated(in); n != 0 {
			t.Fatalf("seed %d: %d distractors not strictly dominated", seed, n)
		}
	}
	if uniform == 0 {
		t.Fatal("uniform distractors were all dominated in 50 seeds: the test cannot tell the readings apart")
	}
	t.Logf("uniform reading: %d undominated distractors over 50 linear d = 2 instances", uniform)
}

func TestReadingErrors(t *testing.T) {
	for _, r := range []Reading{{Order: "sorted"}, {ClusterSplit: "thirds"}, {Distractors: "none"}} {
		_, err := GenerateWith(Clusters, 2, 36, 0, r)
		if err == nil || !strings.Contains(err.Error(), "want one of") {
			t.Fatalf("reading %+v: error %v, want one naming the allowed values", r, err)
		}
	}
}
