package pipeline

import (
	"crypto/sha256"
	"encoding"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"thv/artifacts"
	"thv/pipeline/codeid"
)

// Task keys follow the Go build cache's action IDs: the SHA-256 of a short
// text, the preimage, that describes the computation completely: the stage
// kind, its code identity (the digest of its units: every declaration the
// task's code can reach, every third-party module, the toolchain; the lock
// lists them), its canonical parameters and the content digest of every
// input. Inputs enter by content, so an upstream task that reruns and
// yields the same bytes leaves its dependents' keys unchanged (early
// cutoff).

const keyVersion = "thv task v3"

// keyParts is everything a key is made of, kept to explain staleness.
type keyParts struct {
	Kind   string
	Code   *codeid.Identity
	Params json.RawMessage
	Inputs map[string]artifacts.Digest // role → digest
}

// canonicalParams encodes params as JSON: struct fields in declaration
// order, map keys sorted, floats in shortest round-trip form.
func canonicalParams(params any) (json.RawMessage, error) {
	if raw, ok := params.(json.RawMessage); ok {
		return raw, nil
	}
	b, err := json.Marshal(params)
	if err != nil {
		return nil, fmt.Errorf("encoding task parameters: %w", err)
	}
	return b, nil
}

// preimage is the whole text the key hashes: a head shared by every task
// of one kind and code identity, then the task's own tail.
func (k keyParts) preimage() []byte { return k.tail(k.head()) }

func (k keyParts) head() []byte {
	b := make([]byte, 0, 128)
	b = append(append(append(b, keyVersion...), "\nkind "...), k.Kind...)
	b = append(append(append(b, "\ncode "...), k.Code.Digest...), '\n')
	return b
}

func (k keyParts) tail(b []byte) []byte {
	b = append(append(append(b, "params "...), k.Params...), '\n')
	for _, role := range sortedKeys(k.Inputs) {
		d := k.Inputs[role]
		b = append(append(append(b, "input "...), role...), " sha256:"...)
		b = append(hex.AppendEncode(b, d[:]), '\n')
	}
	return b
}

func (k keyParts) key() artifacts.Key { return sha256.Sum256(k.preimage()) }

// keyHasher computes keys fast: the SHA-256 state after each distinct head
// (the same for thousands of tasks) is kept and resumed, so a key costs the
// hash of its tail only. The result is
// the same SHA-256 of the same preimage (tested against keyParts.key).
type keyHasher struct {
	heads map[string][]byte // kind + code identity digest → marshalled state
	buf   []byte
}

func (h *keyHasher) key(k keyParts, codeDigest string) artifacts.Key {
	if h.heads == nil {
		h.heads = map[string][]byte{}
	}
	id := k.Kind + "\x00" + codeDigest
	state, ok := h.heads[id]
	d := sha256.New()
	if !ok {
		d.Write(k.head())
		state, _ = d.(encoding.BinaryMarshaler).MarshalBinary()
		h.heads[id] = state
	} else if err := d.(encoding.BinaryUnmarshaler).UnmarshalBinary(state); err != nil {
		return k.key() // cannot happen with the standard library's sha256
	}
	h.buf = k.tail(h.buf[:0])
	d.Write(h.buf)
	var out artifacts.Key
	d.Sum(out[:0])
	return out
}
