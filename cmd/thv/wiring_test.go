package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strings"
	"testing"
)

// TestCommandsOnlyWire: no function of the command line is longer than
// 60 lines; work longer than wiring belongs in a package with tests of
// its own.
func TestCommandsOnlyWire(t *testing.T) {
	const most = 60
	fset := token.NewFileSet()
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			fn, ok := n.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				return true
			}
			if lines := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1; lines > most {
				t.Errorf("%s: %s is %d lines (at most %d: move the work into a package)", fset.Position(fn.Pos()), fn.Name.Name, lines, most)
			}
			return false
		})
	}
}
