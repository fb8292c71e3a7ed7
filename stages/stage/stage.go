// Package stage is the contract between the pipeline and the stage kinds
// (thv/stages/...): what a stage receives and returns, and how it reads its
// parameters.
//
// Every kind is a package exporting
//
//	const Kind = "<kind name>"
//	func Run(ctx context.Context, params []byte, in stage.Inputs) (stage.Outputs, error)
//	var Declared = stage.Declaration{...}
//
// a Params struct, the JSON form of params, and the names of its outputs
// and input roles as constants ([OutputName], [Role]), each declared once
// and listed in Declared. A Run starts with [Start] and reads its inputs
// with [Read]. A stage is a pure function of its
// parameters and input blobs: it reads no file, no clock and no global
// state, so that its outputs are determined by its task key. Inputs and
// Outputs are type aliases, so a Run function is assignable to a plain
// func(context.Context, []byte, map[string][]byte) (map[string][]byte, error).
package stage

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path"
	"strings"
)

// Inputs maps an input role to a blob (mostly a Parquet file).
type Inputs = map[string][]byte

// Outputs maps an output name to a blob.
type Outputs = map[string][]byte

// Decode unmarshals canonical JSON parameters into a P, rejecting unknown
// fields, so that a mismatched task spec fails loudly
// instead of running with defaults.
func Decode[P any](params []byte) (P, error) {
	var p P
	dec := json.NewDecoder(bytes.NewReader(params))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return p, fmt.Errorf("bad task parameters: %w", err)
	}
	return p, nil
}

// Start is the first step of every Run: it returns ctx's error if ctx is
// already done, and otherwise the decoded parameters (see Decode).
func Start[P any](ctx context.Context, params []byte) (P, error) {
	if err := ctx.Err(); err != nil {
		var zero P
		return zero, err
	}
	return Decode[P](params)
}

// Read decodes the input of role name (a Role, or a member of a family:
// Role.With) with decode. Its errors name the input: a missing input, or
// what decode found wrong.
func Read[T any, R Role | string](in Inputs, role R, decode func([]byte) (T, error)) (T, error) {
	name := string(role)
	b, ok := in[name]
	if !ok {
		var zero T
		return zero, fmt.Errorf("missing input %s", name)
	}
	v, err := decode(b)
	if err != nil {
		return v, fmt.Errorf("input %s: %w", name, err)
	}
	return v, nil
}

// An OutputName names an output of a kind, the key of its blob in
// Outputs; or a family of them, one per setting, as a path.Match pattern
// whose "*" is the varying part ("summary_*.tex").
type OutputName string

// A Role names an input of a kind, the key of its blob in Inputs; or a
// family of them, as a path.Match pattern ("cells/*": one per setting).
type Role string

// With is the name of the family n with its "*"s replaced, in order, by
// parts: OutputName("summary_*.tex").With("d2") is "summary_d2.tex".
func (n OutputName) With(parts ...string) string { return fill(string(n), parts) }

// With is the role of the family r with its "*"s replaced, in order, by
// parts: Role("cells/*").With("d2") is "cells/d2".
func (r Role) With(parts ...string) string { return fill(string(r), parts) }

func fill(pattern string, parts []string) string {
	for _, p := range parts {
		pattern = strings.Replace(pattern, "*", p, 1)
	}
	return pattern
}

// Output declares one of a kind's outputs.
type Output struct {
	Name OutputName
	// Doc says what it holds, for results/README.md, the page and thv
	// show; in a family's, "*" stands for the varying part.
	Doc string
	// Results is the directory of results/ the export copies it to ("."
	// for results/ itself), or "" if it stays in the store.
	Results string
}

// DocOf is what output name, o or a member of its family, holds: Doc,
// with a family's "*" replaced by name's part.
func (o Output) DocOf(name string) string {
	prefix, suffix, family := strings.Cut(string(o.Name), "*")
	if !family {
		return o.Doc
	}
	return strings.ReplaceAll(o.Doc, "*", strings.TrimSuffix(strings.TrimPrefix(name, prefix), suffix))
}

// Declaration is what a kind reads and writes, as go/analysis's Analyzer
// declares what it requires and returns: its input roles and its
// outputs. The engine checks every edge of a plan against the
// declarations of both ends before anything runs.
type Declaration struct {
	Reads   []Role
	Outputs []Output
}

// Output returns the declaration of output name (a family's for a member).
func (d Declaration) Output(name string) (Output, bool) {
	for _, o := range d.Outputs {
		if ok, _ := path.Match(string(o.Name), name); ok {
			return o, true
		}
	}
	return Output{}, false
}
