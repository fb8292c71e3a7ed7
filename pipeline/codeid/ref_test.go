package codeid

import (
	"bytes"
	"cmp"
	"fmt"
	"go/ast"
	"go/parser"
	"go/scanner"
	"go/token"
	"io/fs"
	"maps"
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

// parsedPackage is the reference of package p of m (loaded and resolved):
// its files read by parsedDecls instead of the normaliser, then resolved
// and hashed as m does. m.mu must be held.
func parsedPackage(t *testing.T, m *Module, p *pkg) (hash string, imports []string) {
	t.Helper()
	q := &pkg{path: p.path, files: p.files, asm: p.asm}
	for _, f := range p.files {
		src, err := fs.ReadFile(m.c.Sources, f)
		if err != nil {
			t.Fatal(err)
		}
		ref, err := parsedDecls(f, src)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range ref.specs {
			imports = append(imports, s.path)
		}
		q.name = cmp.Or(q.name, ref.pkgName)
		q.scanned = append(q.scanned, scannedFile{
			name: f, constraint: fileConstraint(path.Base(f), ref.build), specs: ref.specs,
			decls: ref.decls, streams: ref.streams, dirs: ref.fileDirs, linknames: ref.linknames,
		})
	}
	if err := m.resolveScanned(q); err != nil {
		t.Fatal(err)
	}
	q.index()
	return q.hash, sortUnique(imports)
}

// TestHashesMatchParser checks that the hash and imports of every package of
// thv.Sources, and of the fake module, are those of the reference.
func TestHashesMatchParser(t *testing.T) {
	for _, c := range []Config{thvConfig(), fakeConfig(nil)} {
		dirs := map[string]bool{}
		err := fs.WalkDir(c.Sources, ".", func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(p, ".go") && !strings.HasSuffix(p, "_test.go") && !strings.HasPrefix(path.Base(p), "_") && !strings.HasPrefix(path.Base(p), ".") {
				dirs[path.Dir(p)] = true
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		m := New(c)
		compared := 0
		for _, dir := range slices.Sorted(maps.Keys(dirs)) {
			pp := c.Path
			if dir != "." {
				pp += "/" + dir
			}
			if _, err := m.Packages(pp); err != nil {
				t.Logf("%s: %v", pp, err) // the wiring, whose imports are outside the sources
				continue
			}
			m.mu.Lock()
			p := m.pkgs[pp]
			err := m.resolve(p)
			if err == nil {
				hash, imports := parsedPackage(t, m, p)
				if p.hash != hash || !slices.Equal(p.imports, imports) {
					t.Errorf("%s: hash %s, imports %q; the reference has %s, %q", pp, p.hash, p.imports, hash, imports)
				}
				compared++
			} else {
				t.Logf("%s: %v", pp, err) // ex/e's unlisted import
			}
			m.mu.Unlock()
		}
		t.Logf("module %s: %d packages compared", c.Path, compared)
		if compared < 5 {
			t.Errorf("module %s: only %d packages compared", c.Path, compared)
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
		ref, err := parsedDecls(f.name, f.src)
		if err != nil {
			t.Fatalf("%s: %v", f.name, err)
		}
		if diff := compareDecls(&n, ref); diff != "" {
			t.Errorf("%s: the declarations differ from the reference's: %s", f.name, diff)
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
		if wantErr == nil {
			ref, err := parsedDecls("f.go", src)
			if err != nil {
				t.Fatal(err)
			}
			if diff := compareDecls(&n, ref); diff != "" {
				t.Fatalf("the declarations differ from the reference's: %s", diff)
			}
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

// refFile is what the reference reads of a file: the normaliser's fields,
// found with go/parser.
type refFile struct {
	pkgName   string
	specs     []importSpec
	build     []string
	fileDirs  []string
	linknames []string
	decls     []rawDecl // start and end are unset
	streams   [][]byte
}

// parsedDecls is the reference of the normaliser's reading of declarations
// (normaliser.decls and the file's fields): the declarations, names,
// receivers and identifiers from go/parser's syntax tree; a declaration's
// stream written from go/scanner's tokens between the end of the previous
// declaration (or of the imports) and the semicolon that ends it, the
// directives there included.
func parsedDecls(name string, src []byte) (*refFile, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	r := &refFile{pkgName: f.Name.Name}
	for _, is := range f.Imports {
		path, _ := strconv.Unquote(is.Path.Value)
		spec := importSpec{path: path}
		if is.Name != nil {
			spec.name = is.Name.Name
		}
		r.specs = append(r.specs, spec)
	}

	// The elements of the file: tokens and directives, by offset.
	type elem struct {
		off int
		tok token.Token // COMMENT for a directive
		lit string
	}
	var elems []elem
	file := fset.AddFile(name, fset.Base(), len(src))
	var sc scanner.Scanner
	sc.Init(file, src, nil, scanner.ScanComments)
	for {
		pos, tok, lit := sc.Scan()
		if tok == token.COMMENT {
			if d, ok := directive(lit); ok {
				elems = append(elems, elem{file.Offset(pos), tok, d})
			}
			continue
		}
		if tok == token.EOF {
			break
		}
		elems = append(elems, elem{file.Offset(pos), tok, lit})
	}
	offset := func(p token.Pos) int { return fset.Position(p).Offset }
	// terminator returns the index of the first semicolon at or after off.
	terminator := func(off int) int {
		for i, e := range elems {
			if e.off >= off && e.tok == token.SEMICOLON {
				return i
			}
		}
		return len(elems) - 1
	}
	pkgOff := offset(f.Package)
	headerEnd := offset(f.Name.End())
	var decls []ast.Decl
	for _, d := range f.Decls {
		if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.IMPORT {
			headerEnd = offset(g.End())
			continue
		}
		decls = append(decls, d)
	}
	prev := terminator(headerEnd)
	for i, e := range elems[:prev+1] {
		if e.tok != token.COMMENT {
			continue
		}
		switch {
		case e.off < pkgOff && (strings.HasPrefix(e.lit, "//go:build ") || strings.HasPrefix(e.lit, "// +build")):
			r.build = append(r.build, e.lit)
		default:
			r.fileDirs = append(r.fileDirs, elems[i].lit)
		}
	}
	for _, d := range decls {
		term := terminator(offset(d.End()))
		var b bytes.Buffer
		semi := false
		for _, e := range elems[prev+1 : term+1] {
			if e.tok == token.COMMENT {
				if semi {
					b.WriteString(";\n")
					semi = false
				}
				b.WriteString(e.lit + "\n")
				continue
			}
			if semi && e.tok != token.RPAREN && e.tok != token.RBRACE {
				b.WriteString(";\n")
			}
			semi = e.tok == token.SEMICOLON
			if semi {
				continue
			}
			b.WriteString(e.tok.String())
			if e.lit != "" && e.tok.IsLiteral() {
				b.WriteString(" " + e.lit)
			}
			b.WriteByte('\n')
		}
		b.WriteString(";\n")
		r.streams = append(r.streams, b.Bytes())
		r.decls = append(r.decls, refDecl(d))
		prev = term
	}
	for _, e := range elems[prev+1:] {
		if e.tok == token.COMMENT {
			r.fileDirs = append(r.fileDirs, e.lit)
		}
	}
	for _, e := range elems {
		if e.tok == token.COMMENT && strings.HasPrefix(e.lit, "//go:linkname") {
			target := ""
			if f := strings.Fields(e.lit); len(f) >= 3 {
				target = f[2]
			}
			r.linknames = append(r.linknames, target)
		}
	}
	return r, nil
}

// refDecl reads a declaration's names and identifiers from its syntax.
func refDecl(d ast.Decl) rawDecl {
	var rd rawDecl
	sels := map[*ast.Ident]bool{}
	ast.Inspect(d, func(n ast.Node) bool {
		if s, ok := n.(*ast.SelectorExpr); ok {
			sels[s.Sel] = true
			if x, ok := s.X.(*ast.Ident); ok {
				rd.pairs = append(rd.pairs, x.Name+"."+s.Sel.Name)
			}
			switch s.Sel.Name {
			case "MethodByName", "FieldByName", "FieldByNameFunc":
				rd.byName = true
			}
		}
		return true
	})
	ast.Inspect(d, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok && !sels[id] {
			rd.idents = append(rd.idents, id.Name)
		}
		return true
	})
	rd.idents, rd.pairs = sortUnique(rd.idents), sortUnique(rd.pairs)
	switch d := d.(type) {
	case *ast.FuncDecl:
		rd.tok = token.FUNC
		if d.Recv != nil && len(d.Recv.List) > 0 {
			t := d.Recv.List[0].Type
			for {
				switch x := t.(type) {
				case *ast.StarExpr:
					t = x.X
					continue
				case *ast.ParenExpr:
					t = x.X
					continue
				case *ast.IndexExpr:
					t = x.X
					continue
				case *ast.IndexListExpr:
					t = x.X
					continue
				}
				break
			}
			if id, ok := t.(*ast.Ident); ok {
				rd.recv = id.Name
			}
			rd.method = d.Name.Name
		} else {
			rd.names = []string{d.Name.Name}
			if d.Name.Name == "init" {
				rd.init, rd.effect = true, true
			}
		}
	case *ast.GenDecl:
		rd.tok = d.Tok
		for _, s := range d.Specs {
			switch s := s.(type) {
			case *ast.TypeSpec:
				rd.names = append(rd.names, s.Name.Name)
				rd.alias = rd.alias || s.Assign.IsValid()
			case *ast.ValueSpec:
				for _, n := range s.Names {
					rd.names = append(rd.names, n.Name)
				}
				if d.Tok == token.VAR && len(s.Values) > 0 {
					rd.init = true
					for _, v := range s.Values {
						ast.Inspect(v, func(n ast.Node) bool {
							switch n := n.(type) {
							case *ast.CallExpr, *ast.SendStmt:
								rd.effect = true
							case *ast.UnaryExpr:
								rd.effect = rd.effect || n.Op == token.ARROW
							case *ast.ChanType:
								rd.effect = rd.effect || n.Arrow.IsValid()
							}
							return true
						})
					}
				}
			}
		}
	}
	return rd
}

// sameDecl compares a declaration read by the normaliser with the
// reference's: effect may be read more often than the reference (a
// conservative reading of the tokens), never less.
func sameDecl(got, want rawDecl) bool {
	return got.tok == want.tok && slices.Equal(got.names, want.names) && got.recv == want.recv &&
		got.method == want.method && got.alias == want.alias && got.init == want.init &&
		(got.effect || !want.effect) && got.byName == want.byName &&
		slices.Equal(got.idents, want.idents) && slices.Equal(got.pairs, want.pairs)
}

// compareDecls compares the normaliser's reading of the file it last
// normalised with the reference's, and describes the first difference.
func compareDecls(n *normaliser, ref *refFile) string {
	if n.pkgName != ref.pkgName {
		return fmt.Sprintf("package %q, reference %q", n.pkgName, ref.pkgName)
	}
	if !slices.Equal(n.specs, ref.specs) {
		return fmt.Sprintf("imports %q, reference %q", n.specs, ref.specs)
	}
	if !slices.Equal(n.build, ref.build) || !slices.Equal(n.fileDirs, ref.fileDirs) || !slices.Equal(n.linknames, ref.linknames) {
		return fmt.Sprintf("build %q, directives %q, linknames %q; reference %q, %q, %q", n.build, n.fileDirs, n.linknames, ref.build, ref.fileDirs, ref.linknames)
	}
	if len(n.decls) != len(ref.decls) {
		return fmt.Sprintf("%d declarations, reference %d", len(n.decls), len(ref.decls))
	}
	for i, d := range n.decls {
		got := n.out[d.start:d.end]
		if !bytes.Equal(got, ref.streams[i]) {
			return fmt.Sprintf("declaration %d: stream\n%s\nreference\n%s", i, got, ref.streams[i])
		}
		if !sameDecl(d, ref.decls[i]) {
			return fmt.Sprintf("declaration %d: %+v, reference %+v", i, d, ref.decls[i])
		}
	}
	return ""
}
