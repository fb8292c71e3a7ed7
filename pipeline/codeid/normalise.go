package codeid

import (
	"bytes"
	"cmp"
	"fmt"
	"go/build/constraint"
	"go/scanner"
	"go/token"
	"io"
	"io/fs"
	"strconv"
	"strings"
)

// A normaliser computes the normalised token streams of files (see
// normalise), reusing its buffers from file to file. It is not safe for
// concurrent use: a Module's is guarded by Module.mu.
//
// The files are not parsed: a binary's embedded sources were compiled, so
// they need no syntax check. A file must scan; its package clause and import
// declarations, which give its imports, must be well formed (by go/parser's
// grammar); and its brackets must match, which catches truncated files.
//
// Tokens come from go/scanner, the only Go scanner here: a process that
// would scan the same files again takes their hashes from its binary's memo
// instead (see the package doc).
type normaliser struct {
	out     []byte   // the normalised stream of the last file normalised
	imports []string // the imports of the files normalised since it was last emptied
	src     []byte   // the last file read
	line    []byte   // scratch for writeFileHeader

	// What the last file normalised declares (see declare).
	pkgName   string       // its package clause's name
	specs     []importSpec // its import declarations
	decls     []rawDecl    // its top-level declarations, in order
	build     []string     // its build constraint lines (before the package clause), normalised
	fileDirs  []string     // its other directives outside any declaration
	linknames []string     // the targets of its //go:linkname directives ("" if none is named)

	// The file being normalised.
	name     string
	text     []byte
	semi     bool  // a semicolon is pending: it is written unless ")" or "}" follows
	hdr      int   // where the file's header is
	brackets []int // the offsets of the unclosed "(", "[" and "{"

	sc   scanner.Scanner
	errs scanner.ErrorList
	errh scanner.ErrorHandler // adds to errs

	// The declaration being read (see declare).
	cur       int         // index in decls of the open declaration, or -1
	ended     bool        // the open declaration's closing ";" was read (it is written with the next token)
	gap       int         // where the stream outside declarations resumed: a declaration's directives start there
	gapDirs   []string    // the directives read since gap
	st        declState   // where in the open declaration's head the reader is
	grouped   bool        // the open declaration is a group: "var (", "type (" ...
	recvDepth int         // in a receiver: how many "[" are open
	typeDepth int         // in a type spec's parameters: the depth that ends them
	prevTok   token.Token // the previous token of the file (comments aside)
	lastIdent string      // the last identifier read
	identHead bool        // ... which did not follow a period
	selHead   string      // after "x.", x if it is an identifier that did not follow a period
}

// importSpec is one import of a file: its path and the name it is given
// ("" for the package's own name, "_" or ".").
type importSpec struct{ name, path string }

// rawDecl is one top-level declaration of a file, as the normaliser reads
// it: its stream is out[start:end] — the directives written since the
// previous declaration (or the imports), its tokens and the ";" that ends it
// — and what it declares and names.
type rawDecl struct {
	start, end int
	tok        token.Token // FUNC, VAR, CONST or TYPE
	names      []string    // the names it declares (a method: none)
	recv       string      // a method's receiver base type
	method     string      // a method's name
	alias      bool        // a type declaration declaring an alias (type A = B)
	init       bool        // a var declaration with an initialiser, or a func init
	effect     bool        // an init func, or a var initialiser that calls or receives: its order with others may matter
	idents     []string    // the identifiers that follow no period (sorted, unique once the file is read)
	pairs      []string    // "x.y" for each identifier y after "x." where x follows no period (sorted, unique)
	byName     bool        // it selects MethodByName, FieldByName or FieldByNameFunc: reflection by name
}

// declState is where the reader is in a declaration's head.
type declState uint8

const (
	stBody            declState = iota // past the names: nothing more to learn but identifiers
	stFuncName                         // after "func"
	stRecv                             // in a method's receiver
	stMethodName                       // after the receiver
	stSpecStart                        // at a spec's start (type, var, const)
	stSpecNames                        // after a spec's name
	stSpecNextName                     // after "name,"
	stTypeParams                       // in a type spec's "[...]" after its name
	stTypeAfterParams                  // after a type spec's "[...]"
	stSpecRest                         // in a spec's type or value
	stVarValue                         // in a var spec's initialiser
)

