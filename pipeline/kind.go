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
	// Package is the import path of the package whose code the kind runs;
	// the task's code identity is the closure of its imports. Leave it
	// empty: it is derived from Run's symbol, so it cannot be listed wrong.
	// (Tests of the engine set it to a package of a fake module.)
	Package string
	// Reads and Outputs declare the kind's input roles and outputs, each a
	// name or a family of names (a path.Match pattern: "cells/*"). A plan
	// is checked against them before anything runs (CheckPlan); a kind
	// that declares neither is not checked.
	Reads, Outputs []string
}

// CodeSource computes the code identity of a set of root packages;
// *codeid.Module is the real one.
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
		if kind.Package == "" {
			kind.Package = PackageOf(kind.Run)
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
// roots: the in-module packages, third-party modules and toolchain its
// computation reaches.
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
	all := append([]string{kind.Package}, roots...)
	slices.Sort(all)
	return k.code.Identity(slices.Compact(all)...)
}

// PackageOf returns the import path of the package that defines the
// function fn (a top-level function, method value or closure), read from
// its symbol name, e.g. "thv/stages/run" for run.Run.
func PackageOf(fn any) string {
	v := reflect.ValueOf(fn)
	if v.Kind() != reflect.Func || v.IsNil() {
		return ""
	}
	name := runtime.FuncForPC(v.Pointer()).Name() // "thv/stages/run.Run", "thv/algos/thvucb.init.func1"
	slash := strings.LastIndexByte(name, '/')
	if dot := strings.IndexByte(name[slash+1:], '.'); dot >= 0 {
		return name[:slash+1+dot]
	}
	return name
}
