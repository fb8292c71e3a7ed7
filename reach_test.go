package thv_test

import (
	"go/ast"
	"go/types"
	"slices"
	"strings"
	"testing"

	"golang.org/x/tools/go/callgraph/rta"
	"golang.org/x/tools/go/packages"
	"golang.org/x/tools/go/ssa"
	"golang.org/x/tools/go/ssa/ssautil"

	"thv"
	"thv/algos"
	"thv/pipeline"
	"thv/pipeline/codeid"
	"thv/protocol"
)

// TestReachCoversCallGraph checks codeid's reach, which reads no types,
// against a call graph computed with them: for the code of every task of
// the paper's pipeline (each kind's Run, and the run kind with each
// algorithm's registered constructor), rapid type analysis
// (golang.org/x/tools/go/callgraph/rta, over go/ssa) from the kind's entry
// and the initialisation of every package the task links finds the
// functions it can call and the types whose values it can make. Every one
// of them declared in the module, and every package-level name their
// bodies use (go/types), must be among the declarations codeid says the
// task reaches. The call graph sees no bodies outside the module (their
// export data only): calls that come back into the module through them
// (a sort's less function, a String method fmt calls) are left to
// codeid's own rules (a reached type reaches all its methods).
func TestReachCoversCallGraph(t *testing.T) {
	if testing.Short() {
		t.Skip("type-checks the science packages and builds their SSA")
	}
	cfg := &packages.Config{Mode: packages.NeedName | packages.NeedImports | packages.NeedTypes | packages.NeedSyntax | packages.NeedTypesInfo}
	pkgs, err := packages.Load(cfg, "./hv/...", "./envs/...", "./algos/...", "./stages/...", "./artifacts/...")
	if err != nil {
		t.Fatal(err)
	}
	if packages.PrintErrors(pkgs) > 0 {
		t.Fatal("the packages do not load")
	}
	prog, ssaPkgs := ssautil.Packages(pkgs, ssa.InstantiateGenerics)
	prog.Build()
	byPath := map[string]*ssa.Package{}
	for _, p := range ssaPkgs {
		if p != nil {
			byPath[p.Pkg.Path()] = p
		}
	}
	infos := map[string]*types.Info{}
	for _, p := range pkgs {
		infos[p.PkgPath] = p.TypesInfo
	}

	m, err := codeid.ForBinary(thv.Sources, thv.ThirdParty, thv.ThirdPartyNames)
	if err != nil {
		t.Fatal(err)
	}
	kinds, err := protocol.Kinds()
	if err != nil {
		t.Fatal(err)
	}
	type task struct{ label, entry, ctor string }
	var tasks []task
	for _, name := range kinds.Names() {
		kind, _ := kinds.Lookup(name)
		if name != "run" {
			tasks = append(tasks, task{name, kind.Entry, ""})
			continue
		}
		for _, spec := range algos.All() {
			tasks = append(tasks, task{name + " " + spec.Name, kind.Entry, pipeline.EntryOf(spec.New)})
		}
	}
	checked, ours, theirs := 0, 0, 0
	for _, tk := range tasks {
		roots := []string{tk.entry}
		if tk.ctor != "" {
			roots = append(roots, tk.ctor)
		}
		reached, err := m.Reached(roots...)
		if err != nil {
			t.Fatal(err)
		}
		closure, err := m.Packages(roots...)
		if err != nil {
			t.Fatal(err)
		}
		// The entry, and the initialisation of every package linked.
		var rtaRoots []*ssa.Function
		entryPkg, entryName := splitDecl(tk.entry)
		if f := byPath[entryPkg].Func(entryName); f != nil {
			rtaRoots = append(rtaRoots, f)
		} else {
			t.Fatalf("%s: no function %s", tk.label, tk.entry)
		}
		for _, pp := range closure {
			rtaRoots = append(rtaRoots, byPath[pp].Func("init"))
		}
		res := rta.Analyze(rtaRoots, false)
		missing := map[string]string{} // declaration → why it must be reached
		needed := map[string]bool{}
		need := func(name, why string) {
			needed[name] = true
			if !slices.Contains(reached, name) {
				if _, ok := missing[name]; !ok {
					missing[name] = why
				}
			}
		}
		for fn := range res.Reachable {
			if fn.Pkg == nil || !inModule(fn.Pkg.Pkg.Path()) {
				continue
			}
			if name, ok := declOf(fn); ok {
				need(name, "the call graph reaches "+fn.String())
			}
			if syn := fn.Syntax(); syn != nil {
				info := infos[fn.Pkg.Pkg.Path()]
				ast.Inspect(syn, func(n ast.Node) bool {
					id, ok := n.(*ast.Ident)
					if !ok || info == nil {
						return true
					}
					if obj := info.Uses[id]; obj != nil && obj.Pkg() != nil && inModule(obj.Pkg().Path()) && obj.Parent() == obj.Pkg().Scope() {
						need(obj.Pkg().Path()+"."+obj.Name(), fn.String()+" uses it")
					}
					return true
				})
			}
			checked++
		}
		for _, typ := range res.RuntimeTypes.Keys() {
			if p, ok := typ.(*types.Pointer); ok {
				typ = p.Elem()
			}
			named, ok := typ.(*types.Named)
			if !ok || named.Obj().Pkg() == nil || !inModule(named.Obj().Pkg().Path()) || named.Obj().Parent() != named.Obj().Pkg().Scope() {
				continue
			}
			need(named.Obj().Pkg().Path()+"."+named.Obj().Name(), "a value of it may exist")
		}
		ours, theirs = ours+len(reached), theirs+len(needed)
		for _, name := range slices.Sorted(func(yield func(string) bool) {
			for k := range missing {
				if !yield(k) {
					return
				}
			}
		}) {
			t.Errorf("%s: codeid does not reach %s, yet %s", tk.label, name, missing[name])
		}
	}
	t.Logf("%d task codes, %d reachable functions checked; codeid reaches %d declarations in all, the call graph and the names its functions use %d", len(tasks), checked, ours, theirs)
	if checked < 1000 {
		t.Errorf("only %d functions checked", checked)
	}
}

