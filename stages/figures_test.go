package stages

import (
	"bytes"
	"fmt"
	"image/png"
	"math"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"gonum.org/v1/gonum/stat/distuv"
)

func closeTo(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Max(1, math.Abs(b)) }

func TestMovingAverage(t *testing.T) {
	x := []float64{1, 2, 3, 4, 10}
	// window 3: [1], [1,2], [1,2,3], [2,3,4], [3,4,10]
	want := []float64{1, 1.5, 2, 3, 17.0 / 3}
	got := MovingAverage(x, 3)
	if len(got) != len(want) {
		t.Fatalf("len %d, want %d", len(got), len(want))
	}
	for i := range want {
		if !closeTo(got[i], want[i]) {
			t.Errorf("MA3[%d] = %v, want %v", i, got[i], want[i])
		}
	}
	// window 1 (and ≤ 0) is the identity; a window longer than x is the
	// running mean.
	for _, w := range []int{1, 0} {
		for i, v := range MovingAverage(x, w) {
			if v != x[i] {
				t.Errorf("MA%d[%d] = %v, want %v", w, i, v, x[i])
			}
		}
	}
	run := []float64{1, 1.5, 2, 2.5, 4}
	for i, v := range MovingAverage(x, 50) {
		if !closeTo(v, run[i]) {
			t.Errorf("MA50[%d] = %v, want %v", i, v, run[i])
		}
	}
	if got := MovingAverage(nil, 3); len(got) != 0 {
		t.Errorf("MA of empty = %v", got)
	}
	x[0] = 99 // the output must not alias the input
	if got[0] != 1 {
		t.Error("MovingAverage aliases its input")
	}
}

func TestMeanCIBand(t *testing.T) {
	hv := [][]float64{
		{1, 0.5, 2},
		{2, 0.5, 4},
		{3, 0.5, 9},
	}
	mean, lo, hi := MeanCIBand(hv, 0.95)
	// By hand: n = 3, t_{0.975, 2} = 4.302652729749464.
	// round 1: mean 2, sd 1 → half = 4.302652729749464/√3.
	// round 2: mean 0.5, sd 0 → half 0.
	// round 3: mean 5, deviations −3, −1, 4 → var 26/2 = 13 → half = t·√13/√3.
	const t975 = 4.302652729749464
	if q := (distuv.StudentsT{Mu: 0, Sigma: 1, Nu: 2}).Quantile(0.975); math.Abs(q-t975) > 1e-9 {
		t.Fatalf("t quantile %v, want %v", q, t975)
	}
	wantMean := []float64{2, 0.5, 5}
	wantHalf := []float64{t975 / math.Sqrt(3), 0, t975 * math.Sqrt(13) / math.Sqrt(3)}
	for i := range wantMean {
		if !closeTo(mean[i], wantMean[i]) {
			t.Errorf("mean[%d] = %v, want %v", i, mean[i], wantMean[i])
		}
		if math.Abs(lo[i]-(wantMean[i]-wantHalf[i])) > 1e-9 || math.Abs(hi[i]-(wantMean[i]+wantHalf[i])) > 1e-9 {
			t.Errorf("band[%d] = [%v, %v], want %v ± %v", i, lo[i], hi[i], wantMean[i], wantHalf[i])
		}
	}
	// One seed: the band collapses to the mean.
	m1, l1, h1 := MeanCIBand([][]float64{{1, 2}}, 0.95)
	for i := range m1 {
		if l1[i] != m1[i] || h1[i] != m1[i] {
			t.Errorf("single seed band[%d] = [%v, %v], mean %v", i, l1[i], h1[i], m1[i])
		}
	}
	// Bad input: nil.
	for name, in := range map[string][][]float64{
		"empty":  nil,
		"ragged": {{1, 2}, {1}},
		"norow":  {{}},
	} {
		if m, l, h := MeanCIBand(in, 0.95); m != nil || l != nil || h != nil {
			t.Errorf("%s: got %v %v %v, want nil", name, m, l, h)
		}
	}
	if m, _, _ := MeanCIBand(hv, 1); m != nil {
		t.Error("level 1 accepted")
	}
}

