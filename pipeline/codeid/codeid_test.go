package codeid

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/printer"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"thv"
)

// The fake module "ex":
//
//	ex/a -> ex/b, fmt, github.com/foo/bar
//	ex/b -> ex/c; b_other.go (//go:build !linux) -> ex/d; b_test.go -> ex/t (ignored); _skip.go (ignored)
//	ex/c -> strings
//	ex/d, ex/e (unreachable from ex/a), ex (the module root, -> ex/c)
var fakeFiles = map[string]string{
	"a/a.go": `// Package a is the root.
package a

import (
	"fmt"

	"ex/b"
	"github.com/foo/bar"
)

// F calls b.
func F() string { return fmt.Sprint(b.G(), bar.X) }
`,
	"a/doc.go": "// Package a.\npackage a\n",
	"b/b.go": `package b

import "ex/c"

//go:noinline
func G() int {
	x := c.H() // a comment
	return x + 1
}
`,
	"b/b_other.go": `//go:build !linux

package b

import _ "ex/d"
`,
	"b/b_test.go":  "package b\n\nimport _ \"ex/t\"\n",
	"b/_skip.go":   "package b\n\nimport _ \"ex/nowhere\"\n",
	"b/.hidden.go": "package b\n\nimport _ \"ex/nowhere\"\n",
	"b/notes.txt":  "not Go",
	"c/c.go": `package c

import "strings"

/* H returns
   one. */
func H() int { return len(strings.Repeat("x", 1)) }
`,
	"d/d.go":  "package d\n",
	"e/e.go":  "package e\n\nimport \"github.com/unlisted/pkg\"\n\nvar _ = pkg.X\n",
	"root.go": "package ex\n\nimport _ \"ex/c\"\n",
}

var fakeThirdParty = map[string][]string{
	"github.com/foo/bar": {"github.com/foo/bar", "golang.org/x/sys"},
}

var fakePackageNames = map[string]string{"github.com/foo/bar": "bar"}

func fakeModules() []*debug.Module {
	return []*debug.Module{
		{Path: "github.com/foo/bar", Version: "v1.2.0", Sum: "h1:bar="},
		{Path: "golang.org/x/sys", Version: "v0.9.0", Sum: "h1:sys="},
		{Path: "github.com/unused/mod", Version: "v1.0.0", Sum: "h1:unused="},
	}
}

func fakeFS(edits map[string]string) fstest.MapFS {
	fsys := fstest.MapFS{}
	for name, src := range fakeFiles {
		fsys[name] = &fstest.MapFile{Data: []byte(src)}
	}
	for name, src := range edits {
		if src == "" {
			delete(fsys, name)
		} else {
			fsys[name] = &fstest.MapFile{Data: []byte(src)}
		}
	}
	return fsys
}

func fakeConfig(edits map[string]string) Config {
	return Config{
		Path:         "ex",
		Sources:      fakeFS(edits),
		ThirdParty:   maps.Clone(fakeThirdParty),
		PackageNames: maps.Clone(fakePackageNames),
		Modules:      fakeModules(),
		Toolchain:    "go1.26.8",
	}
}

// thvConfig is the Config of this module's sources, with no modules.
func thvConfig() Config {
	return Config{Path: "thv", Sources: thv.Sources, ThirdParty: thv.ThirdParty, PackageNames: thv.ThirdPartyNames, Toolchain: "go1.26.8"}
}