// read returns the contents of the file name of fsys, in a buffer that the
// next read overwrites.
func (n *normaliser) read(fsys fs.FS, name string) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	size := 0
	if info, err := f.Stat(); err == nil && info.Size() < 1<<30 {
		size = int(info.Size())
	}
	buf := n.src[:0]
	if cap(buf) < size+1 { // +1: the final Read finds EOF without growing buf
		buf = make([]byte, 0, size+512)
	}
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		k, err := f.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+k]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, &fs.PathError{Op: "read", Path: name, Err: err}
		}
	}
	n.src = buf
	return buf, nil
}

// normalise sets n.out to the token stream of the file without comments or
// layout (one token per line, a literal followed by its text; automatic
// semicolons written like explicit ones, and none before ")" or "}"; //go:
// directives kept, //go:build in canonical form) and appends its imports to
// n.imports. n.out is overwritten by the next call.
func (n *normaliser) normalise(name string, src []byte) error {
	n.name, n.text = name, src
	nImports := len(n.imports)
	n.out = n.out[:0]
	n.semi = false
	n.hdr = hdrPackage
	n.brackets = n.brackets[:0]
	n.pkgName, n.specs, n.decls = "", n.specs[:0], n.decls[:0]
	n.build, n.fileDirs, n.linknames = n.build[:0], n.fileDirs[:0], n.linknames[:0]
	n.cur, n.ended, n.gap, n.gapDirs = -1, false, 0, n.gapDirs[:0]
	n.prevTok, n.lastIdent, n.identHead, n.selHead = token.ILLEGAL, "", false, ""
	err := n.scan(src)
	if err != nil {
		n.imports = n.imports[:nImports]
	}
	return err
}

// scan tokenises src with go/scanner.
func (n *normaliser) scan(src []byte) error {
	if n.errh == nil {
		n.errh = func(pos token.Position, msg string) { n.errs.Add(pos, msg) }
	}
	n.errs.Reset()
	file := token.NewFileSet().AddFile(n.name, -1, len(src))
	n.sc.Init(file, src, n.errh, scanner.ScanComments)
	var err error
	out := n.out
	for {
		pos, tok, lit := n.sc.Scan()
		if tok == token.COMMENT {
			out = n.comment(out, lit)
			continue
		}
		if out, err = add(n, out, file.Offset(pos), tok, lit); err != nil || tok == token.EOF {
			break
		}
	}
	n.out = out
	if n.errs.Len() > 0 { // the scanner's errors come first: they explain the others
		return fmt.Errorf("%s does not scan (fix the file): %w", n.name, n.errs.Err())
	}
	return err
}

// comment appends a comment to the stream out if it is a directive, and
// files it: a build constraint before the package clause is the file's;
// one between declarations goes with the next declaration (as //go:noinline
// goes with its function), and is the file's if no declaration follows.
func (n *normaliser) comment(out []byte, text string) []byte {
	d, ok := directive(text)
	if !ok {
		return out
	}
	if n.semi {
		out = n.flushSemi(out)
	}
	out = append(out, d...)
	out = append(out, '\n')
	switch {
	case n.hdr == hdrPackage && (strings.HasPrefix(d, "//go:build ") || strings.HasPrefix(d, "// +build")):
		n.build = append(n.build, d)
	case n.hdr == hdrPackage:
		n.fileDirs = append(n.fileDirs, d)
	case n.cur < 0:
		n.gapDirs = append(n.gapDirs, d)
	}
	if strings.HasPrefix(d, "//go:linkname") {
		target := ""
		if f := strings.Fields(d); len(f) >= 3 {
			target = f[2]
		}
		n.linknames = append(n.linknames, target)
	}
	return out
}

// flushSemi writes the pending semicolon to out. A semicolon that ends a
// declaration ends its stream; the stream outside declarations resumes
// after it.
func (n *normaliser) flushSemi(out []byte) []byte {
	out = append(out, ";\n"...)
	n.semi = false
	if len(n.brackets) > 0 {
		return out
	}
	if n.cur >= 0 && n.ended {
		n.decls[n.cur].end = len(out)
		n.cur, n.ended = -1, false
	}
	if n.cur < 0 { // directives before this point are in the header
		n.fileDirs = append(n.fileDirs, n.gapDirs...)
		n.gap, n.gapDirs = len(out), n.gapDirs[:0]
	}
	return out
}

