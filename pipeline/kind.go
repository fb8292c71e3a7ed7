package pipeline

import (
	"context"
	"errors"
	"fmt"
	"path"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"

	"thv/pipeline/codeid"
)

// Func is a stage computation: a pure function from canonical JSON
// parameters and input blobs (by role) to output blobs (by name). It reads
// no file, clock or global state, so its outputs are determined by its key.
type Func func(ctx context.Context, params []byte, in map[string][]byte) (map[string][]byte, error)

// Kind is a registered stage computation.
type Kind struct {
	Name string
	Run  Func
	// Entry is the declaration the kind's code starts from, e.g.
	// "thv/stages/run.Run": a task's code identity is what it can reach
	// (with the task's own roots). Leave it empty: it is derived from
	// Run's symbol (EntryOf), so it cannot be listed wrong. (Tests of the
	// engine set it to a root of a fake code source.)
	Entry string
	// Reads and Outputs declare the kind's input roles and outputs, each a
	// name or a family of names (a path.Match pattern: "cells/*"). A plan
	// is checked against them before anything runs (CheckPlan); a kind
	// that declares neither is not checked.
	Reads, Outputs []string
}

// CodeSource computes the code identity of a set of roots (declarations or
// packages); *codeid.Module is the real one.
type CodeSource interface {
	Identity(roots ...string) (*codeid.Identity, error)
}

// Kinds is the registry of stage kinds of a protocol, with the source of
// their code identities. The same registry is built by `thv repro` and by
// `thv exec-task` workers, which check that their own code gives the key
// the scheduler computed.
type Kinds struct {
	code   CodeSource
	byName map[string]Kind
	ids    sync.Map // kind and roots → *codeid.Identity (thousands of tasks share a few)
}

// NewKinds registers kinds; their code identities come from code.
func NewKinds(code CodeSource, kinds ...Kind) (*Kinds, error) {
	k := &Kinds{code: code, byName: make(map[string]Kind, len(kinds))}
	for _, kind := range kinds {
		if kind.Name == "" || kind.Run == nil {
			return nil, fmt.Errorf("pipeline: kind %q: a kind needs a name and a Run function", kind.Name)
		}
		if _, dup := k.byName[kind.Name]; dup {
			return nil, fmt.Errorf("pipeline: kind %q registered twice", kind.Name)
		}
		if kind.Entry == "" {
			kind.Entry = EntryOf(kind.Run)
		}
		for _, n := range append(slices.Clip(kind.Reads), kind.Outputs...) {
			if _, err := path.Match(n, ""); err != nil || n == "" {
				return nil, fmt.Errorf("pipeline: kind %q declares %q, not a name or a path.Match pattern", kind.Name, n)
			}
		}
		k.byName[kind.Name] = kind
	}
	return k, nil
}

// Code returns the source of the kinds' code identities.
func (k *Kinds) Code() CodeSource { return k.code }

// Lookup returns the kind called name.
func (k *Kinds) Lookup(name string) (Kind, error) {
	kind, ok := k.byName[name]
	if !ok {
		return Kind{}, fmt.Errorf("unknown stage kind %q (this thv knows %s)", name, strings.Join(sortedKeys(k.byName), ", "))
	}
	return kind, nil
}

// CheckPlan checks every edge of p against the declarations of the kinds
// at both ends (Kind.Reads, Kind.Outputs): each task's kind is known, each
// input is of a role its kind reads, from an output its producer's kind
// declares, as is a trigger's output. It returns an error naming the
// first tasks with an undeclared edge, and what their kinds declare.
func (k *Kinds) CheckPlan(p *Plan) error {
	var errs []error
	for _, t := range p.Tasks {
		if err := k.CheckTask(t); err != nil {
			if errs = append(errs, err); len(errs) == 5 {
				errs = append(errs, errors.New("… (only the first five are said)"))
				break
			}
		}
	}
	return errors.Join(errs...)
}

// CheckTask checks the edges of t as CheckPlan does: the plan's, and an
// expanded task's new ones.
func (k *Kinds) CheckTask(t *Task) error {
	kind, err := k.Lookup(t.Kind)
	if err != nil {
		return fmt.Errorf("task %s: %w", t.ID, err)
	}
	declares := func(list []string, name string) bool {
		return slices.ContainsFunc(list, func(pattern string) bool { ok, _ := path.Match(pattern, name); return ok })
	}
	produces := func(from *Task, output string) error {
		kf, err := k.Lookup(from.Kind)
		switch {
		case err != nil:
			return err
		case kf.Reads == nil && kf.Outputs == nil, declares(kf.Outputs, output):
			return nil
		}
		return fmt.Errorf("reads output %q of task %s, which its kind %s does not declare (it declares %s)", output, from.ID, from.Kind, quoted(kf.Outputs))
	}
	if t.Trigger != nil {
		if err := produces(t.Trigger, t.TriggerOutput); err != nil {
			return fmt.Errorf("task %s waits for its trigger: %w", t.ID, err)
		}
	}
	for _, d := range t.Deps {
		if (kind.Reads != nil || kind.Outputs != nil) && !declares(kind.Reads, d.Name) {
			return fmt.Errorf("task %s: input role %q is not one its kind %s declares (it reads %s)", t.ID, d.Name, t.Kind, quoted(kind.Reads))
		}
		if err := produces(d.From, d.Output); err != nil {
			return fmt.Errorf("task %s: input %s %w", t.ID, d.Name, err)
		}
	}
	return nil
}