// resolved returns the package pp of m, loaded with its closure and
// resolved.
func resolved(t testing.TB, m *Module, pp string) *pkg {
	t.Helper()
	if _, err := m.Packages(pp); err != nil {
		t.Fatal(err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	p := m.pkgs[pp]
	if err := m.resolve(p); err != nil {
		t.Fatal(err)
	}
	return p
}

func mustIdentity(t *testing.T, m *Module, roots ...string) *Identity {
	t.Helper()
	id, err := m.Identity(roots...)
	if err != nil {
		t.Fatalf("Identity(%q): %v", roots, err)
	}
	return id
}

func TestPackages(t *testing.T) {
	m := New(fakeConfig(nil))
	for _, tc := range []struct {
		roots []string
		want  []string
	}{
		{[]string{"ex/a"}, []string{"ex/a", "ex/b", "ex/c", "ex/d"}},
		{[]string{"ex/b"}, []string{"ex/b", "ex/c", "ex/d"}},
		{[]string{"ex/c"}, []string{"ex/c"}},
		{[]string{"ex/e", "ex/c", "ex/e"}, []string{"ex/c", "ex/e"}},
		{[]string{"ex"}, []string{"ex", "ex/c"}},
	} {
		got, err := m.Packages(tc.roots...)
		if err != nil {
			t.Fatalf("Packages(%q): %v", tc.roots, err)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("Packages(%q) = %q, want %q", tc.roots, got, tc.want)
		}
	}
	files, err := m.Files("ex/b")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"b/b.go", "b/b_other.go"}; !slices.Equal(files, want) {
		t.Errorf("Files(ex/b) = %q, want %q (all non-test files whatever their constraints; no _ or . files)", files, want)
	}
	imps, err := m.Imports("ex/a", "ex/e")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"fmt", "github.com/foo/bar", "github.com/unlisted/pkg", "strings"}; !slices.Equal(imps, want) {
		t.Errorf("Imports = %q, want %q", imps, want)
	}
}

func TestIdentityUnits(t *testing.T) {
	id := mustIdentity(t, New(fakeConfig(nil)), "ex/a")
	var names []string
	h := sha256.New()
	for _, u := range id.Units {
		names = append(names, u.Name)
		fmt.Fprintf(h, "%s %s\n", u.Name, u.Hash)
	}
	// ex/a.F reaches b.G, which reaches c.H; ex/b links ex/d for its
	// initialisation alone (a blank import, under a constraint); ex/d
	// declares nothing.
	want := []string{"ex/a.F", "ex/b.(blank imports)", "ex/b.G", "ex/c.H", "github.com/foo/bar@v1.2.0", "go", "golang.org/x/sys@v0.9.0"}
	if !slices.Equal(names, want) {
		t.Errorf("units %q, want %q", names, want)
	}
	if d := "sha256:" + hex.EncodeToString(h.Sum(nil)); id.Digest != d {
		t.Errorf("digest %s, want %s", id.Digest, d)
	}
	units := map[string]string{}
	for _, u := range id.Units {
		units[u.Name] = u.Hash
	}
	if units["go"] != "go1.26.8" || units["github.com/foo/bar@v1.2.0"] != "h1:bar=" || units["golang.org/x/sys@v0.9.0"] != "h1:sys=" {
		t.Errorf("units %v", units)
	}
	if !slices.Equal(id.Roots, []string{"ex/a"}) {
		t.Errorf("roots %q", id.Roots)
	}
	if f := mustIdentity(t, New(fakeConfig(nil)), "ex/a.F"); f.Digest != id.Digest {
		t.Errorf("the root ex/a.F reaches other code than the package ex/a, which declares F alone")
	}
	reached, err := New(fakeConfig(nil)).Reached("ex/a")
	if want := []string{"ex/a.F", "ex/b.G", "ex/c.H"}; err != nil || !slices.Equal(reached, want) {
		t.Errorf("Reached = %q, %v; want %q", reached, err, want)
	}
}

// uglyB is b/b.go before gofmt.
const uglyB = "package b\n\nimport   \"ex/c\"\n\n//go:noinline\nfunc G()   int {\n  x:=c.H()    // a comment\n     return x+1\n}\n"

