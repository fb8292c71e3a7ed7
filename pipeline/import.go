package pipeline

import (
	"fmt"

	"thv/artifacts"
)

// ImportOutputs copies the outputs a worker stored in its scratch store src
// under key into dst, then the index entry: the host side of an executor
// whose workers cannot write the project store (a container sees it read
// only). Nothing a worker wrote is trusted: src is read through
// Store.Untrusted, so a link anywhere in it is refused, a bad file is an
// error naming it and is left where it is (a scratch store is never
// quarantined into, so nothing the worker arranged can make the host move,
// write or remove a file), the entry is read strictly and must name exactly
// the outputs the worker reported, and every object is re-hashed as it is
// read (Store.Get) before it is put, objects before the entry, as
// everywhere.
func ImportOutputs(dst, src *artifacts.Store, key artifacts.Key, kind string, outputs map[string]artifacts.Digest) error {
	src = src.Untrusted()
	e, ok, err := src.GetEntry(key)
	if err != nil {
		return fmt.Errorf("importing the worker's outputs: %w", err)
	}
	if !ok {
		return fmt.Errorf("importing the worker's outputs: the worker reported success but stored no index entry for key %s", key)
	}
	if e.Kind != kind || len(e.Outputs) != len(outputs) {
		return fmt.Errorf("importing the worker's outputs: its index entry for %s (kind %q, %d outputs) does not match its answer (kind %q, %d outputs)", key, e.Kind, len(e.Outputs), kind, len(outputs))
	}
	for _, o := range e.Outputs {
		if d, ok := outputs[o.Name]; !ok || d != o.Digest {
			return fmt.Errorf("importing the worker's outputs: output %q is %s in its index entry, %s in its answer", o.Name, o.Digest, d)
		}
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
