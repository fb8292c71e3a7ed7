package pipeline

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"

	"thv/stages"
)

// Task keys follow the Go build cache's action IDs: the SHA-256 of a short
// text (the preimage) naming the stage kind, the hash of every code unit the
// task runs, its canonical parameters and the content digest of every input.
// Inputs enter by content, so an upstream task that reruns and yields the
// same bytes leaves its dependents' keys unchanged (early cutoff).

const keyVersion = "thv task v1"

// sources returns the code units of t, sorted and without duplicates.
func (t *Task) sources() ([]string, error) {
	k, err := stages.Lookup(t.Kind)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out []string
	for _, u := range append(append([]string(nil), k.Sources...), t.Sources...) {
		if !seen[u] {
			seen[u] = true
			out = append(out, u)
		}
	}
	sort.Strings(out)
	return out, nil
}

// canonicalParams encodes params as JSON: struct fields in declaration
// order, map keys sorted, floats in shortest round-trip form.
func canonicalParams(params any) (json.RawMessage, error) {
	b, err := json.Marshal(params)
	if err != nil {
		return nil, fmt.Errorf("encoding task parameters: %w", err)
	}
	return b, nil
}

// keyParts is everything a key is made of, kept to explain staleness.
type keyParts struct {
	Kind   string
	Code   map[string]string // unit → hash
	Params json.RawMessage
	Inputs map[string]string // role → digest
}

func (k keyParts) preimage() string {
	b := make([]byte, 0, 1024)
	b = append(append(append(b, keyVersion...), "\nkind "...), k.Kind...)
	b = append(b, '\n')
	for _, u := range sortedKeys(k.Code) {
		b = append(append(append(append(append(b, "code "...), u...), ' '), k.Code[u]...), '\n')
	}
	b = append(append(append(b, "params "...), k.Params...), '\n')
	for _, name := range sortedKeys(k.Inputs) {
		b = append(append(append(append(append(b, "input "...), name...), ' '), k.Inputs[name]...), '\n')
	}
	return string(b)
}

func (k keyParts) key() string {
	sum := sha256.Sum256([]byte(k.preimage()))
	return "sha256:" + hex.EncodeToString(sum[:])
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