// TestEdits checks which source edits change the identity of ex/a.
func TestEdits(t *testing.T) {
	if formatted, err := format.Source([]byte(uglyB)); err != nil || string(formatted) != fakeFiles["b/b.go"] {
		t.Fatalf("gofmt(uglyB) = %q, %v; want b/b.go", formatted, err)
	}
	base := mustIdentity(t, New(fakeConfig(nil)), "ex/a").Digest
	const c2 = "package c\n\nimport \"strings\"\n\nfunc H() int { return len(strings.Repeat(\"x\", 1)) }\n"
	for _, tc := range []struct {
		name    string
		edits   map[string]string
		changes bool
	}{
		{"comment only", map[string]string{"c/c.go": `package c

import "strings" // for Repeat

// H returns one, now with a doc comment.
func H() int { /* inline */ return len(strings.Repeat("x", 1)) } // trailing
`}, false},
		{"gofmt only", map[string]string{"b/b.go": uglyB}, false},
		{"layout only", map[string]string{"c/c.go": "package c\nimport \"strings\"\nfunc H() int {\n\n  return len( strings.Repeat( \"x\",1 ) )\n\n}\n"}, false},
		{"explicit semicolons", map[string]string{"c/c.go": "package c; import \"strings\"; func H() int { return len(strings.Repeat(\"x\", 1)); };"}, false},
		{"comment in a root file", map[string]string{"a/doc.go": "// Package a does things.\n\n// More.\npackage a\n"}, false},
		{"go:build reformatted by gofmt", map[string]string{"b/b_other.go": "//go:build   !linux\n\npackage b\n\nimport _ \"ex/d\"\n"}, false},
		{"test file", map[string]string{"b/b_test.go": "package b\n\nfunc TestX() {}\n"}, false},
		{"underscore file", map[string]string{"b/_skip.go": "package b\n\nvar Z = 1\n"}, false},
		{"non-Go file", map[string]string{"b/notes.txt": "changed"}, false},
		{"unreachable package", map[string]string{"e/e.go": "package e\n\nvar Y = 2\n"}, false},
		{"file renamed", map[string]string{"c/c.go": "", "c/helpers.go": fakeFiles["c/c.go"]}, false},
		{"declaration moved to another file", map[string]string{"c/c.go": "package c\n", "c/c2.go": c2}, false},
		{"file split", map[string]string{"c/c.go": "package c\n\nconst K = 1\n", "c/c2.go": c2}, false},
		{"declarations reordered", map[string]string{"c/c.go": "package c\n\nimport \"strings\"\n\nfunc H() int { return len(strings.Repeat(\"x\", 1)) }\n\nfunc U() {}\n"}, false},
		{"function nothing calls", map[string]string{"c/c2.go": "package c\n\nfunc Unused() int { return H() + 1 }\n"}, false},
		{"file with only a package clause added", map[string]string{"c/c2.go": "package c\n"}, false},
		{"file with only a package clause removed", map[string]string{"a/doc.go": ""}, false},
		{"unreached declaration edited", map[string]string{"c/c.go": fakeFiles["c/c.go"] + "\nfunc V() int { return 2 }\n"}, false},
		{"token in a reached declaration", map[string]string{"c/c.go": strings.Replace(fakeFiles["c/c.go"], `"x", 1`, `"x", 2`, 1)}, true},
		{"identifier", map[string]string{"c/c.go": strings.Replace(fakeFiles["c/c.go"], "func H", "func H2", 1)}, true},
		{"line break that inserts a semicolon", map[string]string{"b/b.go": strings.Replace(fakeFiles["b/b.go"], "return x + 1", "return\nx + 1", 1)}, true},
		{"go:build edit", map[string]string{"b/b_other.go": strings.Replace(fakeFiles["b/b_other.go"], "!linux", "!linux && !darwin", 1)}, true},
		{"blank import's file renamed to a GOOS", map[string]string{"b/b_other.go": "", "b/b_windows.go": fakeFiles["b/b_other.go"]}, true},
		{"declaration moved to a file with a constraint", map[string]string{"c/c.go": "package c\n", "c/c_linux.go": c2}, true},
		{"declaration moved to a file naming another package so", map[string]string{"c/c.go": "package c\n", "c/c2.go": strings.Replace(c2, `"strings"`, `strings "ex/d"`, 1)}, true},
		{"go:noinline removed", map[string]string{"b/b.go": strings.Replace(fakeFiles["b/b.go"], "//go:noinline\n", "", 1)}, true},
		{"go:noinline made a comment", map[string]string{"b/b.go": strings.Replace(fakeFiles["b/b.go"], "//go:noinline", "// go:noinline", 1)}, true},
		{"method added to a reached type", map[string]string{"c/c2.go": "package c\n\ntype T int\n\nfunc (T) M() {}\n", "c/c.go": strings.Replace(fakeFiles["c/c.go"], "return len(", "var _ T; return len(", 1)}, true},
		{"init function added", map[string]string{"d/d2.go": "package d\n\nfunc init() {}\n"}, true},
		{"variable initialiser added", map[string]string{"d/d2.go": "package d\n\nvar v = 1\n"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := mustIdentity(t, New(fakeConfig(tc.edits)), "ex/a")
			if changed := id.Digest != base; changed != tc.changes {
				t.Errorf("digest changed = %v, want %v", changed, tc.changes)
			}
		})
	}
}