// add appends the token tok (not a comment) at offset off, its literal text
// lit (that of a semicolon is ";", or "\n" if it was inserted), to the stream
// out, and checks the file's header and brackets. (The stream is passed
// around rather than kept in n, which would cost a write barrier per token
// during garbage collection.)
func add(n *normaliser, out []byte, off int, tok token.Token, lit string) ([]byte, error) {
	if n.hdr != hdrBody || tok == token.IMPORT {
		if err := header(n, off, tok, lit); err != nil {
			return out, err
		}
		if tok == token.IMPORT { // the directives before it are the file's
			n.fileDirs = append(n.fileDirs, n.gapDirs...)
			n.gapDirs = n.gapDirs[:0]
		}
	}
	depth := len(n.brackets)
	switch tok {
	case token.LPAREN, token.LBRACK, token.LBRACE:
		n.brackets = append(n.brackets, off)
	case token.RPAREN, token.RBRACK, token.RBRACE:
		k := len(n.brackets) - 1
		if k < 0 {
			return out, n.syntaxError(off, tok.String()+" closes nothing")
		}
		if open := n.brackets[k]; closing(n.text[open]) != tok {
			return out, n.syntaxError(off, fmt.Sprintf("%s does not close the %c at %s", tok, n.text[open], n.position(open)))
		}
		n.brackets = n.brackets[:k]
	case token.EOF:
		if k := len(n.brackets) - 1; k >= 0 {
			return out, n.syntaxError(n.brackets[k], fmt.Sprintf("%c is not closed", n.text[n.brackets[k]]))
		}
	}

	// A semicolon may be omitted before a closing ")" or "}", so one is
	// written only when the next token is neither: "{ return x }" and
	// "{\n\treturn x\n}" are the same code.
	if n.semi && tok != token.RPAREN && tok != token.RBRACE {
		out = n.flushSemi(out)
	}
	if n.hdr == hdrBody {
		if err := declare(n, depth, off, tok, lit); err != nil {
			return out, err
		}
	} else if tok == token.EOF {
		n.fileDirs = append(n.fileDirs, n.gapDirs...)
	}
	n.prevTok = tok
	n.semi = tok == token.SEMICOLON
	if !n.semi && tok != token.EOF {
		out = append(out, tok.String()...) // a constant string
		if len(lit) > 0 && tok.IsLiteral() {
			out = append(out, ' ')
			out = append(out, lit...)
		}
		out = append(out, '\n')
	}
	return out, nil
}

func closing(open byte) token.Token {
	switch open {
	case '(':
		return token.RPAREN
	case '[':
		return token.RBRACK
	}
	return token.RBRACE
}

// States of a file's header (package clause and import declarations), by
// go/parser's grammar (parseFile, parseGenDecl, parseImportSpec, expectSemi).
const (
	hdrPackage    = iota // before "package"
	hdrName              // after "package"
	hdrNameSemi          // after the package name
	hdrDecl              // at a top-level declaration: "import", or the body
	hdrImport            // after "import"
	hdrPath              // after "import name"
	hdrSemi              // after "import [name] path"
	hdrGroup             // in "import (", at a spec or ")"
	hdrGroupPath         // in "import (", after a name
	hdrGroupSemi         // in "import (", after a spec
	hdrGroupClose        // after "import ( ... )"
	hdrBody              // after the imports
)

