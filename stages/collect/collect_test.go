package collect

import (
	"context"
	"encoding/json"
	"testing"

	"thv/stages/formats"
	"thv/stages/stage"
)

func TestCollectKeepsSeedOrder(t *testing.T) {
	in := stage.Inputs{}
	for _, seed := range []uint64{0, 1, 2} {
		b, err := formats.EncodeSummaries([]formats.Summary{{Algo: "A", Eta: 0.1, Seed: seed, HVLast: float64(seed) / 10}})
		if err != nil {
			t.Fatal(err)
		}
		in[SeedInputName(seed)] = b
	}
	params, _ := json.Marshal(Params{Algo: "A", Eta: 0.1, Seeds: []uint64{2, 0, 1}})
	out, err := Run(context.Background(), params, in)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := formats.DecodeSummaries(out["final"])
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 || rows[0].Seed != 2 || rows[1].Seed != 0 || rows[2].HVLast != 0.1 {
		t.Fatalf("rows %+v", rows)
	}
	params, _ = json.Marshal(Params{Algo: "A", Eta: 0.1, Seeds: []uint64{3}})
	if _, err := Run(context.Background(), params, in); err == nil || err.Error() != "missing input seed=3" {
		t.Errorf("missing seed: %v", err)
	}
	two, _ := formats.EncodeSummaries([]formats.Summary{{Seed: 0}, {Seed: 1}})
	params, _ = json.Marshal(Params{Algo: "A", Seeds: []uint64{0}})
	if _, err := Run(context.Background(), params, stage.Inputs{SeedInputName(0): two}); err == nil {
		t.Error("a two-row summary accepted")
	}
}