// TestMethodsAndAliases: a reached type reaches every method, whichever
// file declares it, and an alias's methods are its target's.
func TestMethodsAndAliases(t *testing.T) {
	c := fakeConfig(map[string]string{
		"a/a.go": "package a\n\nimport \"ex/c\"\n\nfunc F() any { return c.New() }\n",
		"c/c.go": "package c\n\ntype T struct{ x int }\n\nfunc New() *T { return &T{} }\n\nfunc Other() {}\n",
		"c/m.go": "package c\n\nfunc (t *T) M() int { return t.x }\n\nfunc (t *T) N() {}\n\ntype A = T\n\nfunc (A) P() {}\n\ntype U int\n\nfunc (U) M() {}\n",
	})
	reached, err := New(c).Reached("ex/a.F")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"ex/a.F", "ex/c.A", "ex/c.A.P", "ex/c.New", "ex/c.T", "ex/c.T.M", "ex/c.T.N"}
	if !slices.Equal(reached, want) {
		t.Errorf("Reached = %q, want %q (U is no reached type; Other is named by nothing)", reached, want)
	}
}

// TestWholePackages: reflection by name, //go:linkname and assembly reach
// a package whole.
func TestWholePackages(t *testing.T) {
	base := "package c\n\nfunc H() int { return 1 }\n\nfunc Unused() {}\n"
	for _, tc := range []struct {
		name  string
		edits map[string]string
	}{
		{"MethodByName", map[string]string{"c/r.go": "package c\n\nimport \"reflect\"\n\nvar _ = reflect.ValueOf(0).MethodByName\n"}},
		{"text/template", map[string]string{"c/r.go": "package c\n\nimport _ \"text/template\"\n"}},
		{"linkname", map[string]string{"c/r.go": "package c\n\nimport _ \"unsafe\"\n\n//go:linkname x runtime.x\nfunc x()\n"}},
		{"assembly", map[string]string{"c/r_amd64.s": "TEXT ·x(SB),4,$0\n"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			edits := map[string]string{"c/c.go": base}
			maps.Copy(edits, tc.edits)
			reached, err := New(fakeConfig(edits)).Reached("ex/a")
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Contains(reached, "ex/c.Unused") {
				t.Errorf("Reached = %q: ex/c is not whole", reached)
			}
		})
	}
	reached, err := New(fakeConfig(map[string]string{"c/c.go": base})).Reached("ex/a")
	if err != nil || slices.Contains(reached, "ex/c.Unused") {
		t.Errorf("without them: Reached = %q, %v", reached, err)
	}
	asm := map[string]string{"c/c.go": base, "c/r_amd64.s": "TEXT ·x(SB),4,$0\n"}
	a := mustIdentity(t, New(fakeConfig(asm)), "ex/a")
	asm["c/r_amd64.s"] = "TEXT ·x(SB),4,$8\n"
	if b := mustIdentity(t, New(fakeConfig(asm)), "ex/a"); a.Digest == b.Digest {
		t.Error("editing assembly changes no identity")
	}
}

// TestInitOrder: the order of a package's initialisations counts when two
// or more may have effects, and only then.
func TestInitOrder(t *testing.T) {
	id := func(edits map[string]string) string {
		edits["d/d.go"] = ""
		return mustIdentity(t, New(fakeConfig(edits)), "ex/a").Digest
	}
	one := "package d\n\nvar n = 0\n\nfunc init() { n++ }\n"
	if id(map[string]string{"d/x.go": one}) != id(map[string]string{"d/y.go": one}) {
		t.Error("moving the one effectful initialisation to another file changed the identity")
	}
	first, second := "package d\n\nvar log []string\n\nfunc init() { log = append(log, \"a\") }\n", "package d\n\nfunc init() { log = append(log, \"b\") }\n"
	if id(map[string]string{"d/a.go": first, "d/b.go": second}) == id(map[string]string{"d/c.go": first, "d/b.go": second}) {
		t.Error("two init functions swapped their order, and the identity did not change")
	}
	if id(map[string]string{"d/a.go": first, "d/b.go": second}) != id(map[string]string{"d/a.go": first, "d/c.go": second}) {
		t.Error("renaming a file that keeps the init functions' order changed the identity")
	}
}