func inModule(path string) bool { return path == "thv" || strings.HasPrefix(path, "thv/") }

// splitDecl splits "thv/stages/run.Run" into its package and name.
func splitDecl(root string) (string, string) {
	slash := strings.LastIndexByte(root, '/')
	dot := strings.IndexByte(root[slash+1:], '.')
	return root[:slash+1+dot], root[slash+1+dot+1:]
}

// declOf names the top-level declaration whose code a function is, as
// codeid's Reached does ("path.F", "path.T.M", "path.init"), if it is
// declared in the module.
func declOf(fn *ssa.Function) (string, bool) {
	for fn.Parent() != nil { // a closure is its enclosing declaration's code
		fn = fn.Parent()
	}
	if o := fn.Origin(); o != nil {
		fn = o
	}
	obj, _ := fn.Object().(*types.Func)
	if obj == nil {
		// An init function (init#N) is the package's "init"; the
		// package's initialiser (its variables' initialisers, then its
		// init functions) is code codeid always reaches.
		if fn.Pkg != nil && inModule(fn.Pkg.Pkg.Path()) && strings.HasPrefix(fn.Name(), "init#") {
			return fn.Pkg.Pkg.Path() + ".init", true
		}
		return "", false
	}
	if obj.Pkg() == nil || !inModule(obj.Pkg().Path()) {
		return "", false
	}
	sig := obj.Type().(*types.Signature)
	if recv := sig.Recv(); recv != nil {
		rt := recv.Type()
		if p, ok := rt.(*types.Pointer); ok {
			rt = p.Elem()
		}
		named, ok := rt.(*types.Named)
		if !ok {
			return "", false // an interface's method: no code
		}
		if _, isIface := named.Underlying().(*types.Interface); isIface {
			return "", false
		}
		return obj.Pkg().Path() + "." + named.Obj().Name() + "." + obj.Name(), true
	}
	if obj.Name() == "init" {
		return obj.Pkg().Path() + ".init", true
	}
	return obj.Pkg().Path() + "." + obj.Name(), true
}
