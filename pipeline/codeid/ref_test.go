package codeid

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"go/parser"
	"go/scanner"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"thv"
)

// normalise is normaliser.normalise with a fresh normaliser: the normalised
// stream and the imports of one file.
func normalise(name string, src []byte) ([]byte, []string, error) {
	var n normaliser
	if err := n.normalise(name, src); err != nil {
		return nil, nil, err
	}
	return n.out, n.imports, nil
}

// parsedNormalise is the reference normalise: the imports from go/parser,
// the stream from go/scanner, as codeid computed them before it stopped
// parsing. Identities must not change: normalise must agree with it on every
// file that parses.
func parsedNormalise(name string, src []byte) ([]byte, []string, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, nil, fmt.Errorf("%s does not parse (fix the file): %w", name, err)
	}
	var imports []string
	for _, is := range f.Imports {
		imp, err := strconv.Unquote(is.Path.Value)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: bad import %s: %w", name, is.Path.Value, err)
		}
		switch {
		case imp == "C":
			return nil, nil, fmt.Errorf("%s uses cgo (import \"C\")", name)
		case imp == "" || strings.HasPrefix(imp, ".") || strings.HasPrefix(imp, "/"):
			return nil, nil, fmt.Errorf("%s: import %q is not a module import path", name, imp)
		}
		imports = append(imports, imp)
	}

	file := fset.AddFile(name, fset.Base(), len(src))
	var errs scanner.ErrorList
	var sc scanner.Scanner
	sc.Init(file, src, func(pos token.Position, msg string) { errs.Add(pos, msg) }, scanner.ScanComments)
	var buf bytes.Buffer
	semi := false
	for {
		_, tok, lit := sc.Scan()
		if tok == token.COMMENT {
			if d, ok := directive(lit); ok {
				if semi {
					buf.WriteString(";\n")
					semi = false
				}
				buf.WriteString(d)
				buf.WriteByte('\n')
			}
			continue
		}
		if semi && tok != token.RPAREN && tok != token.RBRACE {
			buf.WriteString(";\n")
		}
		semi = tok == token.SEMICOLON
		if semi {
			continue
		}
		if tok == token.EOF {
			break
		}
		buf.WriteString(tok.String())
		if lit != "" && tok.IsLiteral() {
			buf.WriteByte(' ')
			buf.WriteString(lit)
		}
		buf.WriteByte('\n')
	}
	if errs.Len() > 0 {
		return nil, nil, fmt.Errorf("%s does not scan (fix the file): %w", name, errs.Err())
	}
	return buf.Bytes(), imports, nil
}

// parsedPackageHash is the reference hash of the package in directory dir of
// fsys (see parsedNormalise), and its imports.
func parsedPackageHash(t *testing.T, fsys fs.FS, dir string, files []string) (string, []string) {
	t.Helper()
	h := sha256.New()
	var imports []string
	for _, f := range files {
		src, err := fs.ReadFile(fsys, f)
		if err != nil {
			t.Fatal(err)
		}
		norm, imps, err := parsedNormalise(f, src)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(h, "file %s %d\n", path.Base(f), len(norm))
		h.Write(norm)
		imports = append(imports, imps...)
	}
	slices.Sort(imports)
	return hex.EncodeToString(h.Sum(nil)), slices.Compact(imports)
}

