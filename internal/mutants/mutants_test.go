package mutants

import (
	"go/parser"
	"go/scanner"
	"go/token"
	"os"
	"slices"
	"strings"
	"testing"
)

const sample = `package p

import "fmt"

var table = []int{1, 2 + 3}

func f(a, b int, s string) (int, error) {
	x := a * b
	x += 0x10
	if a < b && b != 0 {
		x--
	}
	fmt.Println(s, "done", 1.5)
	for i := range b {
		x = x - i
	}
	return x, nil
}
`

// tokens is the token stream of a file, comments aside.
func tokens(src []byte) []string {
	var s scanner.Scanner
	fset := token.NewFileSet()
	s.Init(fset.AddFile("x.go", -1, len(src)), src, nil, 0)
	var out []string
	for {
		_, tok, lit := s.Scan()
		if tok == token.EOF {
			return out
		}
		out = append(out, tok.String()+lit)
	}
}

// TestSites: every operator finds sites, and every site's mutant parses
// and has other tokens than the original.
func TestSites(t *testing.T) {
	for _, src := range [][]byte{[]byte(sample), mustRead(t, "mutants.go")} {
		sites, err := Sites("x.go", src)
		if err != nil {
			t.Fatal(err)
		}
		for _, op := range Operators {
			if len(sites[op]) == 0 {
				t.Errorf("no site to %s", op)
			}
			for _, s := range sites[op] {
				out, err := s.Apply(src)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := parser.ParseFile(token.NewFileSet(), "x.go", out, 0); err != nil {
					t.Errorf("%s: the mutant does not parse: %v", s, err)
				}
				if slices.Equal(tokens(out), tokens(src)) {
					t.Errorf("%s: the mutant has the same tokens", s)
				}
			}
		}
	}
	sites, _ := Sites("x.go", []byte(sample))
	var got []string
	for _, op := range Operators {
		for _, s := range sites[op] {
			got = append(got, s.String())
		}
	}
	for _, want := range []string{
		"x.go:8: flip an operator: * → /", "x.go:9: flip an operator: += → -=", "x.go:10: flip an operator: && → ||",
		"x.go:9: change a constant: 0x10 → 17", `x.go:13: change a constant: "done" → "done~"`, "x.go:13: change a constant: 1.5 → (1.5*1.5)",
		`x.go:13: swap two arguments: s, "done" → "done", s`, "x.go:11: delete a statement: x-- → ;",
		"x.go:5: flip an operator: + → -",
	} {
		if !slices.Contains(got, want) {
			t.Errorf("no site %q among %s", want, strings.Join(got, "\n"))
		}
	}
	if _, err := (Site{Start: 0, End: 3, Old: "abc"}).Apply([]byte("xyz")); err == nil {
		t.Error("a site applied to another file")
	}
}

func mustRead(t *testing.T, name string) []byte {
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