// header moves n.hdr over the token tok (not a comment) at offset off,
// appending the import paths to n.imports.
func header(n *normaliser, off int, tok token.Token, lit string) error {
	switch hdr := n.hdr; hdr {
	case hdrPackage:
		if tok != token.PACKAGE {
			return expected(n, off, tok, lit, "'package'")
		}
		n.hdr = hdrName
	case hdrName:
		if tok != token.IDENT {
			return expected(n, off, tok, lit, "package name")
		}
		n.pkgName = lit
		n.hdr = hdrNameSemi
	case hdrNameSemi, hdrSemi, hdrGroupClose:
		if tok != token.SEMICOLON {
			return expected(n, off, tok, lit, "';'")
		}
		n.hdr = hdrDecl
	case hdrDecl:
		n.hdr = hdrBody
		if tok == token.IMPORT {
			n.hdr = hdrImport
		}
	case hdrImport, hdrGroup, hdrPath, hdrGroupPath:
		group := hdr == hdrGroup || hdr == hdrGroupPath
		switch {
		case tok == token.LPAREN && hdr == hdrImport:
			n.hdr = hdrGroup
			return nil
		case tok == token.RPAREN && hdr == hdrGroup:
			n.hdr = hdrGroupClose
			return nil
		case (tok == token.IDENT || tok == token.PERIOD) && (hdr == hdrImport || hdr == hdrGroup): // import name, _ or .
			n.hdr = hdrPath
			if group {
				n.hdr = hdrGroupPath
			}
			n.specs = append(n.specs, importSpec{name: cmp.Or(lit, ".")})
			return nil
		case tok != token.STRING:
			return expected(n, off, tok, lit, "import path")
		}
		if err := n.importPath(lit); err != nil {
			return err
		}
		if hdr == hdrImport || hdr == hdrGroup { // no name
			n.specs = append(n.specs, importSpec{})
		}
		n.specs[len(n.specs)-1].path = n.imports[len(n.imports)-1]
		n.hdr = hdrSemi
		if group {
			n.hdr = hdrGroupSemi
		}
	case hdrGroupSemi:
		switch tok {
		case token.SEMICOLON:
			n.hdr = hdrGroup
		case token.RPAREN:
			n.hdr = hdrGroupClose
		default:
			return expected(n, off, tok, lit, "';' or ')'")
		}
	case hdrBody:
		if tok == token.IMPORT {
			return n.syntaxError(off, "imports must appear before other declarations")
		}
	}
	return nil
}

// importPath appends the import path of the string literal lit to
// n.imports.
func (n *normaliser) importPath(lit string) error {
	imp, err := strconv.Unquote(lit)
	if err != nil {
		return fmt.Errorf("%s: bad import %s: %w", n.name, lit, err)
	}
	switch {
	case imp == "C":
		return fmt.Errorf("%s uses cgo (import \"C\"): the code identity does not describe the C toolchain or the cgo preamble; keep cgo out of the fingerprinted packages", n.name)
	case imp == "" || strings.HasPrefix(imp, ".") || strings.HasPrefix(imp, "/"):
		return fmt.Errorf("%s: import %q is not a module import path", n.name, imp)
	}
	n.imports = append(n.imports, imp)
	return nil
}

func expected(n *normaliser, off int, tok token.Token, lit, want string) error {
	found := tok.String()
	switch {
	case tok == token.SEMICOLON && lit == "\n":
		found = "newline"
	case tok.IsLiteral():
		found += " " + lit
	}
	return n.syntaxError(off, "expected "+want+", found "+found)
}

func (n *normaliser) syntaxError(off int, msg string) error {
	return fmt.Errorf("%s does not parse (fix the file): %s:%s: %s", n.name, n.name, n.position(off), msg)
}

// position returns "line:column" (in bytes, from 1) of an offset.
func (n *normaliser) position(off int) string {
	before := n.text[:min(off, len(n.text))]
	return fmt.Sprintf("%d:%d", 1+bytes.Count(before, []byte{'\n'}), len(before)-bytes.LastIndexByte(before, '\n'))
}

// directive returns the normalised form of a comment that changes what is
// compiled (//go:..., and legacy // +build lines), or false.
func directive(comment string) (string, bool) {
	comment = strings.TrimRight(comment, " \t\r\n")
	switch {
	case constraint.IsGoBuild(comment):
		if expr, err := constraint.Parse(comment); err == nil {
			return "//go:build " + expr.String(), true
		}
		return comment, true
	case strings.HasPrefix(comment, "//go:"):
		return comment, true
	case constraint.IsPlusBuild(comment):
		// IsPlusBuild also accepts "//+build" (no space): cut the marker,
		// not a fixed-length prefix.
		rest := strings.TrimPrefix(strings.TrimSpace(strings.TrimPrefix(comment, "//")), "+build")
		return "// +build " + strings.Join(strings.Fields(rest), " "), true
	}
	return "", false
}
