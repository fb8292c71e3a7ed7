package pipeline

import (
	"fmt"

	"thv/artifacts"
)

// A worker in another process (or container, or on a cluster node) prints
// the digests of what it stored; the host does not take its word. These
// are the two ways it checks: confirmOutputs where the worker wrote the
// store the host reads (a repro's process and Slurm workers, a verify's
// scratch store), ImportOutputs where the host copies from a scratch store
// into its own (the container executor).

// workerEntry reads the index entry the worker stored for key and checks
// that it is of the kind and names exactly the outputs of its answer.
func workerEntry(st *artifacts.Store, key artifacts.Key, kind string, outputs map[string]artifacts.Digest) (artifacts.Entry, error) {
	e, ok, err := st.GetEntry(key)
	if err != nil {
		return e, fmt.Errorf("checking the worker's answer: its index entry: %w", err)
	}
	if !ok {
		return e, fmt.Errorf("checking the worker's answer: it reported success but stored no index entry for key %s", key)
	}
	if e.Kind != kind || len(e.Outputs) != len(outputs) {
		return e, fmt.Errorf("checking the worker's answer: its index entry for %s (kind %q, %d outputs) does not match its answer (kind %q, %d outputs)", key, e.Kind, len(e.Outputs), kind, len(outputs))
	}
	for _, o := range e.Outputs {
		if d, ok := outputs[o.Name]; !ok || d != o.Digest {
			return e, fmt.Errorf("checking the worker's answer: output %q is %s in its index entry, %s in its answer", o.Name, o.Digest, d)
		}
	}
	return e, nil
}

// confirmOutputs checks a worker's answer against the store it wrote: its
// index entry (workerEntry), and every output object re-hashed.
func confirmOutputs(st *artifacts.Store, spec *Spec, outs map[string]artifacts.Digest) error {
	e, err := workerEntry(st, spec.Key, spec.Kind, outs)
	if err != nil {
		return err
	}
	for _, o := range e.Outputs {
		if err := st.Verify(o.Digest); err != nil {
			return fmt.Errorf("checking the worker's answer: output %q: %w", o.Name, err)
		}
	}
	return nil
}

// ImportOutputs copies the outputs a worker stored in its scratch store src
// under key into dst, then the index entry: the host side of an executor
// whose workers cannot write the project store (a container sees it read
// only). Nothing a worker wrote is trusted: src is read through
// Store.Untrusted, so a link anywhere in it is refused, a bad file is an
// error naming it and is left where it is (a scratch store is never
// quarantined into, so nothing the worker arranged can make the host move,
// write or remove a file), the entry is read strictly and must name exactly
// the outputs the worker reported, and every object is
// re-hashed as it is read (Store.Get) before it is put, objects before the
// entry, as everywhere.
func ImportOutputs(dst, src *artifacts.Store, key artifacts.Key, kind string, outputs map[string]artifacts.Digest) error {
	src = src.Untrusted()
	e, err := workerEntry(src, key, kind, outputs)
	if err != nil {
		return fmt.Errorf("importing the worker's outputs: %w", err)
	}
	for _, o := range e.Outputs {
		b, err := src.Get(o.Digest)
		if err != nil {
			return fmt.Errorf("importing output %q: %w", o.Name, err)
		}
		if _, err := dst.Put(b); err != nil {
			return fmt.Errorf("importing output %q: %w", o.Name, err)
		}
	}
	return dst.PutEntry(e)
}
