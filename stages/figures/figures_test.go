package figures

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"thv/stages/formats"
	"thv/stages/stage"
)

func TestFigures(t *testing.T) {
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
	params, _ := json.Marshal(p)
	out, err := Run(context.Background(), params, in)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 2 || !bytes.HasPrefix(out["d2.png"], []byte("\x89PNG")) || !bytes.HasPrefix(out["d2.pdf"], []byte("%PDF-")) {
		t.Fatalf("outputs %d, png %q…, pdf %q…", len(out), out["d2.png"][:4], out["d2.pdf"][:5])
	}
	delete(in, TrajectoryInputName("linear", "THV-UCB", 1))
	if _, err := Run(context.Background(), params, in); err == nil || err.Error() != "missing input linear/THV-UCB/seed=1" {
		t.Errorf("missing input: %v", err)
	}
}
