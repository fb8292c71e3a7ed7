package etaselect

import (
	"context"
	"encoding/json"
	"testing"

	"thv/stages/formats"
	"thv/stages/stage"
)

func summary(t *testing.T, hvLast float64) []byte {
	t.Helper()
	b, err := formats.EncodeSummaries([]formats.Summary{{Algo: "A", HVLast: hvLast}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestSelect(t *testing.T) {
	p := Params{Algo: "A", Etas: []float64{1, 0.1, 0.01, 0.3}, Seeds: []uint64{0, 1}}
	hv := map[float64][2]float64{0.01: {0.5, 0.6}, 0.1: {0.7, 0.6}, 0.3: {0.6, 0.7}, 1: {0.2, 0.3}}
	in := stage.Inputs{}
	for eta, v := range hv {
		in[RunInputName(eta, 0)], in[RunInputName(eta, 1)] = summary(t, v[0]), summary(t, v[1])
	}
	params, _ := json.Marshal(p)
	out, err := Run(context.Background(), params, in)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := formats.DecodeSelection(out["selection"])
	if err != nil {
		t.Fatal(err)
	}
	// Increasing η; 0.1 and 0.3 tie at 0.65: the smaller wins.
	var etas []float64
	for _, r := range rows {
		etas = append(etas, r.Eta)
		if r.Runs != 2 || r.Selected != (r.Eta == 0.1) {
			t.Errorf("row %+v", r)
		}
	}
	if len(etas) != 4 || etas[0] != 0.01 || etas[3] != 1 {
		t.Errorf("η order %v", etas)
	}
	if eta, err := SelectedEta(out["selection"]); err != nil || eta != 0.1 {
		t.Errorf("SelectedEta = %v, %v", eta, err)
	}
	delete(in, RunInputName(0.3, 1))
	if _, err := Run(context.Background(), params, in); err == nil || err.Error() != "missing input eta=0.3/seed=1" {
		t.Errorf("missing input: %v", err)
	}
}

func TestSelectedEtaNone(t *testing.T) {
	b, err := formats.EncodeSelection([]formats.SelectionRow{{Eta: 0.1, Runs: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := SelectedEta(b); err == nil {
		t.Error("no selected η accepted")
	}
}
