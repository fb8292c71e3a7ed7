package protocol

import (
	"bytes"
	"context"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"thv"
	"thv/algos"
	"thv/pipeline"
	"thv/pipeline/codeid"
	"thv/protocol/config"
)

// Tests of code identities on the paper's code: what an edit of the
// sources changes, and what it must not.

// sourcesWith copies the embedded sources with edits: a file → its new
// content, "" to delete it; files may be added.
func sourcesWith(edits map[string]string) fstest.MapFS {
	m := maps.Clone(embeddedSources())
	for name, content := range edits {
		if content == "" {
			delete(m, name)
		} else {
			m[name] = &fstest.MapFile{Data: []byte(content)}
		}
	}
	return m
}

// embeddedSources is thv.Sources as a map.
var embeddedSources = sync.OnceValue(func() fstest.MapFS {
	m := fstest.MapFS{}
	fs.WalkDir(thv.Sources, ".", func(name string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := fs.ReadFile(thv.Sources, name)
			m[name] = &fstest.MapFile{Data: b}
		}
		return err
	})
	return m
})

// codeLabel names the code of a task: its kind and roots.
func codeLabel(t *pipeline.Task) string { return t.Kind + " " + strings.Join(t.Roots, ",") }

// quickCode returns one task of every code label of the quick profile's
// plan (every kind, and the run kind with each algorithm's constructor).
func quickCode(t *testing.T) map[string]*pipeline.Task {
	t.Helper()
	cfg, err := config.Load(config.LoadOptions{Profile: "quick"})
	if err != nil {
		t.Fatal(err)
	}
	plan, err := NewPlan(cfg)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*pipeline.Task{}
	planned := map[string]bool{}
	for _, task := range plan.Tasks {
		out[codeLabel(task)] = task
		planned[task.Kind] = true
	}
	k, err := Kinds()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range k.Names() { // collect and figures are added as the plan unfolds
		if !planned[name] {
			out[name+" "] = &pipeline.Task{Kind: name}
		}
	}
	if len(out) < 15 {
		t.Fatalf("only %d code labels in the quick profile", len(out))
	}
	return out
}

// identities returns the code identity digest of every label.
func identities(t *testing.T, k *pipeline.Kinds, labels map[string]*pipeline.Task) map[string]string {
	t.Helper()
	out := map[string]string{}
	for label, task := range labels {
		id, err := k.Identity(task.Kind, task.Roots)
		if err != nil {
			t.Fatalf("%s: %v", label, err)
		}
		out[label] = id.Digest
	}
	return out
}

// changedLabels lists the labels whose identity differs.
func changedLabels(before, after map[string]string) []string {
	var out []string
	for label, d := range before {
		if after[label] != d {
			out = append(out, label)
		}
	}
	slices.Sort(out)
	return out
}

