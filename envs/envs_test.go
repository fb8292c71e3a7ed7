package envs

import (
	"math"
	"reflect"
	"strings"
	"testing"
)

func dominates(a, b []float64) bool {
	strict := false
	for j := range a {
		if a[j] < b[j] {
			return false
		}
		if a[j] > b[j] {
			strict = true
		}
	}
	return strict
}

func TestFrontSize(t *testing.T) {
	for _, c := range []struct{ n, want int }{{36, 12}, {60, 21}, {100, 35}, {150, 52}, {20, 10}, {5, 5}, {29, 10}, {31, 10}, {32, 11}} {
		if got := FrontSize(c.n); got != c.want {
			t.Errorf("FrontSize(%d) = %d, want %d", c.n, got, c.want)
		}
	}
}

// TestFrontEquations checks the raw angular formula against the paper's
// surface equations: Σx² = 1 (α = 1), Σx⁴ = 1 (α = 0.5), Σx = 1 (α = 2).
func TestFrontEquations(t *testing.T) {
	rng := NewStream(7, "test")
	for d := 2; d <= 6; d++ {
		theta := make([]float64, d-1)
		x := make([]float64, d)
		for trial := 0; trial < 200; trial++ {
			for j := range theta {
				theta[j] = rng.Float64() * math.Pi / 2
			}
			for _, c := range []struct {
				alpha, power float64
			}{{1, 2}, {0.5, 4}, {2, 1}} {
				FrontPoint(theta, c.alpha, x)
				var s float64
				for _, v := range x {
					if v < 0 {
						t.Fatalf("negative coordinate %v", x)
					}
					s += math.Pow(v, c.power)
				}
				if math.Abs(s-1) > 1e-12 {
					t.Fatalf("d=%d α=%v: Σx^%v = %v, want 1 (x=%v)", d, c.alpha, c.power, s, x)
				}
			}
		}
	}
}

func TestGenerate(t *testing.T) {
	for _, s := range []struct{ d, n int }{{2, 36}, {3, 60}, {4, 100}, {5, 150}} {
		for _, g := range Geometries {
			in, err := Generate(g, s.d, s.n, 3)
			if err != nil {
				t.Fatal(err)
			}
			if in.N() != s.n || in.D() != s.d {
				t.Fatalf("%s d=%d: got %d arms × %d", g, s.d, in.N(), in.D())
			}
			if err := in.Validate(); err != nil {
				t.Fatal(err)
			}
			var front [][]float64
			for i, m := range in.Means {
				if !in.Front[i] {
					for _, v := range m {
						if v < 0 || v > 0.3 {
							t.Fatalf("%s: distractor %d = %v outside [0, 0.3]^d", g, i, m)
						}
					}
					continue
				}
				front = append(front, m)
				var p2, p4 float64
				for _, v := range m {
					p2 += v * v
					p4 += v * v * v * v
				}
				switch g {
				case Concave, Clusters:
					if math.Abs(p2-1) > 1e-12 {
						t.Fatalf("%s: front arm %v has Σx² = %v", g, m, p2)
					}
				case Convex:
					if math.Abs(p4-1) > 1e-12 {
						t.Fatalf("%s: front arm %v has Σx⁴ = %v", g, m, p4)
					}
				case Linear:
					for _, v := range m {
						if v < 0.01 || v > 1 {
							t.Fatalf("linear: front arm %v outside [0.01, 1]", m)
						}
					}
				}
			}
			if len(front) != FrontSize(s.n) {
				t.Fatalf("%s: %d front arms, want %d", g, len(front), FrontSize(s.n))
			}
			if g != Linear { // clipping can make linear arms comparable; see TestLinearRescale
				for a := range front {
					for b := range front {
						if a != b && dominates(front[a], front[b]) {
							t.Fatalf("%s d=%d: front arm %v dominates %v", g, s.d, front[a], front[b])
						}
					}
				}
			}
		}
	}
}

// TestLinearRescale recomputes every linear front arm from the raw simplex
// point: x = clip(s·raw, 0.01, 1) with s = min(0.45d, 2.5), and raw summing to 1.
func TestLinearRescale(t *testing.T) {
	for d := 2; d <= 8; d++ {
		s := LinearScale(d)
		if want := math.Min(0.45*float64(d), 2.5); s != want {
			t.Fatalf("LinearScale(%d) = %v, want %v", d, s, want)
		}
		in, err := Generate(Linear, d, 40, 11)
		if err != nil {
			t.Fatal(err)
		}
		for i, m := range in.Means {
			if !in.Front[i] {
				continue
			}
			// Coordinates strictly inside (0.01, 1) are s·raw; they sum to at most s.
			var sum float64
			clipped := false
			for _, v := range m {
				if v <= 0.01 || v >= 1 {
					clipped = true
				}
				sum += v
			}
			if !clipped && math.Abs(sum-s) > 1e-12 {
				t.Fatalf("d=%d: unclipped linear arm %v sums to %v, want s = %v", d, m, sum, s)
			}
			if clipped && sum > s+0.01*float64(d) {
				t.Fatalf("d=%d: clipped arm %v sums to %v > s = %v", d, m, sum, s)
			}
		}
	}
}

