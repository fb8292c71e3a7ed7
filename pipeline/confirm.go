package pipeline

import (
	"fmt"

	"thv/artifacts"
)

// confirmOutputs turns a worker's answer into evidence. A worker in another
// process (or container, or on a cluster node) prints the digests of what
// it stored; the host does not take its word: the index entry for the
// spec's key must be in st, be of the spec's kind and name exactly the
// reported outputs, and every output object must hash to its name.
func confirmOutputs(st *artifacts.Store, spec *Spec, outs map[string]artifacts.Digest) error {
	e, ok, err := st.GetEntry(spec.Key)
	if err != nil {
		return fmt.Errorf("checking the worker's answer: its index entry: %w", err)
	}
	if !ok {
		return fmt.Errorf("checking the worker's answer: it reported success but stored no index entry for key %s", spec.Key)
	}
	if e.Kind != spec.Kind || len(e.Outputs) != len(outs) {
		return fmt.Errorf("checking the worker's answer: its index entry for %s (kind %q, %d outputs) does not match its answer (kind %q, %d outputs)", spec.Key, e.Kind, len(e.Outputs), spec.Kind, len(outs))
	}
	for _, o := range e.Outputs {
		if d, ok := outs[o.Name]; !ok || d != o.Digest {
			return fmt.Errorf("checking the worker's answer: output %q is %s in its index entry, %s in its answer", o.Name, o.Digest, d)
		}
		if err := st.Verify(o.Digest); err != nil {
			return fmt.Errorf("checking the worker's answer: output %q: %w", o.Name, err)
		}
	}
	return nil
}