// scratchModule copies what building the science packages needs (go.mod,
// go.sum and the embedded trees) into a new directory.
func scratchModule(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{"go.mod", "go.sum"} {
		b, err := os.ReadFile(filepath.Join("..", f)) // the module root
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, f), b, 0o644)
	}
	err := fs.WalkDir(thv.Sources, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(thv.Sources, name)
		if err != nil {
			return err
		}
		os.MkdirAll(filepath.Join(dir, path.Dir(name)), 0o755)
		return os.WriteFile(filepath.Join(dir, name), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// goFile is a parsed Go file of a scratch module.
type goFile struct {
	name string // module-relative
	src  []byte
	fset *token.FileSet
	f    *ast.File
}

func readGoFile(t *testing.T, dir, name string) *goFile {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	return &goFile{name, src, fset, f}
}

// declText returns a top-level declaration's source, its doc comment
// (and directives) included.
func (g *goFile) declText(d ast.Decl) (start, end int) {
	pos := d.Pos()
	switch d := d.(type) {
	case *ast.FuncDecl:
		if d.Doc != nil {
			pos = d.Doc.Pos()
		}
	case *ast.GenDecl:
		if d.Doc != nil {
			pos = d.Doc.Pos()
		}
	}
	return g.fset.Position(pos).Offset, g.fset.Position(d.End()).Offset
}

// decls returns the file's declarations but its imports.
func (g *goFile) decls() []ast.Decl {
	var out []ast.Decl
	for _, d := range g.f.Decls {
		if gd, ok := d.(*ast.GenDecl); ok && gd.Tok == token.IMPORT {
			continue
		}
		out = append(out, d)
	}
	return out
}

// header is the file's source up to the end of its imports.
func (g *goFile) header() string {
	end := g.fset.Position(g.f.Name.End()).Offset
	for _, d := range g.f.Decls {
		if gd, ok := d.(*ast.GenDecl); ok && gd.Tok == token.IMPORT {
			end = g.fset.Position(gd.End()).Offset
		}
	}
	return string(g.src[:end])
}

// moveDecls moves the declarations of file from that pick selects into
// file to (created with from's package clause, build constraint aside),
// and leaves both files with the imports they use: a refactoring that
// compiles (checked by the caller).
func moveDecls(t *testing.T, dir, from, to string, pick func(i int, d ast.Decl) bool) {
	t.Helper()
	g := readGoFile(t, dir, from)
	var moved []string
	rest := string(g.src)
	decls := g.decls()
	for i := len(decls) - 1; i >= 0; i-- { // from the end: offsets stay true
		if !pick(i, decls[i]) {
			continue
		}
		s, e := g.declText(decls[i])
		moved = append([]string{string(g.src[s:e])}, moved...)
		rest = rest[:s] + rest[e:]
	}
	if len(moved) == 0 {
		t.Fatalf("%s: nothing to move", from)
	}
	var imports []string
	for _, is := range g.f.Imports {
		imports = append(imports, "\t"+importText(is))
	}
	target := "package " + g.f.Name.Name + "\n\nimport (\n" + strings.Join(imports, "\n") + "\n)\n\n" + strings.Join(moved, "\n\n") + "\n"
	if _, err := os.Stat(filepath.Join(dir, to)); err == nil {
		t.Fatalf("%s exists", to)
	}
	writeGo(t, dir, from, pruneImports(t, dir, rest))
	writeGo(t, dir, to, pruneImports(t, dir, target))
}

func importText(is *ast.ImportSpec) string {
	if is.Name != nil {
		return is.Name.Name + " " + is.Path.Value
	}
	return is.Path.Value
}

// pruneImports drops the imports a file's code does not name.
func pruneImports(t *testing.T, dir, src string) string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "x.go", src, parser.ParseComments)
	if err != nil {
		t.Fatalf("%v\n%s", err, src)
	}
	used := map[string]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		if s, ok := n.(*ast.SelectorExpr); ok {
			if x, ok := s.X.(*ast.Ident); ok {
				used[x.Name] = true
			}
		}
		return true
	})
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.IMPORT {
			continue
		}
		var keep []ast.Spec
		for _, s := range gd.Specs {
			is := s.(*ast.ImportSpec)
			p, _ := strconv.Unquote(is.Path.Value)
			name := packageName(t, dir, p)
			if is.Name != nil {
				name = is.Name.Name
			}
			if name == "_" || name == "." || used[name] {
				keep = append(keep, s)
			}
		}
		gd.Specs = keep
	}
	var b bytes.Buffer
	if err := format.Node(&b, fset, f); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// packageName is the name of the package an import path names.
func packageName(t *testing.T, dir, importPath string) string {
	if rest, ok := strings.CutPrefix(importPath, "thv/"); ok {
		entries, _ := os.ReadDir(filepath.Join(dir, rest))
		for _, e := range entries {
			if strings.HasSuffix(e.Name(), ".go") && !strings.HasSuffix(e.Name(), "_test.go") {
				return readGoFile(t, dir, filepath.Join(rest, e.Name())).f.Name.Name
			}
		}
	}
	if name, ok := thv.ThirdPartyNames[importPath]; ok {
		return name
	}
	elems := strings.Split(importPath, "/")
	if last := elems[len(elems)-1]; len(elems) > 1 && len(last) > 1 && last[0] == 'v' && strings.Trim(last[1:], "0123456789") == "" {
		return elems[len(elems)-2]
	}
	return elems[len(elems)-1]
}

func writeGo(t *testing.T, dir, name, src string) {
	t.Helper()
	out, err := format.Source([]byte(src))
	if err != nil {
		t.Fatalf("%s: %v\n%s", name, err, src)
	}
	if err := os.WriteFile(filepath.Join(dir, name), out, 0o644); err != nil {
		t.Fatal(err)
	}
}