// TestRoots: roots name declarations (functions, methods, a package's
// initialisation) or whole packages; a root naming nothing is an error.
func TestRoots(t *testing.T) {
	m := New(fakeConfig(map[string]string{"c/c2.go": "package c\n\ntype T int\n\nfunc (T) M() int { return H() }\n\nfunc init() {}\n"}))
	for _, tc := range []struct {
		roots []string
		want  []string
	}{
		{[]string{"ex/c.H"}, []string{"ex/c.H", "ex/c.init"}},
		{[]string{"ex/c.T.M"}, []string{"ex/c.H", "ex/c.T", "ex/c.T.M", "ex/c.init"}},
		{[]string{"ex/c.init"}, []string{"ex/c.init"}},
		{[]string{"ex/c"}, []string{"ex/c.H", "ex/c.T", "ex/c.T.M", "ex/c.init"}},
		{[]string{"ex/b.G", "ex/c.init"}, []string{"ex/b.G", "ex/c.H", "ex/c.init"}},
	} {
		got, err := m.Reached(tc.roots...)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("Reached(%q) = %q, %v; want %q", tc.roots, got, err, tc.want)
		}
	}
	for _, r := range []string{"ex/c.Nothing", "ex/c.T.Nothing"} {
		if _, err := m.Identity(r); err == nil || !strings.Contains(err.Error(), "declares no") {
			t.Errorf("Identity(%q): %v, want an error", r, err)
		}
	}
}

func TestErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		edit  func(*Config)
		roots []string
		want  []string // substrings of the error
	}{
		{"missing package", func(c *Config) {
			c.Sources.(fstest.MapFS)["c/c.go"] = &fstest.MapFile{Data: []byte("package c\n\nimport _ \"ex/gone\"\n")}
		}, []string{"ex/a"}, []string{"ex/gone", "not in the embedded sources", "go:embed", "imported by ex/c <- ex/b <- ex/a"}},
		{"package with only tests", func(c *Config) {
			delete(c.Sources.(fstest.MapFS), "d/d.go")
			c.Sources.(fstest.MapFS)["d/d_test.go"] = &fstest.MapFile{Data: []byte("package d\n")}
		}, []string{"ex/a"}, []string{"ex/d", "no non-test Go files"}},
		{"unparseable file", func(c *Config) {
			c.Sources.(fstest.MapFS)["d/d.go"] = &fstest.MapFile{Data: []byte("package d\n\nfunc {\n")}
		}, []string{"ex/a"}, []string{"d/d.go:3:6", "does not parse", "{ is not closed"}},
		{"truncated file", func(c *Config) {
			c.Sources.(fstest.MapFS)["d/d.go"] = &fstest.MapFile{Data: []byte("package d\n\nimport \"fmt\"\n\nvar x = fmt.Sprint(1,\n")}
		}, []string{"ex/a"}, []string{"d/d.go:5:19", "does not parse", "( is not closed"}},
		{"unbalanced brackets", func(c *Config) {
			c.Sources.(fstest.MapFS)["d/d.go"] = &fstest.MapFile{Data: []byte("package d\n\nfunc f() { g(] }\n")}
		}, []string{"ex/a"}, []string{"d/d.go:3:14", "does not parse", "] does not close the ( at 3:13"}},
		{"bracket closing nothing", func(c *Config) {
			c.Sources.(fstest.MapFS)["d/d.go"] = &fstest.MapFile{Data: []byte("package d\n\nfunc f() {}\n}\n")}
		}, []string{"ex/a"}, []string{"d/d.go:4:1", "does not parse", "} closes nothing"}},
		{"file that does not scan", func(c *Config) {
			c.Sources.(fstest.MapFS)["d/d.go"] = &fstest.MapFile{Data: []byte("package d\n\nvar s = \"unterminated\n")}
		}, []string{"ex/a"}, []string{"d/d.go:3:9", "does not scan", "string literal not terminated"}},
		{"no package clause", func(c *Config) {
			c.Sources.(fstest.MapFS)["d/d.go"] = &fstest.MapFile{Data: []byte("// just a comment\n")}
		}, []string{"ex/a"}, []string{"d/d.go", "does not parse", "expected 'package', found EOF"}},
		{"malformed import", func(c *Config) {
			c.Sources.(fstest.MapFS)["d/d.go"] = &fstest.MapFile{Data: []byte("package d\n\nimport (\n\t\"fmt\"\n\tstrings\n)\n")}
		}, []string{"ex/a"}, []string{"d/d.go:5:9", "does not parse", "expected import path, found newline"}},
		{"import after a declaration", func(c *Config) {
			c.Sources.(fstest.MapFS)["d/d.go"] = &fstest.MapFile{Data: []byte("package d\n\nvar X = 1\n\nimport \"fmt\"\n")}
		}, []string{"ex/a"}, []string{"d/d.go:5:1", "does not parse", "imports must appear before other declarations"}},
		{"relative import", func(c *Config) {
			c.Sources.(fstest.MapFS)["d/d.go"] = &fstest.MapFile{Data: []byte("package d\n\nimport _ \"./x\"\n")}
		}, []string{"ex/a"}, []string{"d/d.go", `import "./x" is not a module import path`}},
		{"cgo", func(c *Config) {
			c.Sources.(fstest.MapFS)["d/d.go"] = &fstest.MapFile{Data: []byte("package d\n\n// #include <stdio.h>\nimport \"C\"\n")}
		}, []string{"ex/a"}, []string{"d/d.go", "cgo"}},
		{"cgo in an import group", func(c *Config) {
			c.Sources.(fstest.MapFS)["d/d.go"] = &fstest.MapFile{Data: []byte("package d\n\nimport (\n\t\"fmt\"\n\n\t// #include <stdio.h>\n\t\"C\"\n)\n")}
		}, []string{"ex/a"}, []string{"d/d.go", "cgo"}},
		{"unknown third-party import", nil, []string{"ex/e"}, []string{"github.com/unlisted/pkg", "ex/e", "third-party table", "regenerate it: list, for every third-party package an in-module package imports, the modules of its package closure (go list -deps)"}},
		{"unknown third-party import, the module's hint", func(c *Config) { c.Hints.UpdateThirdParty = "make thirdparty" }, []string{"ex/e"}, []string{"github.com/unlisted/pkg", "third-party table", "regenerate it: make thirdparty"}},
		{"missing module, the module's hints", func(c *Config) {
			c.Modules = c.Modules[:1]
			c.Hints = Hints{Build: "go build ./cmd/ex", UpdateThirdParty: "make thirdparty"}
		}, []string{"ex/a"}, []string{"module golang.org/x/sys", "(go build ./cmd/ex)", "if it is stale: make thirdparty"}},
		{"third-party import with no module", func(c *Config) { c.ThirdParty["github.com/foo/bar"] = nil }, []string{"ex/a"}, []string{"github.com/foo/bar", "no module"}},
		{"missing module", func(c *Config) { c.Modules = c.Modules[:1] }, []string{"ex/a"}, []string{"module golang.org/x/sys", `import "github.com/foo/bar" of package ex/a`, "build info"}},
		{"module without sum", func(c *Config) { c.Modules[1].Sum = "" }, []string{"ex/a"}, []string{"golang.org/x/sys", "checksum"}},
		{"directory replacement", func(c *Config) {
			c.Modules[0].Replace = &debug.Module{Path: "../bar", Version: "(devel)"}
		}, []string{"ex/a"}, []string{"github.com/foo/bar", "../bar", "checksum"}},
		{"module listed twice", func(c *Config) {
			c.Modules = append(c.Modules, &debug.Module{Path: "golang.org/x/sys", Version: "v0.8.0", Sum: "h1:old="})
		}, []string{"ex/a"}, []string{"golang.org/x/sys", "twice"}},
		{"root outside the module", nil, []string{"fmt"}, []string{`"fmt"`, "not a package of module ex"}},
		{"missing root", nil, []string{"ex/zz"}, []string{"ex/zz", "not in the embedded sources"}},
		{"missing root declaration", nil, []string{"ex/c.Z"}, []string{"ex/c.Z", "package ex/c declares no Z"}},
		{"no root", nil, nil, []string{"no root"}},
		{"third-party import without a package name", func(c *Config) { delete(c.PackageNames, "github.com/foo/bar") }, []string{"ex/a"}, []string{"github.com/foo/bar", "no package name", "regenerate"}},
		{"no toolchain", func(c *Config) { c.Toolchain = "" }, []string{"ex/a"}, []string{"Toolchain"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := fakeConfig(nil)
			if tc.edit != nil {
				tc.edit(&c)
			}
			m := New(c)
			for range 2 { // the error is cached, and stays
				id, err := m.Identity(tc.roots...)
				if err == nil {
					t.Fatalf("no error; identity %+v", id)
				}
				for _, w := range tc.want {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not mention %q", err, w)
					}
				}
			}
		})
	}
}

