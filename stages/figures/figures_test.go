package figures

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"thv/stages/formats"
	"thv/stages/stage"
)

// figureTask is the params and inputs of a small figures task: two panels,
// T = 40 rounds, two seeds.
func figureTask(t *testing.T) (Params, stage.Inputs) {
	t.Helper()
	p := Params{
		Setting: formats.Setting{Name: "d2", D: 2, N: 36, K: 3, T: 40, Sigma: 0.05, Seeds: 2},
		Panels:  []Panel{{Geometry: "concave", Algorithms: []string{"THV-UCB", "ParetoTS+"}}, {Geometry: "linear", Algorithms: []string{"THV-UCB"}}},
		Seeds:   []uint64{0, 1}, Window: 5, Confidence: 0.95,
	}
	in := stage.Inputs{}
	for _, pan := range p.Panels {
		for ai, a := range pan.Algorithms {
			for _, seed := range p.Seeds {
				hv := make([]float64, p.Setting.T)
				for i := range hv {
					hv[i] = 0.5 * float64(i+1) / float64(len(hv)) / float64(ai+1) * (1 + 0.01*float64(seed))
				}
				b, err := formats.EncodeTrajectory(hv)
				if err != nil {
					t.Fatal(err)
				}
				in[TrajectoryInputName(pan.Geometry, a, seed)] = b
			}
		}
	}
	return p, in
}

func TestFigures(t *testing.T) {
	p, in := figureTask(t)
	params, _ := json.Marshal(p)
	out, err := Run(context.Background(), params, in)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 2 || !bytes.HasPrefix(out["d2.curves.parquet"], []byte("PAR1")) || !bytes.HasPrefix(out["d2.pdf"], []byte("%PDF-")) {
		t.Fatalf("outputs %d, curves %q…, pdf %q…", len(out), out["d2.curves.parquet"][:4], out["d2.pdf"][:5])
	}
	rows, err := formats.DecodeCurves(out["d2.curves.parquet"])
	if err != nil {
		t.Fatal(err)
	}
	// T = 40 draws every round: 3 curves of 40 points, in the figure's order.
	if len(rows) != 120 || rows[0] != (formats.CurvePoint{Geometry: "concave", Algo: "THV-UCB", Round: 1, Mean: rows[0].Mean, CILow: rows[0].CILow, CIHigh: rows[0].CIHigh}) ||
		rows[40].Algo != "ParetoTS+" || rows[80].Geometry != "linear" || rows[119].Round != 40 {
		t.Fatalf("%d rows: %+v, %+v, %+v", len(rows), rows[0], rows[40], rows[80])
	}
	if r := rows[0]; !(r.CILow < r.Mean && r.Mean < r.CIHigh) {
		t.Errorf("round 1 of two different seeds: band [%v, %v] around %v", r.CILow, r.CIHigh, r.Mean)
	}

	png, err := RenderPNG(params, out["d2.curves.parquet"])
	if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Fatalf("RenderPNG: %v, %q…", err, png[:min(4, len(png))])
	}

	delete(in, TrajectoryInputName("linear", "THV-UCB", 1))
	if _, err := Run(context.Background(), params, in); err == nil || err.Error() != "missing input linear/THV-UCB/seed=1" {
		t.Errorf("missing input: %v", err)
	}
}

// TestRenderPNGRefusesOtherCurves: curves that are not the figure's (other
// panels, order or algorithms) or not a curves table are refused, naming
// the output.
func TestRenderPNGRefusesOtherCurves(t *testing.T) {
	p, in := figureTask(t)
	params, _ := json.Marshal(p)
	out, err := Run(context.Background(), params, in)
	if err != nil {
		t.Fatal(err)
	}
	rows, _ := formats.DecodeCurves(out[p.CurvesOutput()])
	encode := func(rows []formats.CurvePoint) []byte {
		b, err := formats.EncodeCurves(rows)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	swapped := append(append([]formats.CurvePoint{}, rows[40:80]...), rows[:40]...)
	swapped = append(swapped, rows[80:]...)
	renamed := append([]formats.CurvePoint{}, rows...)
	renamed[100].Algo = "RandomK"
	repeated := append([]formats.CurvePoint{}, rows...)
	repeated[1].Round = 1
	cases := map[string]struct {
		curves []byte
		want   string
	}{
		"not parquet":     {[]byte("PAR1 not really"), "d2.curves.parquet: curves table:"},
		"a trajectory":    {in[TrajectoryInputName("concave", "THV-UCB", 0)], `d2.curves.parquet: curves table: no column "geometry"`},
		"algorithm order": {encode(swapped), "d2.curves.parquet: no rows of concave/THV-UCB where the figure draws it (row 0)"},
		"a curve missing": {encode(rows[:80]), "d2.curves.parquet: no rows of linear/THV-UCB where the figure draws it (row 80)"},
		"an extra curve":  {encode(renamed), "d2.curves.parquet: row 100 (linear/RandomK, round 21) is not in the figure, or out of its order"},
		"round repeated":  {encode(repeated), `render figure: panel 0 ("Concave"), curve 0 ("THV-UCB"): round 1 at point 1: rounds must increase from 1 on`},
		"no rows":         {encode(nil), "no rows of concave/THV-UCB"},
	}
	for name, c := range cases {
		png, err := RenderPNG(params, c.curves)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error containing %q", name, err, c.want)
		}
		if png != nil {
			t.Errorf("%s: bytes returned with the error", name)
		}
	}
	if _, err := RenderPNG([]byte(`{"setting": {}, "colour": 1}`), out[p.CurvesOutput()]); err == nil {
		t.Error("RenderPNG accepted params with an unknown field")
	}
}
