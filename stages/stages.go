// Package stages holds the computations of the reproduction pipeline, one
// file per stage kind: instances, benchmark (V*, HV(G*)), run (one bandit
// run → trajectory and summary), select (η* over the grid), collect (the
// final runs of one algorithm), and the statistics, tables and figures built
// on them.
//
// A stage is a pure function from canonical parameters and input blobs to
// output blobs: it reads no file, no clock and no global state, so that its
// outputs are determined by its task key. The pipeline package decides what
// to run and stores the blobs; this package is the only place where the
// science packages and the artifact formats meet.
package stages

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
)

// Inputs and Outputs map a role name to a blob (mostly Parquet files).
type (
	Inputs  map[string][]byte
	Outputs map[string][]byte
)

// Kind describes a stage kind.
type Kind struct {
	Name string
	// Sources lists the code a task of this kind runs, as module-relative
	// package directories ("hv") or files ("stages/run.go"). The pipeline
	// fingerprints them: editing one reruns exactly the tasks that run it.
	// Families maps extra sources per task (run tasks add their algorithm
	// family); see SourcesFor.
	Sources []string
	// Run computes the outputs from JSON-encoded parameters.
	Run func(params []byte, in Inputs) (Outputs, error)
}

// common is the code every stage shares.
var common = []string{"stages/stages.go", "stages/tables.go"}

var kinds = map[string]Kind{}

func register(k Kind) {
	k.Sources = append(append([]string(nil), common...), k.Sources...)
	sort.Strings(k.Sources)
	kinds[k.Name] = k
}

// Lookup returns the stage kind with the given name.
func Lookup(name string) (Kind, error) {
	k, ok := kinds[name]
	if !ok {
		return Kind{}, fmt.Errorf("unknown stage kind %q", name)
	}
	return k, nil
}

// decode unmarshals canonical JSON parameters, rejecting unknown fields so
// that a mismatched task spec fails loudly instead of running with defaults.
func decode[P any](b []byte) (P, error) {
	var p P
	if err := strictUnmarshal(b, &p); err != nil {
		return p, fmt.Errorf("bad task parameters: %w", err)
	}
	return p, nil
}

func strictUnmarshal(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}
