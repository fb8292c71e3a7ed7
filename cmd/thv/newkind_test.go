package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// digestSource is a stage kind that is not in the paper: the SHA-256 of
// the tables' standalone document. It lives only in this test.
const digestSource = `// Package digest is the stage kind "digest", a test's.
package digest

import (
	"context"
	"crypto/sha256"
	"fmt"

	"thv/stages/stage"
)

// Kind is the name of the stage kind.
const Kind = "digest"

// The kind's input role and output.
const (
	Document stage.Role       = "document"
	Sum      stage.OutputName = "digest.txt"
)

// Declared is what the kind reads and writes.
var Declared = stage.Declaration{
	Reads:   []stage.Role{Document},
	Outputs: []stage.Output{{Name: Sum, Results: ".", Doc: "the SHA-256 of the tables' standalone document"}},
}

// Run hashes its input.
func Run(ctx context.Context, params []byte, in stage.Inputs) (stage.Outputs, error) {
	if _, err := stage.Start[struct{}](ctx, params); err != nil {
		return nil, err
	}
	b, err := stage.Read(in, Document, func(b []byte) ([]byte, error) { return b, nil })
	if err != nil {
		return nil, err
	}
	return stage.Outputs{string(Sum): fmt.Appendf(nil, "%x\n", sha256.Sum256(b))}, nil
}
`

// withDigestKind writes the digest kind into the module copy in dir: its
// package, its line in protocol/kinds.go and its task in
// protocol/plan.go, reading output (of the tables task) under role.
func withDigestKind(t *testing.T, dir, role, output string) {
	t.Helper()
	pkg := filepath.Join(dir, "stages", "digest")
	if err := os.MkdirAll(pkg, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(pkg, "digest.go"), []byte(digestSource), 0o644); err != nil {
		t.Fatal(err)
	}
	edit := func(file, old, new string) {
		t.Helper()
		path := filepath.Join(dir, file)
		b, _ := os.ReadFile(path)
		s := strings.Replace(string(b), old, new, 1)
		if s == string(b) {
			t.Fatalf("%s: %q not found", file, old)
		}
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	edit("protocol/kinds.go", "\tkind(compare.Kind, compare.Run, compare.Declared),\n",
		"\tkind(compare.Kind, compare.Run, compare.Declared),\n\tkind(digest.Kind, digest.Run, digest.Declared),\n")
	edit("protocol/kinds.go", "\t\"thv/stages/compare\"\n", "\t\"thv/stages/compare\"\n\t\"thv/stages/digest\"\n")
	edit("protocol/plan.go", "\tp.plan.Add(tablesTask)\n",
		"\tp.plan.Add(tablesTask)\n\tp.plan.Add(&pipeline.Task{ID: \"digest\", Kind: digest.Kind, Params: struct{}{}, Deps: []pipeline.Dep{dep(\""+role+"\", tablesTask, \""+output+"\")}})\n")
	edit("protocol/plan.go", "\t\"thv/stages/compare\"\n", "\t\"thv/stages/compare\"\n\t\"thv/stages/digest\"\n")
}

// TestKindReachesResultsByItsDeclaration: a stage kind added as its
// package, its line in protocol/kinds.go and its task in protocol/plan.go
// (docs/architecture.md, "A stage kind") runs in thv repro, and its
// output reaches results/ (with its line in results/README.md and on the
// page) and thv show outputs through its declaration alone. The same
// kind reading an output the tables kind does not declare, or under a
// role it does not declare itself, fails thv dag --check at plan time,
// naming the misspelling, before anything runs.
func TestKindReachesResultsByItsDeclaration(t *testing.T) {
	src := t.TempDir()
	copyModule(t, moduleRoot(t), src)
	withDigestKind(t, src, "document", "all.tex")
	bin := buildThv(t, src)
	dir := t.TempDir()
	if out := thv(t, bin, dir, "dag", "--check"); !strings.Contains(out, "every input of a role its kind declares") {
		t.Errorf("thv dag --check: %s", out)
	}
	thvRepro(t, bin, dir)
	sum, err := os.ReadFile(filepath.Join(dir, "results", "digest.txt"))
	if err != nil || len(sum) != 65 {
		t.Fatalf("results/digest.txt: %q, %v", sum, err)
	}
	const doc = "the SHA-256 of the tables' standalone document"
	for _, f := range []string{"README.md", "index.html"} {
		if b, _ := os.ReadFile(filepath.Join(dir, "results", f)); !strings.Contains(string(b), "digest.txt") || !strings.Contains(strings.ReplaceAll(string(b), "&#39;", "'"), doc) {
			t.Errorf("results/%s does not name digest.txt with what it holds", f)
		}
	}
	if out := thv(t, bin, dir, "show", "outputs", "digest"); !strings.Contains(out, "digest\tdigest.txt\tsha256:") || !strings.Contains(out, doc) {
		t.Errorf("thv show outputs digest:\n%s", out)
	}
	for _, c := range []struct{ role, output, want string }{
		{"document", "all.tx", `reads output "all.tx" of task tables, which its kind tables does not declare`},
		{"documnet", "all.tex", `input role "documnet" is not one its kind digest declares`},
	} {
		bad := t.TempDir()
		copyModule(t, moduleRoot(t), bad)
		withDigestKind(t, bad, c.role, c.output)
		cmd := exec.Command(buildThv(t, bad), "dag", "--check", "--params", tinyParams(t))
		cmd.Dir = t.TempDir()
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), c.want) {
			t.Errorf("role %q, output %q: thv dag --check: %v\n%s", c.role, c.output, err, out)
		}
	}
}
