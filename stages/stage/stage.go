// Package stage is the contract between the pipeline and the stage kinds
// (thv/stages/...): what a stage receives and returns, and how it reads its
// parameters.
//
// Every kind is a package exporting
//
//	const Kind = "<kind name>"
//	func Run(ctx context.Context, params []byte, in stage.Inputs) (stage.Outputs, error)
//
// and a Params struct, the JSON form of params. A Run starts with [Start]
// and reads its inputs with [Read]. A stage is a pure function of its
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

// Read decodes the input of role name with decode. Its errors name the
// input: a missing input, or what decode found wrong.
func Read[T any](in Inputs, name string, decode func([]byte) (T, error)) (T, error) {
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