// TestHashesMatchParser checks that the hash and imports of every package of
// thv.Sources, and of the fake module, are those of the reference.
func TestHashesMatchParser(t *testing.T) {
	for _, fsys := range []struct {
		module string
		fs     fs.FS
	}{{"thv", thv.Sources}, {"ex", fakeFS(nil)}} {
		dirs := map[string]bool{}
		err := fs.WalkDir(fsys.fs, ".", func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(p, ".go") && !strings.HasSuffix(p, "_test.go") {
				dirs[path.Dir(p)] = true
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		m := New(Config{Path: fsys.module, Sources: fsys.fs})
		for _, dir := range slices.Sorted(func(yield func(string) bool) {
			for d := range dirs {
				if !yield(d) {
					return
				}
			}
		}) {
			pp := fsys.module
			if dir != "." {
				pp += "/" + dir
			}
			m.mu.Lock()
			p := m.load(pp)
			m.mu.Unlock()
			if p.err != nil {
				t.Errorf("%s: %v", pp, p.err)
				continue
			}
			hash, imports := parsedPackageHash(t, fsys.fs, dir, p.files)
			if p.hash != hash || !slices.Equal(p.imports, imports) {
				t.Errorf("%s: hash %s, imports %q; the reference has %s, %q", pp, p.hash, p.imports, hash, imports)
			}
		}
		t.Logf("module %s: %d packages", fsys.module, len(dirs))
		if len(dirs) < 5 {
			t.Errorf("module %s: only %d packages", fsys.module, len(dirs))
		}
	}
}

// oddHeaders are files with unusual package clauses and import declarations.
var oddHeaders = []string{
	"package p",
	"package p; import \"fmt\"",
	"package p; import (\"fmt\"; . \"strings\"; _ \"os\"; x \"io\")",
	"package p\nimport ()\nimport (\n)\nimport \"fmt\"\nimport (\n\t\"io\" // c\n\t/* d */ \"os\"\n)\n",
	"package p\n\nimport (\n\t\"fmt\"\n\n\t\"strings\"\n)\n\nimport \"os\"\n\nvar _ = fmt.Sprint\nvar _ = strings.Cut\nvar _ = os.Exit",
	"\ufeffpackage p // BOM\n",
	"/* a */ package /* b */ p /* c */ ; import /* d */ ( /* e */ f /* f */ `fmt` /* g */ ) /* h */",
	"package p\nimport `fmt`\n",
	"package p\nimport \"\\x66mt\"\n",
	"package p\n\n//go:build x\n\nimport \"fmt\"\n\nfunc f() {\n\tfmt.Println(1)\n}\n",
}

// TestNormaliseMatchesParser compares normalise with the reference on every
// Go file (test files too) of thv.Sources, of this package, of the fake
// module, and of some of the standard library's source, and on odd headers.
func TestNormaliseMatchesParser(t *testing.T) {
	type file struct {
		name string
		src  []byte
	}
	var files []file
	add := func(fsys fs.FS, prefix string, max int) {
		k := 0
		fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
			if err != nil || k >= max {
				return fs.SkipDir
			}
			if d.IsDir() && d.Name() == "testdata" {
				return fs.SkipDir
			}
			if !d.IsDir() && strings.HasSuffix(p, ".go") {
				src, err := fs.ReadFile(fsys, p)
				if err != nil {
					t.Fatal(err)
				}
				files = append(files, file{prefix + p, src})
				k++
			}
			return nil
		})
	}
	add(thv.Sources, "thv/", 1e9)
	add(os.DirFS("."), "codeid/", 1e9)
	add(fakeFS(nil), "ex/", 1e9)
	goroot := 400
	if testing.Short() {
		goroot = 50
	}
	for _, dir := range []string{"go", "strconv", "net/http"} {
		add(os.DirFS(filepath.Join(runtime.GOROOT(), "src", dir)), "goroot/"+dir+"/", goroot)
	}
	for i, src := range oddHeaders {
		files = append(files, file{fmt.Sprintf("inline-%d.go", i), []byte(src)})
	}
	var n normaliser // reused across files, as a Module's
	compared := 0
	for _, f := range files {
		want, wantImps, wantErr := parsedNormalise(f.name, f.src)
		n.imports = n.imports[:0]
		err := n.normalise(f.name, f.src)
		if wantErr != nil {
			if strings.Contains(wantErr.Error(), "does not parse") {
				continue // normalise need not notice
			}
			if err == nil {
				t.Errorf("%s: no error; the reference has %v", f.name, wantErr)
			}
			continue
		}
		compared++
		if err != nil {
			t.Errorf("%s: %v", f.name, err)
			continue
		}
		if !bytes.Equal(n.out, want) || !slices.Equal(n.imports, wantImps) {
			t.Errorf("%s: normalise and the reference differ:\nimports %q\nreference %q\n", f.name, n.imports, wantImps)
		}
	}
	t.Logf("%d files compared", compared)
	if compared < 100 {
		t.Errorf("only %d files compared", compared)
	}
}