func TestClusterAngles(t *testing.T) {
	in, err := Generate(Clusters, 2, 36, 5)
	if err != nil {
		t.Fatal(err)
	}
	low, high := 0, 0
	for i, m := range in.Means {
		if !in.Front[i] {
			continue
		}
		th := math.Acos(m[0]) // x_0 = cos θ_0 on the concave front
		switch {
		case th >= 0 && th <= math.Pi/5+1e-12:
			low++
		case th >= 3*math.Pi/10-1e-12 && th <= math.Pi/2+1e-12:
			high++
		default:
			t.Fatalf("front arm %v has θ_0 = %v outside both clusters", m, th)
		}
	}
	if low != 6 || high != 6 {
		t.Fatalf("clusters split %d/%d, want 6/6", low, high)
	}
}

func TestGenerateDeterministic(t *testing.T) {
	a, _ := Generate(Concave, 3, 60, 42)
	b, _ := Generate(Concave, 3, 60, 42)
	c, _ := Generate(Concave, 3, 60, 43)
	d, _ := Generate(Convex, 3, 60, 42)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("same (geometry, d, n, seed) gave different instances")
	}
	if reflect.DeepEqual(a.Means, c.Means) || reflect.DeepEqual(a.Means, d.Means) {
		t.Fatal("different seed or geometry gave the same instance")
	}
}

func TestGenerateErrors(t *testing.T) {
	for _, c := range []struct {
		g    Geometry
		d, n int
		want string
	}{{"spiral", 2, 10, "unknown geometry"}, {Concave, 1, 10, "at least 2 objectives"}, {Concave, 2, 0, "at least one arm"}} {
		if _, err := Generate(c.g, c.d, c.n, 0); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Generate(%q, %d, %d): err = %v, want %q", c.g, c.d, c.n, err, c.want)
		}
	}
}

// TestCommonRandomNumbers: the j-th pull of arm i is the same whatever the
// order in which arms are pulled.
func TestCommonRandomNumbers(t *testing.T) {
	in, _ := Generate(Concave, 3, 20, 1)
	b1, _ := NewBandit(in, 0.05, 9)
	b2, _ := NewBandit(in, 0.05, 9)
	type pull struct{ arm, j int }
	got1 := map[pull][]float64{}
	got2 := map[pull][]float64{}
	for j := 0; j < 5; j++ {
		for i := 0; i < 20; i++ {
			x := make([]float64, 3)
			b1.Pull(i, x)
			got1[pull{i, j}] = x
		}
	}
	for i := 19; i >= 0; i-- {
		for j := 0; j < 5; j++ {
			x := make([]float64, 3)
			b2.Pull(i, x)
			got2[pull{i, j}] = x
		}
	}
	if !reflect.DeepEqual(got1, got2) {
		t.Fatal("pull order changed the noise")
	}
	b3, _ := NewBandit(in, 0.05, 10)
	x := make([]float64, 3)
	b3.Pull(0, x)
	if reflect.DeepEqual(x, got1[pull{0, 0}]) {
		t.Fatal("different seeds gave the same noise")
	}
}

func TestBanditNoise(t *testing.T) {
	in := &Instance{Means: [][]float64{{0.5, 0.5}, {0.0, 1.0}}}
	b, err := NewBandit(in, 0.05, 1)
	if err != nil {
		t.Fatal(err)
	}
	const n = 20000
	var sum, sq float64
	x := make([]float64, 2)
	for r := 0; r < n; r++ {
		b.Pull(0, x)
		sum += x[0]
		sq += (x[0] - 0.5) * (x[0] - 0.5)
		b.Pull(1, x)
		if x[0] < 0 || x[1] > 1 {
			t.Fatalf("reward %v not clipped to [0,1]", x)
		}
	}
	mean, sd := sum/n, math.Sqrt(sq/n)
	if math.Abs(mean-0.5) > 4*0.05/math.Sqrt(n) || math.Abs(sd-0.05) > 0.002 {
		t.Fatalf("noise mean %v sd %v, want 0.5 and 0.05", mean, sd)
	}
	if _, err := NewBandit(in, -1, 0); err == nil {
		t.Fatal("negative sigma accepted")
	}
}

func TestLoadCSV(t *testing.T) {
	in, err := LoadCSV(strings.NewReader("f1,f2\n0.1,0.9\n# comment\n0.5, 0.5\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in.Means, [][]float64{{0.1, 0.9}, {0.5, 0.5}}) {
		t.Fatalf("got %v", in.Means)
	}
	for _, c := range []struct{ in, want string }{
		{"0.1,0.2\n0.3\n", "line 2: expected 2 values"},
		{"0.1,0.2\n0.3,abc\n", `line 2, column 2: "abc" is not a number`},
		{"0.1,1.5\n", "outside [0, 1]"},
		{"0.1,NaN\n", "outside [0, 1]"},
		{"a,b\n", "no arms"},
	} {
		if _, err := LoadCSV(strings.NewReader(c.in)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("LoadCSV(%q): err = %v, want %q", c.in, err, c.want)
		}
	}
}
