package codeid

import (
	"go/token"
	"slices"
)

// declare reads the token tok (not a comment) of a file's body — after its
// imports — at offset off and bracket depth depth (before tok opens or
// closes one), once the stream up to tok is written: it splits the body
// into its top-level declarations and notes what each declares and which
// identifiers it names (rawDecl).
//
// A top-level declaration starts with func, var, const or type at depth 0
// and ends with the first semicolon at depth 0 (go/parser's grammar: a
// declaration's head has no semicolon outside brackets). Anything else at
// depth 0 between declarations is a syntax error, as it is for go/parser.
func declare(n *normaliser, depth, off int, tok token.Token, lit string) error {
	if n.cur < 0 {
		switch tok {
		case token.FUNC, token.VAR, token.CONST, token.TYPE:
		case token.EOF:
			n.fileDirs = append(n.fileDirs, n.gapDirs...)
			n.gapDirs = n.gapDirs[:0]
			return nil
		default:
			return expected(n, off, tok, lit, "declaration")
		}
		n.decls = append(n.decls, rawDecl{start: n.gap, tok: tok})
		n.cur, n.ended, n.grouped = len(n.decls)-1, false, false
		n.gapDirs = n.gapDirs[:0]
		n.st = stSpecStart
		if tok == token.FUNC {
			n.st = stFuncName
		}
		return nil
	}
	d := &n.decls[n.cur]
	if tok == token.EOF {
		// The scanner ends a file with a semicolon where one is due, so
		// a declaration still open here lacks its end.
		return n.syntaxError(off, "declaration not ended")
	}
	if n.ended {
		return expected(n, off, tok, lit, "';'")
	}
	if tok == token.SEMICOLON && depth == 0 {
		n.ended = true
		if d.tok == token.FUNC && d.names == nil && d.method == "" {
			return n.syntaxError(off, "function without a name")
		}
		d.idents = sortUnique(d.idents)
		d.pairs = sortUnique(d.pairs)
		return nil
	}

	// Identifiers: x and x.y.
	switch tok {
	case token.IDENT:
		if n.prevTok == token.PERIOD {
			if n.selHead != "" {
				d.pairs = append(d.pairs, n.selHead+"."+lit)
			}
			switch lit {
			case "MethodByName", "FieldByName", "FieldByNameFunc":
				d.byName = true
			}
			n.identHead = false
		} else {
			d.idents = append(d.idents, lit)
			n.identHead = true
		}
		n.lastIdent = lit
	case token.PERIOD:
		n.selHead = ""
		if n.prevTok == token.IDENT && n.identHead {
			n.selHead = n.lastIdent
		}
	}

	// The head: names, receiver, alias, initialiser.
	specDepth := 0
	if n.grouped {
		specDepth = 1
	}
	switch n.st {
	case stFuncName:
		switch tok {
		case token.IDENT:
			d.names = []string{lit}
			if lit == "init" {
				d.init, d.effect = true, true
			}
			n.st = stBody
		case token.LPAREN:
			n.st, n.recvDepth = stRecv, 0
		default:
			n.st = stBody
		}
	case stRecv:
		switch {
		case tok == token.LBRACK:
			n.recvDepth++
		case tok == token.RBRACK:
			n.recvDepth--
		case tok == token.IDENT && n.recvDepth == 0:
			d.recv = lit // the last identifier outside brackets: (p *T[K]) → T
		case tok == token.RPAREN && depth == 1:
			n.st = stMethodName
		}
	case stMethodName:
		if tok == token.IDENT {
			d.method = lit
		}
		n.st = stBody
	case stSpecStart:
		switch {
		case tok == token.LPAREN && depth == 0 && !n.grouped && d.names == nil:
			n.grouped = true
		case tok == token.RPAREN && depth == 1 && n.grouped:
			n.st = stBody // the group's end
		case tok == token.SEMICOLON && depth == specDepth:
		case tok == token.IDENT && depth == specDepth:
			d.names = append(d.names, lit)
			n.st = stSpecNames
		default:
			n.st = stSpecRest
		}
	case stSpecNames:
		switch {
		case tok == token.COMMA && depth == specDepth && d.tok != token.TYPE:
			n.st = stSpecNextName
		case d.tok == token.TYPE && tok == token.ASSIGN && depth == specDepth:
			d.alias = true
			n.st = stSpecRest
		case d.tok == token.TYPE && tok == token.LBRACK && depth == specDepth:
			n.st, n.typeDepth = stTypeParams, depth
		default:
			n.specRest(d, tok, depth, specDepth)
		}
	case stSpecNextName:
		if tok == token.IDENT && depth == specDepth {
			d.names = append(d.names, lit)
			n.st = stSpecNames
		} else {
			n.specRest(d, tok, depth, specDepth)
		}
	case stTypeParams:
		if tok == token.RBRACK && depth == n.typeDepth+1 {
			n.st = stTypeAfterParams
		}
	case stTypeAfterParams:
		if tok == token.ASSIGN && depth == specDepth {
			d.alias = true
		}
		n.specRest(d, tok, depth, specDepth)
	case stSpecRest, stVarValue:
		n.specRest(d, tok, depth, specDepth)
	}
	return nil
}

// specRest reads a token of a spec's type or value: an initialiser makes a
// var declaration run at initialisation (init), one that calls something
// or receives from a channel makes its order matter (effect); a semicolon
// at the group's depth starts the next spec, the group's ")" ends them.
func (n *normaliser) specRest(d *rawDecl, tok token.Token, depth, specDepth int) {
	switch {
	case n.grouped && tok == token.SEMICOLON && depth == specDepth:
		n.st = stSpecStart
		return
	case n.grouped && tok == token.RPAREN && depth == 1:
		n.st = stBody
		return
	}
	if d.tok != token.VAR {
		n.st = stSpecRest
		return
	}
	if n.st != stVarValue {
		n.st = stSpecRest
		if tok == token.ASSIGN && depth == specDepth {
			d.init = true
			n.st = stVarValue
		}
		return
	}
	switch {
	case tok == token.ARROW:
		d.effect = true
	case tok == token.LPAREN:
		switch n.prevTok {
		case token.IDENT, token.RPAREN, token.RBRACK, token.RBRACE:
			d.effect = true // a call (or a conversion)
		}
	}
}

// sortUnique sorts s and removes repeats.
func sortUnique(s []string) []string {
	slices.Sort(s)
	return slices.Compact(s)
}
