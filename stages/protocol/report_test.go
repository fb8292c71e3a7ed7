package protocol

import (
	"testing"
)

// TestDiffersFromPaper: the paper's protocol differs from itself in
// nothing; the quick profile in exactly what params.yaml's profile sets;
// --set shows; where results go (outputs) is not a value of the protocol.
func TestDiffersFromPaper(t *testing.T) {
	paper, err := LoadConfig(LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d, err := paper.DiffersFromPaper(); err != nil || len(d) != 0 {
		t.Fatalf("the paper differs from itself: %v, %v", d, err)
	}
	quick, err := LoadConfig(LoadOptions{Profile: "quick", Set: []string{"algorithms.THV-UCB.params.delta=0.05", "outputs.results=elsewhere"}})
	if err != nil {
		t.Fatal(err)
	}
	d, err := quick.DiffersFromPaper()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, o := range d {
		got[o.Key] = o.Paper + " → " + o.Ours
	}
	want := map[string]string{
		"algorithms.THV-UCB.params.delta": "0 → 0.05",
		"grid_seeds":                      "[0 … 9] (10 values) → [0, 1, 2]",
		"seeds":                           "[0 … 9] (10 values) → [0, 1, 2]",
		"settings.d2.T":                   "2000 → 300", "settings.d3.T": "3000 → 300", "settings.d4.T": "5000 → 300", "settings.d5.T": "5000 → 300",
	}
	if len(got) != len(want) {
		t.Errorf("differences %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %q, want %q", k, got[k], v)
		}
	}
	if paper.ValuesDigest() == quick.ValuesDigest() {
		t.Error("the quick profile has the paper's digest")
	}
	again, _ := LoadConfig(LoadOptions{})
	again.Outputs.Results = "/tmp/elsewhere"
	if paper.ValuesDigest() != again.ValuesDigest() {
		t.Error("where results go changes the protocol's digest")
	}
}
