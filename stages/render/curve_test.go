package render

import (
	"fmt"
	"slices"
	"testing"
)

func TestCurveColorsAndOrder(t *testing.T) {
	hv := [][]float64{{1, 2, 3}}
	panels := []Panel{
		{Title: "A", Series: []Series{{"THV", hv}, {"X", hv}, {"Y", hv}}},
		{Title: "B", Series: []Series{{"THV", hv}, {"Z", hv}, {"Y", hv}}},
	}
	pcs, err := Curves(panels, CurveOptions{Window: 2, Level: 0.95})
	if err != nil {
		t.Fatal(err)
	}
	curves, names, err := layoutCurves(pcs)
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
}

// TestCurvesKeepTheDrawnRounds: T = 5000 keeps every 5th round plus rounds
// 1 and T, the moving averages computed at full resolution first.
func TestCurvesKeepTheDrawnRounds(t *testing.T) {
	long := make([]float64, 5000)
	for i := range long {
		long[i] = float64(i + 1)
	}
	pcs, err := Curves([]Panel{{Title: "A", Series: []Series{{"THV", [][]float64{long, long}}}}}, CurveOptions{Window: 3})
	if err != nil {
		t.Fatal(err)
	}
	c := pcs[0].Curves[0]
	if n := len(c.Rounds); n != 1001 || c.Rounds[0] != 1 || c.Rounds[1] != 5 || c.Rounds[n-1] != 5000 {
		t.Errorf("kept %d rounds: %v, %v … %v", n, c.Rounds[0], c.Rounds[1], c.Rounds[n-1])
	}
	// Round 5's moving average over rounds 3..5; equal seeds: a zero band.
	if c.Mean[1] != 4 || c.Lo[1] != 4 || c.Hi[1] != 4 || c.Mean[0] != 1 {
		t.Errorf("round 1: %v; round 5: mean %v, band [%v, %v]", c.Mean[0], c.Mean[1], c.Lo[1], c.Hi[1])
	}
	sc := plottable(c)
	if len(sc.band) != 2*len(sc.line) || sc.rounds != 5000 || sc.line[1].X != 5 {
		t.Errorf("plottable: band %d points for a line of %d, rounds %d", len(sc.band), len(sc.line), sc.rounds)
	}
	if got := drawnRounds(3); !slices.Equal(got, []int{0, 1, 2}) {
		t.Errorf("drawnRounds(3) = %v", got)
	}
}