func TestModulesAndToolchain(t *testing.T) {
	base := mustIdentity(t, New(fakeConfig(nil)), "ex/a")
	for _, tc := range []struct {
		name     string
		edit     func(*Config)
		changes  bool
		wantUnit string
	}{
		{"version", func(c *Config) { c.Modules[1].Version = "v0.9.1" }, true, "golang.org/x/sys@v0.9.1"},
		{"sum", func(c *Config) { c.Modules[0].Sum = "h1:other=" }, true, "github.com/foo/bar@v1.2.0"},
		{"replacement", func(c *Config) {
			c.Modules[0].Replace = &debug.Module{Path: "github.com/fork/bar", Version: "v1.2.1", Sum: "h1:fork="}
		}, true, "github.com/foo/bar=>github.com/fork/bar@v1.2.1"},
		{"toolchain", func(c *Config) { c.Toolchain = "go1.26.9" }, true, "go"},
		{"unused module", func(c *Config) { c.Modules[2].Version = "v2.0.0" }, false, ""},
		{"module order", func(c *Config) { slices.Reverse(c.Modules) }, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := fakeConfig(nil)
			tc.edit(&c)
			id := mustIdentity(t, New(c), "ex/a")
			if changed := id.Digest != base.Digest; changed != tc.changes {
				t.Errorf("digest changed = %v, want %v", changed, tc.changes)
			}
			if tc.wantUnit != "" && !slices.ContainsFunc(id.Units, func(u Unit) bool { return u.Name == tc.wantUnit }) {
				t.Errorf("no unit %s in %v", tc.wantUnit, id.Units)
			}
		})
	}
}

func TestRootsCanonical(t *testing.T) {
	m := New(fakeConfig(nil))
	a := mustIdentity(t, m, "ex/d", "ex/c")
	b := mustIdentity(t, New(fakeConfig(nil)), "ex/c", "ex/d", "ex/c")
	if a.Digest != b.Digest || !slices.Equal(a.Roots, []string{"ex/c", "ex/d"}) || !slices.Equal(b.Roots, a.Roots) {
		t.Errorf("root order or duplicates change the identity: %+v vs %+v", a, b)
	}
}

