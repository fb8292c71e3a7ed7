package render

import (
	"fmt"
	"testing"
)

func TestCurveColorsAndOrder(t *testing.T) {
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