func TestFigureColorsAndOrder(t *testing.T) {
	hv := [][]float64{{1, 2, 3}}
	panels := []Panel{
		{Title: "A", Series: []Series{{"THV", hv}, {"X", hv}, {"Y", hv}}},
		{Title: "B", Series: []Series{{"THV", hv}, {"Z", hv}, {"Y", hv}}},
	}
	curves, names, err := prepareCurves(panels, FigureOptions{Window: 2, Level: 0.95})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(names) != "[THV X Y Z]" {
		t.Errorf("legend names %v", names)
	}
	col := map[string]any{}
	for p, cs := range curves {
		if last := cs[len(cs)-1]; last.name != "THV" || !last.first {
			t.Errorf("panel %d: first series not drawn last: %v", p, last.name)
		}
		for _, c := range cs {
			if prev, ok := col[c.name]; ok && prev != c.color {
				t.Errorf("%s: colour %v in panel %d, %v before", c.name, c.color, p, prev)
			}
			col[c.name] = c.color
		}
	}
	if col["THV"] != figurePalette[0] || col["Z"] != figurePalette[3] {
		t.Errorf("palette not assigned by first appearance: %v", col)
	}
	// Downsampling: T = 5000 keeps every 5th round plus rounds 1 and T.
	long := make([]float64, 5000)
	c := downsampleCurve(long, long, long)
	if n := len(c.line); n != 1001 || c.line[0].X != 1 || c.line[1].X != 5 || c.line[n-1].X != 5000 {
		t.Errorf("downsampled to %d points, x = %v, %v … %v", n, c.line[0].X, c.line[1].X, c.line[n-1].X)
	}
	if len(c.band) != 2*len(c.line) {
		t.Errorf("band has %d points", len(c.band))
	}
}

func TestFigureNiceTicks(t *testing.T) {
	major := func(lo, hi float64) (out []string) {
		for _, tk := range (niceTicks{target: 6}).Ticks(lo, hi) {
			if tk.Label != "" {
				out = append(out, tk.Label)
			}
		}
		return out
	}
	for _, c := range []struct {
		lo, hi float64
		want   string
	}{
		{0, 5000, "[0 1000 2000 3000 4000 5000]"},
		{0, 600, "[0 100 200 300 400 500 600]"},
		{0.27, 0.94, "[0.3 0.4 0.5 0.6 0.7 0.8 0.9]"},
		{-0.1, 0.1, "[-0.10 -0.05 0.00 0.05 0.10]"},
	} {
		if got := fmt.Sprint(major(c.lo, c.hi)); got != c.want {
			t.Errorf("ticks(%v, %v) = %s, want %s", c.lo, c.hi, got, c.want)
		}
	}
}

// syntheticPanels builds nPanels panels of nSeries saturating HV curves
// over seeds × T rounds.
func syntheticPanels(nPanels, nSeries, seeds, T int) []Panel {
	r := rand.New(rand.NewPCG(1, 2))
	geoms := []string{"Clusters", "Concave", "Convex", "Linear"}
	algos := []string{"THV-UCB (ours)", "ChebyshevUCB+", "HVScalarUCB+", "ParetoUCB+", "ScalarUCB", "ParetoTS+", "RandomK"}
	panels := make([]Panel, nPanels)
	for p := range panels {
		panels[p].Title = geoms[p%len(geoms)]
		for a := range nSeries {
			s := Series{Name: algos[a%len(algos)], HV: make([][]float64, seeds)}
			final := 0.9 - 0.06*float64(a) - 0.01*float64(p)
			rate := 300.0 * (1 + float64(a)/2)
			for k := range s.HV {
				s.HV[k] = make([]float64, T)
				off := 0.02 * r.NormFloat64()
				for i := range s.HV[k] {
					s.HV[k][i] = 0.3 + (final-0.3+off)*(1-math.Exp(-float64(i+1)/rate)) + 0.04*r.NormFloat64()
				}
			}
			panels[p].Series = append(panels[p].Series, s)
		}
	}
	return panels
}

func checkFigure(t *testing.T, pngB, pdfB []byte, opt FigureOptions) {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(pngB))
	if err != nil {
		t.Fatalf("png: %v", err)
	}
	dpi := opt.DPI
	if dpi == 0 {
		dpi = DefaultFigureDPI
	}
	wantW, wantH := int(opt.Width*float64(dpi)+0.5), int(opt.Height*float64(dpi)+0.5)
	if b := img.Bounds(); b.Dx() != wantW || b.Dy() != wantH {
		t.Errorf("png %d×%d, want %d×%d", b.Dx(), b.Dy(), wantW, wantH)
	}
	if !bytes.HasPrefix(pdfB, []byte("%PDF-")) {
		t.Errorf("pdf starts with %q", pdfB[:min(8, len(pdfB))])
	}
	if !bytes.HasSuffix(bytes.TrimRight(pdfB, "\r\n"), []byte("%%EOF")) {
		t.Errorf("pdf ends with %q", pdfB[max(0, len(pdfB)-16):])
	}
	if bytes.Contains(pdfB, []byte("/FontFile")) || bytes.Contains(pdfB, []byte("/Font <<\n/F")) {
		t.Error("pdf embeds a font; text should be outlines")
	}
	if !bytes.Contains(pdfB, []byte("/CreationDate (D:20000101000000)")) || !bytes.Contains(pdfB, []byte("/ModDate (D:20000101000000)")) {
		t.Error("pdf dates not fixed")
	}
}