// fuzzSeeds are the seed corpus of the fuzz target: every kind of token,
// and files that do not scan.
var fuzzSeeds = []string{
	"package p\n\nimport (\n\t\"fmt\"\n\tx \"strings\"\n)\n\nfunc f() { fmt.Println(x.Repeat(\"a\\n\", 0x1F), 'c', '\\'', `raw`, 1.5e-3, 07, 0o7, 1_0, .5, 1i) }\n",
	"package p\n//go:build linux\n/* a\nb */ var x = 1 /* c */ + 2 // d\nvar s = \"\\u00e9\\U0001F600\\x41\\101\" + \"é\"\n",
	"package p; var a, b = 3 &^ 2, 4 << 1 >> 1; func g() (int, bool) { a <<= 1; b >>= 1; a &^= 1; ch <- 1; return a, b != 3 && !false || a <= b }",
	"package p\nvar (x = 'é'; y = '\\377'; z = \"\\uD800\")\n",
	"package p\nvar x = 0x\n",
	"package p\nvar x = 1e\n",
	"package p\nvar x = `unterminated\n",
	"package p\nvar x = \"a\nb\"\n",
	"package p\nvar x = '' + 'ab'\n",
	"\ufeffpackage p\n",
	"package p\r\nvar x = 1\r\n",
	"package p\nvar café = 1\n",
	"package p\nvar x = a...b\n",
	"package p\nvar x = 1.String()\n",
	"package p\n/* unterminated",
	"package p\nvar x = #\n",
	"//+build", // IsPlusBuild accepts it without the space: once a slice out of range
	"//+build linux\n\npackage p\n",
	"package p\nvar x = []int{0o17, 0O7, 0b101, 0B1, 0755, 0, 00, 0x_1, 0o8, 0b2, 08, 09.5, 0o, 0b, 1_000, 0e1, 0.5e+1, 1.}\n",
}

// FuzzNormalise checks normalise against the reference (parsedNormalise:
// go/parser for the imports, its own writing of go/scanner's tokens): on
// every file that parses, normalise gives the same stream and imports; it
// accepts no file that does not scan; and a normaliser reused after another
// file (as a Module's is) gives what a fresh one gives.
func FuzzNormalise(f *testing.F) {
	for _, src := range fuzzSeeds {
		f.Add([]byte(src))
	}
	for _, src := range oddHeaders {
		f.Add([]byte(src))
	}
	if files, err := fs.Glob(os.DirFS("."), "*.go"); err == nil {
		for _, name := range files {
			if src, err := os.ReadFile(name); err == nil {
				f.Add(src)
			}
		}
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		var n normaliser
		err := n.normalise("f.go", src)
		want, wantImps, wantErr := parsedNormalise("f.go", src)
		switch {
		case wantErr == nil && err != nil:
			t.Fatalf("normalise rejects a file that parses and scans: %v", err)
		case wantErr != nil && err == nil && strings.Contains(wantErr.Error(), "does not scan"):
			t.Fatalf("normalise accepts a file that does not scan: %v", wantErr)
		case wantErr == nil && (!bytes.Equal(n.out, want) || !slices.Equal(n.imports, wantImps)):
			t.Fatalf("normalise and the reference differ:\n%s\n%q\n---\n%s\n%q", n.out, n.imports, want, wantImps)
		}
		// Reused after a file with unclosed brackets and a pending header.
		var reused normaliser
		reused.normalise("g.go", []byte("package g\nimport (\n\t\"fmt\"\nfunc f() { [ (\n"))
		reused.imports = reused.imports[:0]
		err2 := reused.normalise("f.go", src)
		if (err == nil) != (err2 == nil) || err == nil && (!bytes.Equal(n.out, reused.out) || !slices.Equal(n.imports, reused.imports)) {
			t.Fatalf("a reused normaliser differs from a fresh one: %v, %v", err, err2)
		}
	})
}

// TestPlusBuildDirective: a legacy build line normalises the same with or
// without the space after //, and "//+build" alone does not panic.
func TestPlusBuildDirective(t *testing.T) {
	for in, want := range map[string]string{
		"// +build linux  amd64": "// +build linux amd64",
		"//+build linux amd64":   "// +build linux amd64",
		"//+build":               "// +build ",
	} {
		if got, ok := directive(in); !ok || got != want {
			t.Errorf("directive(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
}
