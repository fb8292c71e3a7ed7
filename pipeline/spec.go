package pipeline

import (
	"encoding/json"
	"fmt"

	"thv/artifacts"
)

// Spec is one task execution as an executor receives it: everything the
// key is made of, in a form that crosses process (and machine) boundaries.
// A worker recomputes the code identity from its own binary and the key
// from the spec, and refuses to run when either differs: a worker built
// from other code must not store outputs under this key.
type Spec struct {
	Task   string          `json:"task"`            // the task ID, for messages
	Kind   string          `json:"kind"`            // a registered kind
	Roots  []string        `json:"roots,omitempty"` // extra code roots (Task.Roots)
	Code   string          `json:"code"`            // the code identity digest the scheduler computed
	Params json.RawMessage `json:"params"`          // canonical JSON
	Inputs []SpecInput     `json:"inputs"`          // sorted by role
	Key    artifacts.Key   `json:"key"`
}

// SpecInput is one input of a spec: the digest of the blob fed under Role.
type SpecInput struct {
	Role   string           `json:"role"`
	Digest artifacts.Digest `json:"digest"`
}

func newSpec(t *Task, code string, parts keyParts, key artifacts.Key) *Spec {
	s := &Spec{Task: t.ID, Kind: t.Kind, Roots: t.Roots, Code: code, Params: parts.Params, Key: key}
	for _, role := range sortedKeys(parts.Inputs) {
		s.Inputs = append(s.Inputs, SpecInput{role, parts.Inputs[role]})
	}
	return s
}

// inputMap returns the inputs by role, refusing duplicate roles.
func (s *Spec) inputMap() (map[string]artifacts.Digest, error) {
	m := make(map[string]artifacts.Digest, len(s.Inputs))
	for _, in := range s.Inputs {
		if _, dup := m[in.Role]; dup {
			return nil, fmt.Errorf("spec lists input %q twice", in.Role)
		}
		m[in.Role] = in.Digest
	}
	return m, nil
}

// InputError reports an input of a spec that the store cannot provide
// (missing, or corrupt and quarantined). The scheduler answers it by
// re-executing the input's producer, then the task.
type InputError struct {
	Role   string
	Digest artifacts.Digest
	Err    error
}

// Error names the input by role and digest, with the store's error.
func (e *InputError) Error() string {
	return fmt.Sprintf("input %s (%s): %v", e.Role, e.Digest, e.Err)
}

// Unwrap returns the store's error (errors.Is(err, artifacts.ErrNotFound)
// for a missing input).
func (e *InputError) Unwrap() error { return e.Err }

// CodeMismatchError reports a worker whose own code identity for a spec
// differs from the scheduler's: it runs a different thv binary.
type CodeMismatchError struct{ Want, Have string }

// Error gives both identities and the fix: one thv build for scheduling and
// execution.
func (e *CodeMismatchError) Error() string {
	return fmt.Sprintf("code identity mismatch: the scheduler expects %s, this worker's code is %s: run the same thv build for scheduling and execution", e.Want, e.Have)
}