func TestRenderFigure(t *testing.T) {
	panels := syntheticPanels(4, 5, 10, 600)
	opt := FigureOptions{Title: "d = 3, n = 60, k = 4, σ = 0.035, T = 600, 10 seeds", Window: 50, Level: 0.95, Width: 10, Height: 7.5}
	png1, pdf1, err := RenderFigure(panels, opt)
	if err != nil {
		t.Fatal(err)
	}
	checkFigure(t, png1, pdf1, opt)
	// Determinism: the same input gives the same bytes (several times, to
	// catch map-order effects).
	for range 3 {
		png2, pdf2, err := RenderFigure(panels, opt)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(png1, png2) {
			t.Error("PNG differs between two renders of the same input")
		}
		if !bytes.Equal(pdf1, pdf2) {
			t.Error("PDF differs between two renders of the same input")
		}
	}
	if dir := os.Getenv("THV_FIGURE_EXAMPLE"); dir != "" {
		os.WriteFile(dir+"/figure-example.png", png1, 0o644)
		os.WriteFile(dir+"/figure-example.pdf", pdf1, 0o644)
	}

	// Other sizes, a single panel, defaults.
	opt2 := FigureOptions{Width: 7, Height: 5, DPI: 100}
	png3, pdf3, err := RenderFigure(panels[:1], opt2)
	if err != nil {
		t.Fatal(err)
	}
	opt2.Width, opt2.Height = 7, 5
	checkFigure(t, png3, pdf3, opt2)
	png4, pdf4, err := RenderFigure(panels[:3], FigureOptions{})
	if err != nil {
		t.Fatal(err)
	}
	checkFigure(t, png4, pdf4, FigureOptions{Width: DefaultFigureWidth, Height: DefaultFigureHeight})
}

func TestRenderFigureErrors(t *testing.T) {
	good := syntheticPanels(2, 3, 3, 20)
	ragged := syntheticPanels(1, 2, 3, 20)
	ragged[0].Series[1].HV[2] = ragged[0].Series[1].HV[2][:19]
	nan := syntheticPanels(1, 2, 3, 20)
	nan[0].Series[0].HV[1][5] = math.NaN()
	dup := syntheticPanels(1, 2, 3, 20)
	dup[0].Series[1].Name = dup[0].Series[0].Name
	cases := map[string]struct {
		panels []Panel
		opt    FigureOptions
	}{
		"no panels":    {nil, FigureOptions{}},
		"empty panel":  {[]Panel{{Title: "Linear"}}, FigureOptions{}},
		"no seeds":     {[]Panel{{Title: "Linear", Series: []Series{{Name: "A"}}}}, FigureOptions{}},
		"no rounds":    {[]Panel{{Title: "Linear", Series: []Series{{Name: "A", HV: [][]float64{{}, {}}}}}}, FigureOptions{}},
		"ragged seeds": {ragged, FigureOptions{}},
		"NaN":          {nan, FigureOptions{}},
		"duplicate":    {dup, FigureOptions{}},
		"empty name":   {[]Panel{{Title: "Linear", Series: []Series{{HV: [][]float64{{1}}}}}}, FigureOptions{}},
		"bad window":   {good, FigureOptions{Window: -1}},
		"bad level":    {good, FigureOptions{Level: 1.5}},
		"bad size":     {good, FigureOptions{Width: -3}},
		"bad dpi":      {good, FigureOptions{DPI: -1}},
	}
	for name, c := range cases {
		pngB, pdfB, err := RenderFigure(c.panels, c.opt)
		if err == nil {
			t.Errorf("%s: no error", name)
		}
		if pngB != nil || pdfB != nil {
			t.Errorf("%s: bytes returned with the error", name)
		}
	}
}

// TestRenderFigureLarge renders the largest figure of the paper (d = 5:
// 4 panels × 5 series × 10 seeds × 5000 rounds) and checks the size bound.
func TestRenderFigureLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	panels := syntheticPanels(4, 5, 10, 5000)
	start := time.Now()
	pngB, pdfB, err := RenderFigure(panels, FigureOptions{Title: "d = 5, n = 150, k = 6, σ = 0.02, T = 5000, 10 seeds"})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("d = 5 figure: PNG %d bytes, PDF %d bytes, %v", len(pngB), len(pdfB), time.Since(start))
	if len(pdfB) >= 1<<20 {
		t.Errorf("PDF %d bytes ≥ 1 MiB", len(pdfB))
	}
	if dir := os.Getenv("THV_FIGURE_EXAMPLE"); dir != "" {
		os.WriteFile(dir+"/figure-example-d5.png", pngB, 0o644)
		os.WriteFile(dir+"/figure-example-d5.pdf", pdfB, 0o644)
	}
}
