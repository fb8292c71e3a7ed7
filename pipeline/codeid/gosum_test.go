package codeid

import (
	"runtime/debug"
	"strings"
	"testing"
	"testing/fstest"
)

// TestWithGoSumHashes: a vendor build's modules (versions, no hashes) get
// go.sum's hash of their version's files, never its go.mod line's; a hash
// already there and a replaced module stay; a version go.sum does not name
// stays without one (an identity reaching it fails, naming it).
func TestWithGoSumHashes(t *testing.T) {
	gosum := []byte("example.com/a v1.0.0 h1:AAA=\nexample.com/a v1.0.0/go.mod h1:MOD=\nexample.com/a v1.1.0 h1:NEW=\nexample.com/b v0.2.0/go.mod h1:BMOD=\n")
	mods := []*debug.Module{
		{Path: "example.com/a", Version: "v1.0.0"},
		{Path: "example.com/c", Version: "v3.0.0", Sum: "h1:KEPT="},
		{Path: "example.com/d", Version: "v1.0.0", Replace: &debug.Module{Path: "example.com/e", Version: "v1.0.0", Sum: "h1:E="}},
		{Path: "example.com/b", Version: "v0.2.0"},
	}
	got := WithGoSumHashes(mods, gosum)
	if got[0].Sum != "h1:AAA=" || got[1].Sum != "h1:KEPT=" || got[2].Sum != "" || got[3].Sum != "" || mods[0].Sum != "" {
		t.Fatalf("sums %q %q %q %q (the input's %q)", got[0].Sum, got[1].Sum, got[2].Sum, got[3].Sum, mods[0].Sum)
	}
	m := New(Config{Path: "example.com/m", Sources: fstest.MapFS{"p/p.go": {Data: []byte("package p\nimport _ \"example.com/b/x\"\n")}},
		ThirdParty: map[string][]string{"example.com/b/x": {"example.com/b"}}, Modules: got, Toolchain: "go1.26"})
	if _, err := m.Identity("example.com/m/p"); err == nil || !strings.Contains(err.Error(), "module example.com/b") || !strings.Contains(err.Error(), "no checksum") {
		t.Fatalf("an identity reaching a module without a hash: %v", err)
	}
}
