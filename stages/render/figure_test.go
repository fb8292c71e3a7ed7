package render

import (
	"bytes"
	"image/png"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
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

// figure computes the curves of panels and draws them as PNG and PDF.
func figure(t *testing.T, panels []Panel, copt CurveOptions, opt FigureOptions) (pngB, pdfB []byte) {
	t.Helper()
	curves, err := Curves(panels, copt)
	if err != nil {
		t.Fatal(err)
	}
	if pngB, err = Draw(curves, opt, PNG); err != nil {
		t.Fatal(err)
	}
	if pdfB, err = Draw(curves, opt, PDF); err != nil {
		t.Fatal(err)
	}
	return pngB, pdfB
}

func TestRenderFigure(t *testing.T) {
	panels := syntheticPanels(4, 5, 10, 600)
	copt := CurveOptions{Window: 50, Level: 0.95}
	opt := FigureOptions{Title: "d = 3, n = 60, k = 4, σ = 0.035, T = 600, 10 seeds", Window: 50, Width: 10, Height: 7.5}
	png1, pdf1 := figure(t, panels, copt, opt)
	checkFigure(t, png1, pdf1, opt)
	// Determinism: the same input gives the same bytes (several times, to
	// catch map-order effects).
	for range 3 {
		png2, pdf2 := figure(t, panels, copt, opt)
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
	png3, pdf3 := figure(t, panels[:1], copt, opt2)
	checkFigure(t, png3, pdf3, opt2)
	png4, pdf4 := figure(t, panels[:3], CurveOptions{}, FigureOptions{})
	checkFigure(t, png4, pdf4, FigureOptions{Width: DefaultFigureWidth, Height: DefaultFigureHeight})
}

func TestCurvesErrors(t *testing.T) {
	good := syntheticPanels(2, 3, 3, 20)
	ragged := syntheticPanels(1, 2, 3, 20)
	ragged[0].Series[1].HV[2] = ragged[0].Series[1].HV[2][:19]
	nan := syntheticPanels(1, 2, 3, 20)
	nan[0].Series[0].HV[1][5] = math.NaN()
	dup := syntheticPanels(1, 2, 3, 20)
	dup[0].Series[1].Name = dup[0].Series[0].Name
	cases := map[string]struct {
		panels []Panel
		opt    CurveOptions
		want   string
	}{
		"no panels":    {nil, CurveOptions{}, "render curves: no panel"},
		"empty panel":  {[]Panel{{Title: "Linear"}}, CurveOptions{}, `render curves: panel 0 ("Linear") has no series`},
		"no seeds":     {[]Panel{{Title: "Linear", Series: []Series{{Name: "A"}}}}, CurveOptions{}, `render curves: panel 0 ("Linear"), series 0 ("A"): no seed`},
		"no rounds":    {[]Panel{{Title: "Linear", Series: []Series{{Name: "A", HV: [][]float64{{}, {}}}}}}, CurveOptions{}, "no round"},
		"ragged seeds": {ragged, CurveOptions{}, "ragged seeds (seed 0 has 20 rounds, seed 2 has 19)"},
		"NaN":          {nan, CurveOptions{}, "seed 1 round 6: non-finite HV NaN"},
		"duplicate":    {dup, CurveOptions{}, "series 1 (\"THV-UCB (ours)\"): duplicate name"},
		"empty name":   {[]Panel{{Title: "Linear", Series: []Series{{HV: [][]float64{{1}}}}}}, CurveOptions{}, "empty name"},
		"bad window":   {good, CurveOptions{Window: -1}, "render curves: window -1 < 1"},
		"bad level":    {good, CurveOptions{Level: 1.5}, "render curves: CI level 1.5 not in (0, 1)"},
	}
	for name, c := range cases {
		curves, err := Curves(c.panels, c.opt)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", name, err, c.want)
		}
		if curves != nil {
			t.Errorf("%s: curves returned with the error", name)
		}
	}
}

func TestDrawErrors(t *testing.T) {
	good, err := Curves(syntheticPanels(2, 3, 3, 20), CurveOptions{Window: 5})
	if err != nil {
		t.Fatal(err)
	}
	edited := func(edit func(c *Curve)) []PanelCurves {
		cs := []PanelCurves{{Title: "Linear", Curves: []Curve{good[0].Curves[0], good[0].Curves[1]}}}
		c := &cs[0].Curves[1]
		c.Rounds, c.Mean, c.Lo, c.Hi = slices.Clone(c.Rounds), slices.Clone(c.Mean), slices.Clone(c.Lo), slices.Clone(c.Hi)
		edit(c)
		return cs
	}
	cases := map[string]struct {
		panels []PanelCurves
		opt    FigureOptions
		format Format
		want   string
	}{
		"no panels":       {nil, FigureOptions{}, PNG, "render figure: no panel"},
		"empty panel":     {[]PanelCurves{{Title: "Linear"}}, FigureOptions{}, PDF, `render figure: panel 0 ("Linear") has no curve`},
		"no points":       {edited(func(c *Curve) { c.Rounds, c.Mean, c.Lo, c.Hi = nil, nil, nil, nil }), FigureOptions{}, PNG, "no point"},
		"short column":    {edited(func(c *Curve) { c.Hi = c.Hi[1:] }), FigureOptions{}, PNG, "20 rounds but 20 means, 20 lower and 19 upper bounds"},
		"rounds from 0":   {edited(func(c *Curve) { c.Rounds[0] = 0 }), FigureOptions{}, PNG, "round 0 at point 0: rounds must increase from 1 on"},
		"rounds repeated": {edited(func(c *Curve) { c.Rounds[3] = c.Rounds[2] }), FigureOptions{}, PNG, "round 3 at point 3: rounds must increase"},
		"infinite":        {edited(func(c *Curve) { c.Lo[4] = math.Inf(-1) }), FigureOptions{}, PDF, "round 5: non-finite value -Inf"},
		"duplicate":       {edited(func(c *Curve) { c.Name = good[0].Curves[0].Name }), FigureOptions{}, PNG, "duplicate name"},
		"empty name":      {edited(func(c *Curve) { c.Name = "" }), FigureOptions{}, PNG, "empty name"},
		"bad window":      {good, FigureOptions{Window: -1}, PNG, "render figure: window -1 < 1"},
		"bad size":        {good, FigureOptions{Width: -3}, PDF, "outside [2, 100]"},
		"bad dpi":         {good, FigureOptions{DPI: -1}, PNG, "render figure: dpi -1 outside [10, 1200]"},
		"bad format":      {good, FigureOptions{}, Format(7), "render figure: unknown format 7"},
	}
	for name, c := range cases {
		b, err := Draw(c.panels, c.opt, c.format)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", name, err, c.want)
		}
		if b != nil {
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
	curves, err := Curves(panels, CurveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	computed := time.Now()
	opt := FigureOptions{Title: "d = 5, n = 150, k = 6, σ = 0.02, T = 5000, 10 seeds"}
	pdfB, err := Draw(curves, opt, PDF)
	if err != nil {
		t.Fatal(err)
	}
	pdfDrawn := time.Now()
	pngB, err := Draw(curves, opt, PNG)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("d = 5 figure: curves %v; PDF %d bytes, %v; PNG %d bytes, %v",
		computed.Sub(start), len(pdfB), pdfDrawn.Sub(computed), len(pngB), time.Since(pdfDrawn))
	if len(pdfB) >= 1<<20 {
		t.Errorf("PDF %d bytes ≥ 1 MiB", len(pdfB))
	}
	if dir := os.Getenv("THV_FIGURE_EXAMPLE"); dir != "" {
		os.WriteFile(dir+"/figure-example-d5.png", pngB, 0o644)
		os.WriteFile(dir+"/figure-example-d5.pdf", pdfB, 0o644)
	}
}
