package render

import (
	"bytes"
	"image/png"
	"math"
	"math/rand/v2"
	"os"
	"testing"
	"time"
)

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
	png1, pdf1, err := Figure(panels, opt)
	if err != nil {
		t.Fatal(err)
	}
	checkFigure(t, png1, pdf1, opt)
	// Determinism: the same input gives the same bytes (several times, to
	// catch map-order effects).
	for range 3 {
		png2, pdf2, err := Figure(panels, opt)
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
	png3, pdf3, err := Figure(panels[:1], opt2)
	if err != nil {
		t.Fatal(err)
	}
	opt2.Width, opt2.Height = 7, 5
	checkFigure(t, png3, pdf3, opt2)
	png4, pdf4, err := Figure(panels[:3], FigureOptions{})
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
		pngB, pdfB, err := Figure(c.panels, c.opt)
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
	pngB, pdfB, err := Figure(panels, FigureOptions{Title: "d = 5, n = 150, k = 6, σ = 0.02, T = 5000, 10 seeds"})
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
