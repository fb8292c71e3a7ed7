package codeid

import (
	"bytes"
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

	// The file being normalised.
	name     string
	text     []byte
	semi     bool  // a semicolon is pending: it is written unless ")" or "}" follows
	hdr      int   // where the file's header is
	brackets []int // the offsets of the unclosed "(", "[" and "{"

	sc   scanner.Scanner
	errs scanner.ErrorList
	errh scanner.ErrorHandler // adds to errs
}

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

// comment appends a comment to the stream out if it is a directive.
func (n *normaliser) comment(out []byte, text string) []byte {
	if d, ok := directive(text); ok {
		if n.semi {
			out = append(out, ";\n"...)
			n.semi = false
		}
		out = append(out, d...)
		out = append(out, '\n')
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
	}
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
		out = append(out, ";\n"...)
	}
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
			return nil
		case tok != token.STRING:
			return expected(n, off, tok, lit, "import path")
		}
		if err := n.importPath(lit); err != nil {
			return err
		}
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
