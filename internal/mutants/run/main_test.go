package main

import (
	"slices"
	"testing"
)

// TestJudge: a task whose code identity is the base's and whose outputs
// are not (other bytes, an error, a hang, a crash) is unsound; changed
// keys are counted under both identities, with those whose outputs stayed;
// a task the mutant's probe did not run is counted apart.
func TestJudge(t *testing.T) {
	out := func(h string) map[string]string { return map[string]string{"o": h} }
	pkgs := []string{"thv/hv", "thv/stages/run"}
	base := map[string]result{
		"same":      {ID: "same", Code: "c1", Packages: pkgs, Outputs: out("a")},
		"changed":   {ID: "changed", Code: "c2", Packages: pkgs, Outputs: out("b")},
		"keyonly":   {ID: "keyonly", Code: "c3", Packages: pkgs, Outputs: out("c")},
		"unsound":   {ID: "unsound", Code: "c4", Packages: pkgs, Outputs: out("d")},
		"hung":      {ID: "hung", Code: "c5", Packages: pkgs, Outputs: out("e")},
		"crashed":   {ID: "crashed", Code: "c6", Packages: []string{"thv/hv"}, Outputs: out("f")},
		"elsewhere": {ID: "elsewhere", Code: "c7", Packages: []string{"thv/stages/tables"}, Outputs: out("g")},
		"skipped":   {ID: "skipped", Code: "c8", Packages: pkgs, Outputs: out("h")},
		"missing":   {ID: "missing", Code: "c9", Packages: pkgs, Outputs: out("i")},
	}
	got := map[string]result{
		"same":      {ID: "same", Code: "c1", Outputs: out("a")},
		"changed":   {ID: "changed", Code: "x2", Outputs: out("B")},
		"keyonly":   {ID: "keyonly", Code: "x3", Outputs: out("c")},
		"unsound":   {ID: "unsound", Code: "c4", Outputs: out("D")},
		"hung":      {ID: "hung", Code: "c5", Timeout: true},
		"crashed":   {ID: "crashed", Code: "x6", Error: "crashed: fatal error"},
		"elsewhere": {ID: "elsewhere", Code: "c7", Outputs: out("g")},
		"skipped":   {ID: "skipped", Code: "x8", Skipped: true},
	}
	ids := []string{"changed", "crashed", "elsewhere", "hung", "keyonly", "missing", "same", "skipped", "unsound"}
	var o Outcome
	judge(&o, "thv/hv", base, got, ids)
	if want := []string{"hung", "unsound"}; !slices.Equal(o.Unsound, want) {
		t.Errorf("unsound %q, want %q", o.Unsound, want)
	}
	if o.Tasks != 7 || o.Skipped != 2 || o.Keys != 3 || o.Wasted != 1 || o.Outputs != 4 || o.PkgKeys != 6 || o.PkgWaste != 2 {
		t.Errorf("outcome %+v", o)
	}
}
