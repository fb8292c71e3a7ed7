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
	"unicode"
	"unicode/utf8"
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
// Tokens come from tokenise, a scanner for the plain files (ASCII
// identifiers, simple number literals, no carriage return, ...) that does not
// allocate, or, for a file it does not handle, from go/scanner, the
// reference: both give the same token stream (see the tests).
type normaliser struct {
	out     []byte   // the normalised stream of the last file normalised
	imports []string // the imports of the files normalised since it was last emptied
	src     []byte   // the last file read
	line    []byte   // scratch for Module.loadInto

	// The file being normalised.
	name     string
	text     []byte
	semi     bool  // a semicolon is pending: it is written unless ")" or "}" follows
	hdr      int   // where the file's header is
	brackets []int // the offsets of the unclosed "(", "[" and "{"

	scanned int // files tokenised by go/scanner (tests)
	sc      scanner.Scanner
	errs    scanner.ErrorList
	errh    scanner.ErrorHandler // adds to errs
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
	if plain(src) {
		n.start(nImports)
		if n.tokenise(src) {
			return nil
		}
	}
	n.start(nImports)
	n.scanned++
	err := n.scan(src)
	if err != nil {
		n.imports = n.imports[:nImports]
	}
	return err
}

func (n *normaliser) start(nImports int) {
	n.out = n.out[:0]
	n.imports = n.imports[:nImports]
	n.semi = false
	n.hdr = hdrPackage
	n.brackets = n.brackets[:0]
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
func add[L ~string | ~[]byte](n *normaliser, out []byte, off int, tok token.Token, lit L) ([]byte, error) {
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
func header[L ~string | ~[]byte](n *normaliser, off int, tok token.Token, lit L) error {
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
		if err := n.importPath(string(lit)); err != nil {
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

func expected[L ~string | ~[]byte](n *normaliser, off int, tok token.Token, lit L, want string) error {
	found := tok.String()
	switch {
	case tok == token.SEMICOLON && string(lit) == "\n":
		found = "newline"
	case tok.IsLiteral():
		found += " " + string(lit)
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

// plain reports whether src is valid UTF-8 without NUL bytes, byte order
// marks or carriage returns (which go/scanner rejects, skips or strips).
func plain(src []byte) bool {
	return bytes.IndexByte(src, 0) < 0 && bytes.IndexByte(src, '\r') < 0 && utf8.Valid(src) && !bytes.Contains(src, []byte("\uFEFF"))
}

// tokenise adds the tokens of src, a plain file, to the stream as go/scanner
// scans them, and reports true; or, if src has a token that tokenise does
// not handle (a non-ASCII identifier, an imaginary, hexadecimal
// floating-point or digit-separated number, a character that is no token,
// ...) or if it does not scan, or its header or brackets are
// wrong, it reports false.
func (n *normaliser) tokenise(src []byte) bool {
	insertSemi := false // as go/scanner: a newline or EOF is a semicolon
	out := n.out
	defer func() { n.out = out }()
	var err error
	i := 0
	for {
		for i < len(src) && (src[i] == ' ' || src[i] == '\t' || src[i] == '\n' && !insertSemi) {
			i++
		}
		if i == len(src) {
			if insertSemi {
				if out, err = add(n, out, i, token.SEMICOLON, "\n"); err != nil {
					return false
				}
			}
			out, err = add(n, out, i, token.EOF, "")
			return err == nil
		}
		start, c := i, src[i]
		var tok token.Token
		semi := false // insertSemi after tok
		switch {
		case c == '\n': // insertSemi
			i++
			tok = token.SEMICOLON
		case word[c] && !('0' <= c && c <= '9'):
			for i++; i < len(src) && word[src[i]]; i++ {
			}
			if i < len(src) && src[i] >= utf8.RuneSelf {
				return false
			}
			tok, semi = token.IDENT, true
			if kw := keyword(src[start:i]); kw != token.IDENT {
				tok = kw
				semi = kw == token.BREAK || kw == token.CONTINUE || kw == token.FALLTHROUGH || kw == token.RETURN
			}
		case '0' <= c && c <= '9':
			i, tok = number(src, i)
			semi = true
		case c == '"':
			i = interpreted(src, i)
			tok, semi = token.STRING, true
		case c == '`':
			if k := bytes.IndexByte(src[i+1:], '`'); k >= 0 {
				i += k + 2
				tok, semi = token.STRING, true
			}
		case c == '\'':
			i = runeLit(src, i)
			tok, semi = token.CHAR, true
		case c == '/' && i+1 < len(src) && src[i+1] == '/':
			if k := bytes.IndexByte(src[i:], '\n'); k >= 0 {
				i += k
			} else {
				i = len(src)
			}
			// Only a comment that may be a directive becomes a string.
			if text := src[start:i]; bytes.HasPrefix(text, []byte("//go:")) || bytes.Contains(text, []byte("+build")) {
				out = n.comment(out, string(text))
			}
			continue // insertSemi unchanged
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			k := bytes.Index(src[i+2:], []byte("*/"))
			if k < 0 {
				return false
			}
			i += k + 4
			// Not a directive. Containing a newline, it ends a line.
			if insertSemi && bytes.IndexByte(src[start:i], '\n') >= 0 {
				if out, err = add(n, out, start, token.SEMICOLON, "\n"); err != nil {
					return false
				}
				insertSemi = false
			}
			continue
		default:
			i, tok, semi = operator(src, i)
		}
		if i < 0 || tok == token.ILLEGAL {
			return false
		}
		if out, err = add(n, out, start, tok, src[start:i]); err != nil {
			return false
		}
		insertSemi = semi
	}
}

// word holds the bytes of ASCII identifiers.
var word = func() (w [256]bool) {
	for c := range w {
		w[c] = 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_'
	}
	return w
}()

// keyword returns the keyword token of an identifier, or IDENT (as
// token.Lookup, without a string).
func keyword(ident []byte) token.Token {
	if len(ident) < 2 || ident[0] < 'b' || ident[0] > 'v' {
		return token.IDENT
	}
	switch string(ident) {
	case "break":
		return token.BREAK
	case "case":
		return token.CASE
	case "chan":
		return token.CHAN
	case "const":
		return token.CONST
	case "continue":
		return token.CONTINUE
	case "default":
		return token.DEFAULT
	case "defer":
		return token.DEFER
	case "else":
		return token.ELSE
	case "fallthrough":
		return token.FALLTHROUGH
	case "for":
		return token.FOR
	case "func":
		return token.FUNC
	case "go":
		return token.GO
	case "goto":
		return token.GOTO
	case "if":
		return token.IF
	case "import":
		return token.IMPORT
	case "interface":
		return token.INTERFACE
	case "map":
		return token.MAP
	case "package":
		return token.PACKAGE
	case "range":
		return token.RANGE
	case "return":
		return token.RETURN
	case "select":
		return token.SELECT
	case "struct":
		return token.STRUCT
	case "switch":
		return token.SWITCH
	case "type":
		return token.TYPE
	case "var":
		return token.VAR
	}
	return token.IDENT
}

// number returns the end and the token of the number literal at src[i] (a
// digit) if it is a decimal integer or floating-point number, or a
// hexadecimal, octal or binary integer, without digit separators, not
// followed by a letter, a digit or "."; or ILLEGAL.
func number(src []byte, i int) (int, token.Token) {
	if src[i] == '0' && i+1 < len(src) {
		base, j := 0, i+2
		switch c := src[i+1]; {
		case c|0x20 == 'x':
			base = 16
		case c|0x20 == 'o':
			base = 8
		case c|0x20 == 'b':
			base = 2
		case '0' <= c && c <= '7': // legacy octal, 0755
			base, j = 8, i+1
		case word[c] && c|0x20 != 'e': // 0_, 08, 0i, ...
			return -1, token.ILLEGAL
		}
		if base != 0 {
			k := j
			for k < len(src) && digitVal(src[k]) < base {
				k++
			}
			if k == j {
				return -1, token.ILLEGAL
			}
			return end(src, k, token.INT)
		}
	}
	digits := func(i int) int {
		for i < len(src) && '0' <= src[i] && src[i] <= '9' {
			i++
		}
		return i
	}
	tok := token.INT
	i = digits(i)
	if i < len(src) && src[i] == '.' {
		tok = token.FLOAT
		i = digits(i + 1)
	}
	if i < len(src) && src[i]|0x20 == 'e' {
		tok = token.FLOAT
		i++
		if i < len(src) && (src[i] == '+' || src[i] == '-') {
			i++
		}
		j := digits(i)
		if j == i {
			return -1, token.ILLEGAL
		}
		i = j
	}
	return end(src, i, tok)
}

// end returns i and tok, or ILLEGAL if the number literal ending at src[i]
// is followed by a letter, a digit, "." or a non-ASCII character (which
// number does not handle, or does not scan).
func end(src []byte, i int, tok token.Token) (int, token.Token) {
	if i < len(src) && (word[src[i]] || src[i] == '.' || src[i] >= utf8.RuneSelf) {
		return -1, token.ILLEGAL
	}
	return i, tok
}

// digitVal returns the value of a hexadecimal digit, or 16.
func digitVal(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c|0x20 && c|0x20 <= 'f':
		return int(c|0x20-'a') + 10
	}
	return 16
}

// interpreted returns the end of the interpreted string literal at src[i],
// or -1 if it does not scan.
func interpreted(src []byte, i int) int {
	for i++; i < len(src); {
		switch src[i] {
		case '"':
			return i + 1
		case '\n':
			return -1
		case '\\':
			if i = escape(src, i+1, '"'); i < 0 {
				return -1
			}
		default:
			i++
		}
	}
	return -1
}

// runeLit returns the end of the rune literal at src[i], or -1 if it does
// not scan.
func runeLit(src []byte, i int) int {
	i++
	if i >= len(src) {
		return -1
	}
	switch c := src[i]; {
	case c == '\\':
		if i = escape(src, i+1, '\''); i < 0 {
			return -1
		}
	case c == '\n' || c == '\'':
		return -1
	default:
		_, size := utf8.DecodeRune(src[i:])
		i += size
	}
	if i >= len(src) || src[i] != '\'' {
		return -1
	}
	return i + 1
}

// escape returns the end of the escape sequence whose backslash precedes
// src[i], in a literal quoted by quote, or -1 if it is not valid (as
// go/scanner's scanEscape).
func escape(src []byte, i int, quote byte) int {
	if i >= len(src) {
		return -1
	}
	var k int
	var base, max uint32
	switch c := src[i]; {
	case c == 'a' || c == 'b' || c == 'f' || c == 'n' || c == 'r' || c == 't' || c == 'v' || c == '\\' || c == quote:
		return i + 1
	case '0' <= c && c <= '7':
		k, base, max = 3, 8, 255
	case c == 'x':
		i++
		k, base, max = 2, 16, 255
	case c == 'u':
		i++
		k, base, max = 4, 16, unicode.MaxRune
	case c == 'U':
		i++
		k, base, max = 8, 16, unicode.MaxRune
	default:
		return -1
	}
	var x uint32
	for ; k > 0; k-- {
		if i >= len(src) {
			return -1
		}
		d := uint32(digitVal(src[i]))
		if d >= base {
			return -1
		}
		x = x*base + d
		i++
	}
	if x > max || 0xD800 <= x && x < 0xE000 {
		return -1
	}
	return i
}

// operator returns the end and the token of the operator or punctuation at
// src[i], and whether a newline after it is a semicolon; or ILLEGAL.
func operator(src []byte, i int) (int, token.Token, bool) {
	at := func(k int) byte {
		if i+k < len(src) {
			return src[i+k]
		}
		return 0
	}
	// op returns tok1 if the next byte is '=', else tok0.
	op := func(tok0, tok1 token.Token) (int, token.Token, bool) {
		if at(1) == '=' {
			return i + 2, tok1, false
		}
		return i + 1, tok0, false
	}
	switch src[i] {
	case '(':
		return i + 1, token.LPAREN, false
	case ')':
		return i + 1, token.RPAREN, true
	case '[':
		return i + 1, token.LBRACK, false
	case ']':
		return i + 1, token.RBRACK, true
	case '{':
		return i + 1, token.LBRACE, false
	case '}':
		return i + 1, token.RBRACE, true
	case ',':
		return i + 1, token.COMMA, false
	case ';':
		return i + 1, token.SEMICOLON, false
	case ':':
		return op(token.COLON, token.DEFINE)
	case '.':
		switch {
		case at(1) == '.' && at(2) == '.':
			return i + 3, token.ELLIPSIS, false
		case '0' <= at(1) && at(1) <= '9': // a number
			return -1, token.ILLEGAL, false
		}
		return i + 1, token.PERIOD, false
	case '+':
		if at(1) == '+' {
			return i + 2, token.INC, true
		}
		return op(token.ADD, token.ADD_ASSIGN)
	case '-':
		if at(1) == '-' {
			return i + 2, token.DEC, true
		}
		return op(token.SUB, token.SUB_ASSIGN)
	case '*':
		return op(token.MUL, token.MUL_ASSIGN)
	case '/':
		return op(token.QUO, token.QUO_ASSIGN)
	case '%':
		return op(token.REM, token.REM_ASSIGN)
	case '^':
		return op(token.XOR, token.XOR_ASSIGN)
	case '<':
		switch {
		case at(1) == '-':
			return i + 2, token.ARROW, false
		case at(1) == '<' && at(2) == '=':
			return i + 3, token.SHL_ASSIGN, false
		case at(1) == '<':
			return i + 2, token.SHL, false
		}
		return op(token.LSS, token.LEQ)
	case '>':
		switch {
		case at(1) == '>' && at(2) == '=':
			return i + 3, token.SHR_ASSIGN, false
		case at(1) == '>':
			return i + 2, token.SHR, false
		}
		return op(token.GTR, token.GEQ)
	case '=':
		return op(token.ASSIGN, token.EQL)
	case '!':
		return op(token.NOT, token.NEQ)
	case '&':
		switch {
		case at(1) == '^' && at(2) == '=':
			return i + 3, token.AND_NOT_ASSIGN, false
		case at(1) == '^':
			return i + 2, token.AND_NOT, false
		case at(1) == '&':
			return i + 2, token.LAND, false
		}
		return op(token.AND, token.AND_ASSIGN)
	case '|':
		if at(1) == '|' {
			return i + 2, token.LOR, false
		}
		return op(token.OR, token.OR_ASSIGN)
	case '~':
		return i + 1, token.TILDE, false
	}
	return -1, token.ILLEGAL, false
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
