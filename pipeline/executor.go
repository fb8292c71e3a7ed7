package pipeline

import (
	"context"
	"errors"
	"fmt"

	"thv/artifacts"
)

// Executor runs task specs. The scheduler calls Execute from as many
// goroutines as it has jobs; an executor returns the digest of every output
// once the outputs and the index entry of spec.Key are in the store. Which
// executor ran a task is provenance, never part of its key: every executor
// must store the same bytes for the same spec.
//
// An input the store cannot provide comes back as an *InputError (the
// scheduler re-executes its producer); a cancelled ctx stops the work and
// leaves nothing half-written.
type Executor interface {
	Execute(ctx context.Context, spec *Spec) (map[string]artifacts.Digest, error)
	Close() error
}

// Worker executes specs against a store with the stage kinds it knows. It
// is the body of every executor: in process for Local, behind `thv
// exec-task` for Process and the executors built on it (in a container, on
// a Slurm node).
//
// With Out set, outputs and the index entry go to Out instead of Store, and
// inputs are read from Store, then Out: Store may then be read-only (a
// container's read-only mount of the project store, the store a verify
// checks against), and Out is a scratch store the caller imports from
// (ImportOutputs) or compares.
type Worker struct {
	Store *artifacts.Store
	Kinds *Kinds
	Out   *artifacts.Store
}

// dest is the store outputs go to.
func (w *Worker) dest() *artifacts.Store {
	if w.Out != nil {
		return w.Out
	}
	return w.Store
}

// input reads an input object from Store, else from Out.
func (w *Worker) input(d artifacts.Digest) ([]byte, error) {
	b, err := w.Store.Get(d)
	if err != nil && w.Out != nil && errors.Is(err, artifacts.ErrNotFound) {
		return w.Out.Get(d)
	}
	return b, err
}

// Execute checks spec against the worker's own code, reads its inputs,
// runs the stage and stores its outputs, then the index entry.
func (w *Worker) Execute(ctx context.Context, spec *Spec) (map[string]artifacts.Digest, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	kind, err := w.Kinds.Lookup(spec.Kind)
	if err != nil {
		return nil, err
	}
	id, err := w.Kinds.Identity(spec.Kind, spec.Roots)
	if err != nil {
		return nil, err
	}
	if id.Digest != spec.Code {
		return nil, &CodeMismatchError{Want: spec.Code, Have: id.Digest}
	}
	inputs, err := spec.inputMap()
	if err != nil {
		return nil, err
	}
	parts := keyParts{Kind: spec.Kind, Code: id, Params: spec.Params, Inputs: inputs}
	if parts.key() != spec.Key {
		return nil, fmt.Errorf("spec key %s does not match its kind, code, parameters and inputs (%s): refusing to store outputs under it", spec.Key, parts.key())
	}
	in := make(map[string][]byte, len(inputs))
	for role, d := range inputs {
		b, err := w.input(d)
		if err != nil {
			if errors.Is(err, artifacts.ErrNotFound) || errors.Is(err, artifacts.ErrCorrupt) {
				return nil, &InputError{Role: role, Digest: d, Err: err}
			}
			return nil, fmt.Errorf("input %s: %w", role, err)
		}
		in[role] = b
	}
	outs, err := kind.Run(ctx, spec.Params, in)
	if err != nil {
		return nil, err
	}
	if len(outs) == 0 {
		return nil, fmt.Errorf("stage %s produced no output", spec.Kind)
	}
	entry := artifacts.Entry{Key: spec.Key, Kind: spec.Kind, Meta: map[string]string{"task": spec.Task, "preimage": string(parts.preimage())}}
	digests := make(map[string]artifacts.Digest, len(outs))
	for _, name := range sortedKeys(outs) {
		if err := ValidName(name); err != nil {
			return nil, fmt.Errorf("stage %s: output %w", spec.Kind, err)
		}
		d, err := w.dest().Put(outs[name])
		if err != nil {
			return nil, fmt.Errorf("storing output %s: %w", name, err)
		}
		digests[name] = d
		entry.Outputs = append(entry.Outputs, artifacts.Output{Name: name, Digest: d, Size: int64(len(outs[name]))})
	}
	if err := w.dest().PutEntry(entry); err != nil {
		return nil, err
	}
	return digests, nil
}

// ValidName checks that an output name can safely become a file name: one
// path component, no separator, not "." or "..", no control or invisible
// character (artifacts.CheckName, the one rule for every name THV turns
// into a path).
func ValidName(name string) error { return artifacts.CheckName(name) }

// Local is the default executor: the worker runs in this process.
type Local struct{ Worker *Worker }

// Execute runs spec in process.
func (l *Local) Execute(ctx context.Context, spec *Spec) (map[string]artifacts.Digest, error) {
	return l.Worker.Execute(ctx, spec)
}

// Close does nothing.
func (*Local) Close() error { return nil }

// inProcess marks the executors whose worker is this process's own code
// (Local): their answers need no re-check by the host. It is unexported,
// so no executor of another package can claim it; every other executor's
// answer is confirmed against what its worker stored (confirmOutputs).
type inProcess interface{ inProcess() }

func (*Local) inProcess() {}
