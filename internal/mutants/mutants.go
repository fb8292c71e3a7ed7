// Package mutants makes token-level mutants of Go source: the proof that
// code identities are sound (internal/mutants/run, docs/pipeline.md). A
// Site is one place in one file where one of four operators applies — a
// binary or assignment operator flipped, a constant changed, two
// arguments of a call swapped, a statement deleted — found with go/parser
// in the bodies of a file's functions and its variables' initialisers.
// Applying a site edits the file's bytes; whether the mutant compiles is
// the caller's question.
package mutants

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"strconv"
	"strings"
)

// Operator is a kind of mutation.
type Operator string

// The operators.
const (
	FlipOperator   Operator = "flip an operator"
	ChangeConstant Operator = "change a constant"
	SwapArguments  Operator = "swap two arguments"
	DeleteStmt     Operator = "delete a statement"
)

// Operators lists the operators, in the order a run picks among them.
var Operators = []Operator{FlipOperator, ChangeConstant, SwapArguments, DeleteStmt}

// Site is a mutation of one file: its bytes [Start, End) replaced by New.
type Site struct {
	File       string   `json:"file"` // as given to Sites
	Line       int      `json:"line"`
	Op         Operator `json:"op"`
	Start, End int      `json:"-"`
	Old        string   `json:"old"`
	New        string   `json:"new"`
}

// String describes the site: "hv/calc.go:52: flip an operator: < → <=".
func (s Site) String() string {
	return fmt.Sprintf("%s:%d: %s: %s → %s", s.File, s.Line, s.Op, abbreviate(s.Old), abbreviate(s.New))
}

func abbreviate(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 60 {
		return s[:57] + "..."
	}
	return s
}

// Apply returns src with the site's edit.
func (s Site) Apply(src []byte) ([]byte, error) {
	if s.End > len(src) || s.Start > s.End || string(src[s.Start:s.End]) != s.Old {
		return nil, fmt.Errorf("%s: the file is not the one the site was found in", s.File)
	}
	out := make([]byte, 0, len(src)+len(s.New))
	out = append(out, src[:s.Start]...)
	out = append(out, s.New...)
	return append(out, src[s.End:]...), nil
}

// flips are the operators a flip replaces an operator by.
var flips = map[token.Token]token.Token{
	token.ADD: token.SUB, token.SUB: token.ADD, token.MUL: token.QUO, token.QUO: token.MUL,
	token.REM: token.MUL, token.AND: token.OR, token.OR: token.AND, token.XOR: token.AND,
	token.SHL: token.SHR, token.SHR: token.SHL, token.AND_NOT: token.AND,
	token.LAND: token.LOR, token.LOR: token.LAND,
	token.EQL: token.NEQ, token.NEQ: token.EQL, token.LSS: token.LEQ, token.LEQ: token.LSS,
	token.GTR: token.GEQ, token.GEQ: token.GTR,
	token.ADD_ASSIGN: token.SUB_ASSIGN, token.SUB_ASSIGN: token.ADD_ASSIGN,
	token.MUL_ASSIGN: token.QUO_ASSIGN, token.QUO_ASSIGN: token.MUL_ASSIGN,
}

// Sites returns every site of a Go file, by operator.
func Sites(name string, src []byte) (map[Operator][]Site, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	out := map[Operator][]Site{}
	add := func(op Operator, start, end token.Pos, repl string) {
		s, e := fset.Position(start).Offset, fset.Position(end).Offset
		old := string(src[s:e])
		if old == repl {
			return
		}
		out[op] = append(out[op], Site{File: name, Line: fset.Position(start).Line, Op: op, Start: s, End: e, Old: old, New: repl})
	}
	visit := func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.BinaryExpr:
			if to, ok := flips[n.Op]; ok {
				add(FlipOperator, n.OpPos, n.OpPos+token.Pos(len(n.Op.String())), to.String())
			}
		case *ast.AssignStmt:
			if to, ok := flips[n.Tok]; ok {
				add(FlipOperator, n.TokPos, n.TokPos+token.Pos(len(n.Tok.String())), to.String())
			}
		case *ast.BasicLit:
			if repl, ok := changed(n); ok {
				add(ChangeConstant, n.Pos(), n.End(), repl)
			}
		case *ast.CallExpr:
			for i := 0; i+1 < len(n.Args); i++ {
				a, b := n.Args[i], n.Args[i+1]
				as, ae := fset.Position(a.Pos()).Offset, fset.Position(a.End()).Offset
				bs, be := fset.Position(b.Pos()).Offset, fset.Position(b.End()).Offset
				// a, b → b, a: the text from a's start to b's end.
				add(SwapArguments, a.Pos(), b.End(), string(src[bs:be])+string(src[ae:bs])+string(src[as:ae]))
			}
		case *ast.BlockStmt:
			for _, st := range n.List {
				if deletable(st) {
					add(DeleteStmt, st.Pos(), st.End(), ";")
				}
			}
		case *ast.CaseClause:
			for _, st := range n.Body {
				if deletable(st) {
					add(DeleteStmt, st.Pos(), st.End(), ";")
				}
			}
		}
		return true
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Body != nil {
				ast.Inspect(d.Body, visit)
			}
		case *ast.GenDecl:
			if d.Tok != token.VAR {
				continue
			}
			for _, s := range d.Specs {
				for _, v := range s.(*ast.ValueSpec).Values {
					ast.Inspect(v, visit)
				}
			}
		}
	}
	for op := range out {
		slices.SortFunc(out[op], func(a, b Site) int { return a.Start - b.Start })
	}
	return out, nil
}

// changed returns another constant for a literal: an integer plus one, a
// float scaled by 1.5, a string with a character more.
func changed(l *ast.BasicLit) (string, bool) {
	switch l.Kind {
	case token.INT:
		v, err := strconv.ParseInt(strings.ReplaceAll(l.Value, "_", ""), 0, 64)
		if err != nil {
			return "", false
		}
		return strconv.FormatInt(v+1, 10), true
	case token.FLOAT:
		return "(" + l.Value + "*1.5)", true
	case token.STRING:
		if strings.HasPrefix(l.Value, `"`) && len(l.Value) >= 2 {
			return l.Value[:len(l.Value)-1] + `~"`, true
		}
	}
	return "", false
}

// deletable reports whether deleting a statement may still compile: one
// that declares nothing (an assignment, a call, an increment, an if, a
// loop, a break or continue).
func deletable(st ast.Stmt) bool {
	switch st := st.(type) {
	case *ast.AssignStmt:
		return st.Tok != token.DEFINE
	case *ast.ExprStmt, *ast.IncDecStmt, *ast.IfStmt, *ast.ForStmt, *ast.RangeStmt, *ast.BranchStmt, *ast.SwitchStmt:
		return true
	}
	return false
}