func quoted(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return fmt.Sprintf("%q", names)
}

// Names returns the registered kind names, sorted.
func (k *Kinds) Names() []string { return sortedKeys(k.byName) }

// Identity returns the code identity of a task of kind name with extra
// roots: the declarations, third-party modules and toolchain its
// computation can reach.
func (k *Kinds) Identity(name string, roots []string) (*codeid.Identity, error) {
	key := name
	if len(roots) > 0 {
		key = name + "\x00" + strings.Join(roots, "\x00")
	}
	if id, ok := k.ids.Load(key); ok {
		return id.(*codeid.Identity), nil
	}
	id, err := k.identity(name, roots)
	if err != nil {
		return nil, err
	}
	k.ids.Store(key, id)
	return id, nil
}

func (k *Kinds) identity(name string, roots []string) (*codeid.Identity, error) {
	kind, err := k.Lookup(name)
	if err != nil {
		return nil, err
	}
	all := append([]string{kind.Entry}, roots...)
	slices.Sort(all)
	return k.code.Identity(slices.Compact(all)...)
}

// PackageOf returns the import path of the package that defines the
// function fn (a top-level function, method value or closure), read from
// its symbol name, e.g. "thv/stages/run" for run.Run.
func PackageOf(fn any) string {
	pkg, _ := splitSymbol(symbolOf(fn))
	return pkg
}

// EntryOf returns the top-level declaration that defines the function fn,
// read from its symbol name, as a code root: "thv/stages/run.Run" for
// run.Run, "p.T.M" for a method (value) of T or *T, "p.init" for a closure
// in an init function or a package variable's initialiser (which run with
// the package), and for another closure the function it is written in, or
// the function that function was inlined into (which reaches it): "p.F".
// A closure in a method of a value receiver gives its type, "p.T", which
// reaches all its methods. "" if fn is not a function.
func EntryOf(fn any) string {
	pkg, rest := splitSymbol(symbolOf(fn))
	if pkg == "" || rest == "" {
		return pkg
	}
	// rest: "Run", "F[...]", "(*T).M", "T.M", "T.M-fm", "init.func1",
	// "F.func2.1", "F.G.func1" (G inlined into F), "glob..func1",
	// "F.gowrap1", "F.deferwrap1".
	elems := strings.Split(strings.TrimSuffix(cutGeneric(rest), "-fm"), ".")
	first := elems[0]
	switch {
	case strings.HasPrefix(first, "(") && len(elems) > 1: // (*T).M, (*T).M.func1
		return pkg + "." + strings.Trim(first, "(*)") + "." + elems[1]
	case first == "glob" || first == "init" || strings.HasPrefix(first, "init#"):
		return pkg + ".init"
	case len(elems) == 2 && !closureElem(elems[1]): // T.M
		return pkg + "." + first + "." + elems[1]
	}
	return pkg + "." + first
}

// closureElem reports whether an element of a symbol after a function's
// name names something written inside it: a closure ("func1", and "1" for
// one nested in it), a go or defer statement's wrapper.
func closureElem(e string) bool {
	for _, prefix := range []string{"func", "gowrap", "deferwrap"} {
		if rest, ok := strings.CutPrefix(e, prefix); ok && rest != "" && strings.Trim(rest, "0123456789") == "" {
			return true
		}
	}
	return e == "" || strings.Trim(e, "0123456789") == ""
}

// cutGeneric drops the type arguments ("[...]") of a symbol name.
func cutGeneric(s string) string {
	var b strings.Builder
	depth := 0
	for _, r := range s {
		switch {
		case r == '[':
			depth++
		case r == ']' && depth > 0:
			depth--
		case depth == 0:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// symbolOf is the symbol name of the function fn, or "".
func symbolOf(fn any) string {
	v := reflect.ValueOf(fn)
	if v.Kind() != reflect.Func || v.IsNil() {
		return ""
	}
	return runtime.FuncForPC(v.Pointer()).Name() // "thv/stages/run.Run", "thv/algos/thvucb.init.func1"
}

// splitSymbol splits a symbol name into its package's import path and the
// rest ("thv/algos/thvucb.init.func1" → "thv/algos/thvucb", "init.func1").
func splitSymbol(name string) (pkg, rest string) {
	slash := strings.LastIndexByte(name, '/')
	if dot := strings.IndexByte(name[slash+1:], '.'); dot >= 0 {
		return name[:slash+1+dot], name[slash+1+dot+1:]
	}
	return name, ""
}
