package pipeline

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"thv/artifacts"
)

// Outputs are a task's output digests by name, sorted by name, each name
// once: what a lock record and a result hold. Most tasks have one or two,
// and a lock has a record per task, so they are a short slice rather than
// a map (a map per record was a third of the memory a no-op pass spent
// reading a lock). Executors and workers exchange maps (OutputsOf, Map).
type Outputs []NamedDigest

// NamedDigest is one output of a task: its name and its object's digest.
type NamedDigest struct {
	Name   string
	Digest artifacts.Digest
}

// OutputsOf returns the outputs of m, sorted by name (nil if m is nil,
// empty if it is empty: a result's nil Outputs means it has none recorded).
func OutputsOf(m map[string]artifacts.Digest) Outputs {
	if m == nil {
		return nil
	}
	o := make(Outputs, 0, len(m))
	for name, d := range m {
		o = append(o, NamedDigest{name, d})
	}
	slices.SortFunc(o, func(a, b NamedDigest) int { return strings.Compare(a.Name, b.Name) })
	return o
}

// Get returns the digest of the output called name.
func (o Outputs) Get(name string) (artifacts.Digest, bool) {
	for _, nd := range o {
		if nd.Name == name {
			return nd.Digest, true
		}
	}
	return artifacts.Digest{}, false
}

// Map returns o as a map of name → digest (nil if o is empty).
func (o Outputs) Map() map[string]artifacts.Digest {
	if len(o) == 0 {
		return nil
	}
	m := make(map[string]artifacts.Digest, len(o))
	for _, nd := range o {
		m[nd.Name] = nd.Digest
	}
	return m
}

// Equal reports whether o and p name the same outputs with the same
// digests (both sorted, as every Outputs is).
func (o Outputs) Equal(p Outputs) bool { return slices.Equal(o, p) }

// String lists the outputs as name=digest, in order.
func (o Outputs) String() string {
	parts := make([]string, len(o))
	for i, nd := range o {
		parts[i] = nd.Name + "=" + nd.Digest.String()
	}
	return "{" + strings.Join(parts, " ") + "}"
}

// MarshalJSON encodes o as the JSON object a map of name → digest encodes
// to (keys sorted, as encoding/json sorts a map's), so that a lock's bytes
// are what they were when its records held maps.
func (o Outputs) MarshalJSON() ([]byte, error) {
	if o == nil {
		return []byte("null"), nil // as a nil map
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for i, nd := range o {
		if i > 0 && nd.Name <= o[i-1].Name {
			return nil, fmt.Errorf("outputs not sorted by name, or a name twice: %q after %q", nd.Name, o[i-1].Name)
		}
		name, err := json.Marshal(nd.Name)
		if err != nil {
			return nil, err
		}
		d, err := json.Marshal(nd.Digest)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(name)
		b.WriteByte(':')
		b.Write(d)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON decodes a JSON object of name → digest (null: none), as
// encoding/json decodes it into a map: a name given twice keeps its last
// digest.
func (o *Outputs) UnmarshalJSON(b []byte) error {
	var m map[string]artifacts.Digest
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	*o = OutputsOf(m)
	return nil
}