// goBuild builds packages of a scratch module: a refactoring must compile.
func goBuild(t *testing.T, dir string, pkgs ...string) {
	t.Helper()
	cmd := exec.Command("go", append([]string{"build", "-o", os.DevNull}, pkgs...)...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s in the scratch module: %v\n%s", strings.Join(pkgs, " "), err, out)
	}
}

// declNamed picks the declarations that declare name, or are methods of
// the type name.
func declNamed(names ...string) func(int, ast.Decl) bool {
	return func(_ int, d ast.Decl) bool {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv != nil {
				t := d.Recv.List[0].Type
				if s, ok := t.(*ast.StarExpr); ok {
					t = s.X
				}
				id, ok := t.(*ast.Ident)
				return ok && slices.Contains(names, id.Name)
			}
			return slices.Contains(names, d.Name.Name)
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					if slices.Contains(names, s.Name.Name) {
						return true
					}
				case *ast.ValueSpec:
					for _, n := range s.Names {
						if slices.Contains(names, n.Name) {
							return true
						}
					}
				}
			}
		}
		return false
	}
}

// TestRefactorsChangeNoKey: in a scratch copy of the module, refactorings
// that compile to the same program — a declaration moved to another file,
// a file renamed, a file split, declarations reordered, a function that
// nothing calls added — change the code identity of no task of the quick
// profile. A task's key is the hash of its kind, its code identity, its
// parameters and its inputs' digests; with every identity and parameter
// the same, every task of a pass has the key it had (its inputs are the
// outputs of tasks whose keys are the same): no key of the profile
// changes.
func TestRefactorsChangeNoKey(t *testing.T) {
	labels := quickCode(t)
	base, err := Kinds()
	if err != nil {
		t.Fatal(err)
	}
	want := identities(t, base, labels)
	for _, tc := range []struct {
		name    string
		pkg     string // the package to build
		reach   string // a declaration moved that tasks reach: the refactoring is not of dead code
		change  func(t *testing.T, dir string)
		changes bool // a control: this one does change code
	}{
		{"declaration moved to another file", "./algos", "thv/algos.Crowding.Distance", func(t *testing.T, dir string) {
			moveDecls(t, dir, "algos/crowding.go", "algos/nsga2.go", declNamed("Crowding"))
		}, false},
		{"file renamed", "./hv", "thv/hv.Calculator.Volume", func(t *testing.T, dir string) {
			if err := os.Rename(filepath.Join(dir, "hv/calc.go"), filepath.Join(dir, "hv/calculator.go")); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"file split", "./algos", "thv/algos.Layers.Peel", func(t *testing.T, dir string) {
			// The second half of layers.go into layers_more.go, which
			// sorts right after it: its initialisations keep their order.
			half := len(readGoFile(t, dir, "algos/layers.go").decls()) / 2
			moveDecls(t, dir, "algos/layers.go", "algos/layers_more.go", func(i int, _ ast.Decl) bool { return i >= half })
		}, false},
		{"declarations reordered", "./envs", "thv/envs.Bandit.Pull", func(t *testing.T, dir string) {
			g := readGoFile(t, dir, "envs/bandit.go")
			var texts []string
			for _, d := range g.decls() {
				s, e := g.declText(d)
				texts = append([]string{string(g.src[s:e])}, texts...)
			}
			writeGo(t, dir, "envs/bandit.go", g.header()+"\n\n"+strings.Join(texts, "\n\n")+"\n")
		}, false},
		{"function nothing calls added", "./algos", "thv/algos.Crowding", func(t *testing.T, dir string) {
			f := filepath.Join(dir, "algos/layers.go")
			src, _ := os.ReadFile(f)
			os.WriteFile(f, append(src, "\n// unusedHelper is called by nothing.\nfunc unusedHelper(x float64) float64 { return x * 2 }\n"...), 0o644)
		}, false},
		// The control: the same move into a file that only linux builds
		// changes the program on other systems, and the identities.
		{"declaration moved to a file with a build constraint", "./algos", "thv/algos.Crowding.Distance", func(t *testing.T, dir string) {
			moveDecls(t, dir, "algos/crowding.go", "algos/crowding_linux.go", declNamed("Crowding"))
			os.WriteFile(filepath.Join(dir, "algos/crowding_other.go"), []byte("//go:build !linux\n\npackage algos\n\ntype Crowding struct{}\n"), 0o644)
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := scratchModule(t)
			tc.change(t, dir)
			goBuild(t, dir, tc.pkg)
			k, err := KindsFrom(os.DirFS(dir))
			if err != nil {
				t.Fatal(err)
			}
			got := identities(t, k, labels)
			if changed := changedLabels(want, got); len(changed) > 0 != tc.changes {
				t.Errorf("the identities of %q changed; want changes: %v", changed, tc.changes)
			}
			reached := false
			for _, task := range labels {
				names, err := reachedBy(k, task)
				if err != nil {
					t.Fatal(err)
				}
				reached = reached || slices.Contains(names, tc.reach)
			}
			if !reached {
				t.Errorf("no task reaches %s: the refactoring moved code no identity covers", tc.reach)
			}
		})
	}
}

// reachedBy lists the declarations the code of a task reaches.
func reachedBy(k *pipeline.Kinds, task *pipeline.Task) ([]string, error) {
	m, ok := k.Code().(*codeid.Module)
	if !ok {
		return nil, fmt.Errorf("the kinds' code source is a %T", k.Code())
	}
	kind, err := k.Lookup(task.Kind)
	if err != nil {
		return nil, err
	}
	return m.Reached(append([]string{kind.Entry}, task.Roots...)...)
}

// algoRoot is the code root of an algorithm's runs.
func algoRoot(t *testing.T, name string) string {
	spec, err := algos.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return pipeline.EntryOf(spec.New)
}

// TestEditOfParetoUCBDivCode: the greedy farthest-point choice is code that
// only ParetoUCB-Div runs. Editing it changes the code identity of
// ParetoUCB-Div's runs and of no other task of the quick profile, not even
// the runs of ParetoUCB-Div's three siblings, whose code it shares. A pass
// of this test binary (whose code the edit does not change) on a protocol
// of ParetoUCB-Div, ParetoUCB and ScalarUCB reruns exactly ParetoUCB-Div's
// runs, which give the bytes they gave; cmd/thv's
// TestRebuiltParetoUCBDivRerunsItsUsers runs a thv built with the edit.
func TestEditOfParetoUCBDivCode(t *testing.T) {
	k, err := KindsFrom(sourcesWith(editedFarthest(t)))
	if err != nil {
		t.Fatal(err)
	}
	base, err := Kinds()
	if err != nil {
		t.Fatal(err)
	}
	labels := quickCode(t)
	root := algoRoot(t, "ParetoUCB-Div")
	for _, sibling := range []string{"ParetoUCB", "ParetoUCB+", "ParetoUCB-Crowd"} {
		if r := algoRoot(t, sibling); r == root || labels["run "+r] == nil {
			t.Fatalf("%s's runs have the code root %s (ParetoUCB-Div's: %s), or none in the quick profile", sibling, r, root)
		}
	}
	if changed := changedLabels(identities(t, base, labels), identities(t, k, labels)); !slices.Equal(changed, []string{"run " + root}) {
		t.Fatalf("the edit changed the identities of %q, want only ParetoUCB-Div's runs (run %s)", changed, root)
	}
	const choice = "thv/algos/paretodiv.farthest.Choose"
	names, err := reachedBy(k, labels["run "+root])
	if err != nil || !slices.Contains(names, choice) {
		t.Fatalf("ParetoUCB-Div's runs do not reach the farthest-point choice: %v", err)
	}

	dir := t.TempDir()
	params := filepath.Join(dir, "div.yaml")
	b, err := os.ReadFile("testdata/tiny.yaml")
	if err != nil {
		t.Fatal(err)
	}
	y := string(b)
	i, j := strings.Index(y, "algorithms:\n"), strings.Index(y, "statistics:\n")
	y = y[:i] + "algorithms:\n  - {name: ParetoUCB-Div, eta: [0.1, 1.0]}\n  - {name: ParetoUCB}\n  - {name: ScalarUCB, eta: [0.1, 1.0]}\n" + y[j:]
	if err := os.WriteFile(params, []byte(y), 0o644); err != nil {
		t.Fatal(err)
	}
	open := func(kinds *pipeline.Kinds) *Project {
		p, err := Open(Options{LoadOptions: config.LoadOptions{ParamsFile: params}, Dir: dir, StoreDir: filepath.Join(dir, "store"), Kinds: kinds})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	repro(t, open(nil), pipeline.Options{})
	st, err := open(k).Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	for _, r := range st.Results {
		div := r.Task.Kind == "run" && strings.Contains(r.Task.ID, "/ParetoUCB-Div/")
		switch {
		case div && (r.Status != pipeline.Stale || !strings.HasPrefix(r.Reason, "code changed in "+choice)):
			t.Errorf("%s: %s %q, want stale: code changed in %s", r.Task.ID, r.Status, r.Reason, choice)
		case div:
			want++
		case r.Status == pipeline.Stale:
			t.Errorf("%s: stale (%s)", r.Task.ID, r.Reason)
		}
	}
	if want == 0 {
		t.Fatal("no run of ParetoUCB-Div in the protocol")
	}
	// The final runs that keep a trajectory (for the figures) join the
	// plan as it unfolds: ParetoUCB-Div's run all, and nothing else.
	rep := repro(t, open(k), pipeline.Options{})
	for _, r := range rep.Results {
		div := r.Task.Kind == "run" && strings.Contains(r.Task.ID, "/ParetoUCB-Div/")
		if executed := r.Status == pipeline.Executed; executed != div {
			t.Errorf("%s: executed = %v, want %v (only ParetoUCB-Div's runs)", r.Task.ID, executed, div)
		}
	}
}

// editedFarthest is a behavioural edit of ParetoUCB-Div's farthest-point
// choice: its first pick is the layer's last member, not the largest Σ U.
func editedFarthest(t *testing.T) map[string]string {
	t.Helper()
	const file = "algos/paretodiv/paretodiv.go"
	src, err := fs.ReadFile(thv.Sources, file)
	if err != nil {
		t.Fatal(err)
	}
	const from = "best = f.order.First(layer)"
	if !bytes.Contains(src, []byte(from)) {
		t.Fatalf("%s no longer has %q: update the edit", file, from)
	}
	return map[string]string{file: strings.Replace(string(src), from, "best = len(layer) - 1", 1)}
}

// noinline prepends //go:noinline to the first declaration of file that
// starts with decl ("func (p *Policy) Select("): a change of the
// declaration's code (a directive is code) that changes no behaviour.
func noinline(t *testing.T, file, decl string) map[string]string {
	t.Helper()
	src := source(t, file)
	if !strings.Contains(src, "\n"+decl) {
		t.Fatalf("%s has no %q", file, decl)
	}
	return map[string]string{file: strings.Replace(src, "\n"+decl, "\n//go:noinline\n"+decl, 1)}
}

// TestCodeChangeRerunsOnlyThatFamily edits the randomk family's source: a
// comment, or a function that nothing calls, reruns nothing; a change of
// the code RandomK runs reruns RandomK's runs only, saying which
// declaration changed (and, as it changes no behaviour, the runs yield
// the same bytes: their collect tasks are cut off early).
func TestCodeChangeRerunsOnlyThatFamily(t *testing.T) {
	dir := t.TempDir()
	repro(t, tiny(t, dir, nil), pipeline.Options{})
	const file = "algos/randomk/randomk.go"
	src := source(t, file)
	for what, edit := range map[string]string{
		"a comment":                src + "\n// A comment changes nothing.\n",
		"a function nothing calls": src + "\nfunc unusedHelper() int { return 42 }\n",
	} {
		if rep := repro(t, tiny(t, dir, kindsFrom(t, map[string]string{file: edit})), pipeline.Options{}); rep.Executed != 0 {
			t.Fatalf("adding %s reran %v", what, executedIDs(rep))
		}
	}
	edited := kindsFrom(t, noinline(t, file, "func (p *Policy) Select("))
	st, err := tiny(t, dir, edited).Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	for _, r := range st.Results {
		randomK := r.Task.Kind == "run" && strings.Contains(r.Task.ID, "/RandomK/")
		switch {
		case randomK && r.Reason != "code changed in thv/algos/randomk.Policy.Select":
			t.Fatalf("%s: %s, reason %q", r.Task.ID, r.Status, r.Reason)
		case randomK:
			want++
		case r.Status == pipeline.Stale:
			t.Errorf("%s: stale (%s)", r.Task.ID, r.Reason)
		}
	}
	rep := repro(t, tiny(t, dir, edited), pipeline.Options{})
	if want == 0 || rep.Executed != want {
		t.Fatalf("executed %d, want the %d RandomK runs: %v", rep.Executed, want, executedIDs(rep))
	}
}

// TestEditedHelperRerunsItsUsers is the scenario of the engine redesign: a
// helper that several kinds run (the benchmark decoder, which run tasks
// call) is edited; every task that runs it must rerun, none may be cut off
// by early cutoff upstream, and the incremental store must end with the
// lock a fresh store gives. The tasks whose code cannot reach it stay
// cached.
func TestEditedHelperRerunsItsUsers(t *testing.T) {
	dir := t.TempDir()
	repro(t, tiny(t, dir, nil), pipeline.Options{})
	edited := kindsFrom(t, noinline(t, "stages/formats/benchmark.go", "func DecodeBenchmark("))
	p := tiny(t, dir, edited)
	st, err := p.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	users, runs := 0, 0
	for _, r := range st.Results {
		names, err := reachedBy(edited, r.Task)
		if err != nil {
			t.Fatal(err)
		}
		user := slices.Contains(names, "thv/stages/formats.DecodeBenchmark")
		switch {
		case user && !(r.Status == pipeline.Waiting || r.Status == pipeline.Stale && strings.Contains(r.Reason, "code changed in thv/stages/formats.DecodeBenchmark")):
			t.Errorf("%s: %v %q", r.Task.ID, r.Status, r.Reason)
		case !user && r.Status != pipeline.Cached && r.Status != pipeline.Waiting:
			t.Errorf("%s cannot run the decoder, but is %v (%q)", r.Task.ID, r.Status, r.Reason)
		}
		if user {
			users++
		}
		if r.Task.Kind == "run" {
			if !user {
				t.Errorf("%s: a run does not reach the benchmark decoder", r.Task.ID)
			}
			runs++
		}
	}
	if users < runs || runs == 0 {
		t.Fatalf("%d tasks reach the benchmark decoder, want its %d runs among them", users, runs)
	}
	// The final runs that keep a trajectory (for the figures) join the
	// plan as it unfolds: the users are counted on the pass's results.
	rep := repro(t, tiny(t, dir, edited), pipeline.Options{})
	for _, r := range rep.Results {
		names, err := reachedBy(edited, r.Task)
		if err != nil {
			t.Fatal(err)
		}
		if user, executed := slices.Contains(names, "thv/stages/formats.DecodeBenchmark"), r.Status == pipeline.Executed; user != executed {
			t.Errorf("%s: executed = %v, reaches the benchmark decoder = %v", r.Task.ID, executed, user)
		}
	}
	fresh := t.TempDir()
	repro(t, tiny(t, fresh, edited), pipeline.Options{})
	if string(lockBytes(t, dir)) != string(lockBytes(t, fresh)) {
		t.Fatal("after the edit, the incremental store's lock differs from a fresh store's")
	}
}

// rootPackage is the package of a code root ("thv/algos/randomk.init" →
// "thv/algos/randomk").
func rootPackage(root string) string {
	slash := strings.LastIndexByte(root, '/')
	if dot := strings.IndexByte(root[slash+1:], '.'); dot >= 0 {
		return root[:slash+1+dot]
	}
	return root
}

// goListLabel is the label goListUsers gives the code of a task: its kind
// and its roots' packages.
func goListLabel(task *pipeline.Task) string {
	var pkgs []string
	for _, r := range task.Roots {
		pkgs = append(pkgs, rootPackage(r))
	}
	return task.Kind + " " + strings.Join(pkgs, ",")
}

// TestEveryEditChangesExactlyItsUsers, for the code of every task of the
// quick profile:
//
//   - for EVERY fingerprinted package, an initialisation added to it (which
//     runs whenever the package is linked) changes the code identity of
//     exactly the tasks whose kind (and algorithm) imports it according to
//     the go command's own import graph (go list -deps), which is
//     independent of codeid's reading of the sources;
//   - for EVERY declaration of those packages, a change of its code (a
//     directive) changes the identity of exactly the tasks that reach it
//     (codeid's Reached), never of a task whose imports do not hold it (go
//     list): no edit leaks into another declaration, or another package's
//     users. The root package's TestReachCoversCallGraph checks that what
//     tasks reach holds every function a call graph says they can call.
func TestEveryEditChangesExactlyItsUsers(t *testing.T) {
	users := goListUsers(t) // package → "kind family" labels whose closure holds it
	labels := quickCode(t)
	c, err := codeid.BinaryConfig(thv.Sources, thv.ThirdParty, thv.ThirdPartyNames, codeid.Hints{})
	if err != nil {
		t.Fatal(err)
	}
	c.Binary = "everyEditTest0001/everyEditTest0002" // a memo shared by the edited Modules: each scans only what changed
	kindsOf := func(m *codeid.Module) *pipeline.Kinds {
		k, err := pipeline.NewKinds(m, kindList...)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	baseModule := codeid.New(c)
	base := kindsOf(baseModule)
	want := identities(t, base, labels)
	reached := map[string][]string{}
	for label, task := range labels {
		if reached[label], err = reachedBy(base, task); err != nil {
			t.Fatal(err)
		}
	}
	memo, _ := baseModule.Memo()
	edited := func(edits map[string]string) map[string]string {
		ec := c
		ec.Sources = sourcesWith(edits)
		m, err := codeid.New(ec).Seeded(memo)
		if err != nil {
			t.Fatal(err)
		}
		return identities(t, kindsOf(m), labels)
	}
	files := map[string][]string{} // package → its files
	fs.WalkDir(thv.Sources, ".", func(name string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go") && !strings.Contains(name, "testdata/") {
			if pkg := "thv/" + path.Dir(name); pkg != "thv/protocol" { // the wiring: no task runs it
				files[pkg] = append(files[pkg], name)
			}
		}
		return nil
	})

	// Every package: an initialisation.
	for _, pkg := range sortedKeys(files) {
		file := files[pkg][0]
		got := edited(map[string]string{file: source(t, file) + "\nvar _ = 1\n"})
		for label, task := range labels {
			if changed := got[label] != want[label]; changed != slices.Contains(users[pkg], goListLabel(task)) {
				t.Errorf("initialisation added to %s: identity of %q changed = %v, go list says it imports the package = %v", file, label, changed, !changed)
			}
		}
	}

	// Every declaration: a directive.
	decls := 0
	for _, pkg := range sortedKeys(files) {
		for _, file := range files[pkg] {
			src := source(t, file)
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, file, src, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range f.Decls {
				if gd, ok := d.(*ast.GenDecl); ok && gd.Tok == token.IMPORT {
					continue
				}
				off := fset.Position(d.Pos()).Offset
				got := edited(map[string]string{file: src[:off] + "//go:noinline\n" + src[off:]})
				names := declNames(pkg, d)
				for label, task := range labels {
					changed := got[label] != want[label]
					reaches := slices.ContainsFunc(names, func(n string) bool { return slices.Contains(reached[label], n) })
					switch {
					case changed != reaches:
						t.Errorf("%s %q: identity of %q changed = %v, it reaches the declaration = %v", file, names, label, changed, reaches)
					case changed && !slices.Contains(users[pkg], goListLabel(task)):
						t.Errorf("%s %q: identity of %q changed, but go list says it does not import %s", file, names, label, pkg)
					}
				}
				decls++
			}
		}
	}
	t.Logf("%d packages, %d declarations, %d task codes", len(files), decls, len(labels))
	if decls < 500 {
		t.Fatalf("only %d declarations edited", decls)
	}
}

// declNames are the names under which codeid's Reached lists a
// declaration of package pkg.
func declNames(pkg string, d ast.Decl) []string {
	switch d := d.(type) {
	case *ast.FuncDecl:
		switch {
		case d.Recv != nil:
			t := d.Recv.List[0].Type
			for {
				switch x := t.(type) {
				case *ast.StarExpr:
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
			return []string{pkg + "." + t.(*ast.Ident).Name + "." + d.Name.Name}
		case d.Name.Name == "init":
			return []string{pkg + ".init"}
		case d.Name.Name == "_":
			return nil
		}
		return []string{pkg + "." + d.Name.Name}
	case *ast.GenDecl:
		var names []string
		blank := false
		for _, s := range d.Specs {
			switch s := s.(type) {
			case *ast.TypeSpec:
				names = append(names, pkg+"."+s.Name.Name)
			case *ast.ValueSpec:
				for _, n := range s.Names {
					if n.Name == "_" {
						blank = true
					} else {
						names = append(names, pkg+"."+n.Name)
					}
				}
			}
		}
		if d.Tok == token.VAR && blank && len(names) == 0 {
			return []string{pkg + ".init"}
		}
		return names
	}
	return nil
}