// TestConcurrent checks that concurrent callers agree with a sequential
// computation on a fresh Module (run with -race).
func TestConcurrent(t *testing.T) {
	c := fakeConfig(nil)
	delete(c.Sources.(fstest.MapFS), "e/e.go")
	c.Sources.(fstest.MapFS)["e/e.go"] = &fstest.MapFile{Data: []byte("package e\n")}
	rootSets := [][]string{{"ex/a"}, {"ex/b"}, {"ex/c"}, {"ex/a", "ex/e"}, {"ex/e", "ex/a"}, {"ex"}, {"ex/d", "ex/c"}}
	want := map[string]string{}
	for _, rs := range rootSets {
		want[strings.Join(rs, ",")] = mustIdentity(t, New(c), rs...).Digest
	}
	m := New(c)
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			for i := range 200 {
				rs := rootSets[(g+i)%len(rootSets)]
				id, err := m.Identity(rs...)
				if err != nil {
					t.Error(err)
					return
				}
				if id.Digest != want[strings.Join(rs, ",")] {
					t.Errorf("Identity(%q) = %s, want %s", rs, id.Digest, want[strings.Join(rs, ",")])
				}
				if _, err := m.Packages(rs...); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
}

// TestNormaliseIgnoresLayoutAndComments reprints every Go file of this
// package with another layout, and without its non-directive comments, and
// checks the normalised stream does not change.
func TestNormaliseIgnoresLayoutAndComments(t *testing.T) {
	files, err := fs.Glob(os.DirFS("."), "*.go")
	if err != nil || len(files) == 0 {
		t.Fatal(files, err)
	}
	files = append(files, "testdata-inline")
	for _, name := range files {
		var src []byte
		if name == "testdata-inline" {
			src = []byte("//go:build linux||darwin\n\n// Package p.\npackage p\n\n// f does.\n//\n//go:noinline\nfunc f() int { return 1 /* one */ }\n\n//go:embed a.txt\nvar s string\n")
		} else {
			src, err = fs.ReadFile(os.DirFS("."), name)
			if err != nil {
				t.Fatal(err)
			}
		}
		want, _, err := normalise(name, src)
		if err != nil {
			t.Fatal(err)
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, name, src, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		var spaced bytes.Buffer
		if err := (&printer.Config{Mode: printer.UseSpaces, Tabwidth: 3}).Fprint(&spaced, fset, f); err != nil {
			t.Fatal(err)
		}
		if got, _, err := normalise(name, spaced.Bytes()); err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: relayout changes the normalised code (err %v)", name, err)
		}
		// Drop every comment but the directives.
		var kept []*ast.CommentGroup
		for _, g := range f.Comments {
			var list []*ast.Comment
			for _, c := range g.List {
				if _, ok := directive(c.Text); ok {
					list = append(list, c)
				}
			}
			if len(list) > 0 {
				kept = append(kept, &ast.CommentGroup{List: list})
			}
		}
		f.Comments = kept
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				d.Doc = nil
			case *ast.GenDecl:
				d.Doc = nil
			}
		}
		f.Doc = nil
		var bare bytes.Buffer
		if err := printer.Fprint(&bare, fset, f); err != nil {
			t.Fatal(err)
		}
		if got, _, err := normalise(name, bare.Bytes()); err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: dropping comments changes the normalised code (err %v)\n%s", name, err, bare.Bytes())
		}
	}
}

func TestDirective(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"//go:build linux&&amd64", "//go:build linux && amd64"},
		{"//go:build (linux) || darwin  ", "//go:build linux || darwin"},
		{"//go:noinline", "//go:noinline"},
		{"//go:embed a.txt b.txt", "//go:embed a.txt b.txt"},
		{"// +build  linux amd64", "// +build linux amd64"},
		{"// go:noinline", ""},
		{"// a comment", ""},
		{"/* //go:noinline */", ""},
		{"//line foo.go:1", ""},
	} {
		got, ok := directive(tc.in)
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("directive(%q) = %q, %v; want %q", tc.in, got, ok, tc.want)
		}
	}
}

// TestKnownPlatforms: every GOOS and GOARCH the toolchain knows is one a
// file name's suffix constrains a file to.
func TestKnownPlatforms(t *testing.T) {
	out, err := exec.Command("go", "tool", "dist", "list").Output()
	if err != nil {
		t.Fatalf("go tool dist list: %v", err)
	}
	for _, pair := range strings.Fields(string(out)) {
		goos, goarch, _ := strings.Cut(pair, "/")
		if !knownOS[goos] || !knownArch[goarch] {
			t.Errorf("%s is not known to fileConstraint", pair)
		}
	}
}

func TestFileConstraint(t *testing.T) {
	for _, tc := range []struct {
		base  string
		build []string
		want  string
	}{
		{"a.go", nil, ""},
		{"linux.go", nil, ""}, // a name that is all tag is no constraint
		{"a_linux.go", nil, "goos linux"},
		{"a_arm64.go", nil, "goarch arm64"},
		{"a_linux_arm64.go", nil, "goos linux; goarch arm64"},
		{"a_linux_test.go", nil, "goos linux"},
		{"a_other.go", []string{"//go:build !linux"}, "//go:build !linux"},
		{"a_windows.go", []string{"//go:build amd64"}, "//go:build amd64; goos windows"},
		{"a.go", []string{"// +build linux darwin", "// +build amd64"}, "+build (linux || darwin) && amd64"},
		{"a.go", []string{"// +build linux", "//go:build linux"}, "//go:build linux"},
		{"a.v2_linux.go", nil, ""}, // cut at the first dot, as go/build does
	} {
		if got := fileConstraint(tc.base, tc.build); got != tc.want {
			t.Errorf("fileConstraint(%q, %q) = %q, want %q", tc.base, tc.build, got, tc.want)
		}
	}
}
