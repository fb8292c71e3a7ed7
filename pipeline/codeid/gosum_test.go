package codeid

import (
	"runtime/debug"
	"strings"
	"testing"
)

// TestWithGoSumHashes: a vendor build's modules (versions, no hashes) get
// go.sum's hash of their version's files, never its go.mod line's; a hash
// already there, a replaced module and the main module's devel version
// stay; a version go.sum does not name is an error naming it.
func TestWithGoSumHashes(t *testing.T) {
	gosum := []byte("example.com/a v1.0.0 h1:AAA=\nexample.com/a v1.0.0/go.mod h1:MOD=\nexample.com/a v1.1.0 h1:NEW=\nexample.com/b v0.2.0/go.mod h1:BMOD=\n")
	mods := []*debug.Module{
		{Path: "example.com/a", Version: "v1.0.0"},
		{Path: "example.com/c", Version: "v3.0.0", Sum: "h1:KEPT="},
		{Path: "example.com/d", Version: "v1.0.0", Replace: &debug.Module{Path: "example.com/e", Version: "v1.0.0", Sum: "h1:E="}},
	}
	got, err := WithGoSumHashes(mods, gosum)
	if err != nil {
		t.Fatal(err)
	}
	if got[0].Sum != "h1:AAA=" || got[1].Sum != "h1:KEPT=" || got[2].Sum != "" || mods[0].Sum != "" {
		t.Fatalf("sums %q %q %q (the input's %q)", got[0].Sum, got[1].Sum, got[2].Sum, mods[0].Sum)
	}
	_, err = WithGoSumHashes([]*debug.Module{{Path: "example.com/b", Version: "v0.2.0"}}, gosum)
	if err == nil || !strings.Contains(err.Error(), "module example.com/b v0.2.0 has no hash") {
		t.Fatalf("a module with only its go.mod line: %v", err)
	}
}
