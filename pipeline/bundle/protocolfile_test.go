package bundle

import (
	"bytes"
	"os"
	"reflect"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestCanonicalProtocol: the paper's and the tests' protocols lose their
// comments and nothing else (the same values, keys in the same order), and
// the canonical form is its own canonical form. Two documents and an empty
// file are refused.
func TestCanonicalProtocol(t *testing.T) {
	for _, f := range []string{"../../params.yaml", "../../stages/protocol/testdata/tiny.yaml"} {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		c, err := CanonicalProtocol(data)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if bytes.Contains(c, []byte("#")) {
			t.Errorf("%s: the canonical form keeps a comment", f)
		}
		again, err := CanonicalProtocol(c)
		if err != nil || !bytes.Equal(again, c) {
			t.Errorf("%s: the canonical form is not its own (%v)", f, err)
		}
		var a, b yaml.Node
		var va, vb any
		if yaml.Unmarshal(data, &va) != nil || yaml.Unmarshal(c, &vb) != nil || !reflect.DeepEqual(va, vb) {
			t.Errorf("%s: the canonical form holds other values", f)
		}
		yaml.Unmarshal(data, &a)
		yaml.Unmarshal(c, &b)
		if keys(&a) != keys(&b) {
			t.Errorf("%s: the keys' order changed:\n%s\n%s", f, keys(&a), keys(&b))
		}
	}
	for _, bad := range []string{"", "a: 1\n---\nb: 2\n", "a: [1\n"} {
		if _, err := CanonicalProtocol([]byte(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// keys lists a document's mapping keys in order, depth first.
func keys(n *yaml.Node) string {
	var b strings.Builder
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		for i, c := range n.Content {
			if n.Kind == yaml.MappingNode && i%2 == 0 {
				b.WriteString(c.Value + " ")
			}
			walk(c)
		}
	}
	walk(n)
	return b.String()
}

// TestParseRequires: single lines and blocks, comments and indirect
// markers; a replace directive and an open block are refused.
func TestParseRequires(t *testing.T) {
	got, err := parseRequires([]byte("module m\n\ngo 1.26\n\nrequire a.org/x v1.0.0\n\nrequire (\n\tb.org/y v0.2.0 // indirect\n\t// a comment\n\tc.org/z v3.1.0\n)\n"))
	want := [][2]string{{"a.org/x", "v1.0.0"}, {"b.org/y", "v0.2.0"}, {"c.org/z", "v3.1.0"}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, %v", got, err)
	}
	for _, bad := range []string{"replace a.org/x => ../x\n", "require (\n\ta.org/x v1\n"} {
		if _, err := parseRequires([]byte(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	if got := escapeModule("github.com/BurntSushi/toml"); got != "github.com/!burnt!sushi/toml" {
		t.Errorf("escapeModule: %s", got)
	}
}
