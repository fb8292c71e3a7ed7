package pipeline

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"

	"thv/artifacts"
)

// TestOutputsJSONAsMap: Outputs encode to the bytes encoding/json gives
// the map they stand for (sorted keys, its escaping), in a record too, and
// decode back; an unsorted or repeated name is refused.
func TestOutputsJSONAsMap(t *testing.T) {
	for _, m := range []map[string]artifacts.Digest{
		nil,
		{},
		{"summary": artifacts.Sum([]byte("s"))},
		{"trajectory": artifacts.Sum([]byte("t")), "summary": artifacts.Sum([]byte("s")), "a<b&c>": artifacts.Sum(nil), "é": artifacts.Sum([]byte("e")), `q"`: artifacts.Sum([]byte("q"))},
	} {
		o := OutputsOf(m)
		got, err := json.Marshal(o)
		want, _ := json.Marshal(m)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%v: %s (%v), want %s", m, got, err, want)
		}
		// The record's line, as when it held a map.
		type mapRecord struct {
			ID      string                      `json:"id"`
			Outputs map[string]artifacts.Digest `json:"outputs"`
		}
		type sliceRecord struct {
			ID      string  `json:"id"`
			Outputs Outputs `json:"outputs"`
		}
		got, _ = json.Marshal(sliceRecord{"t", o})
		want, _ = json.Marshal(mapRecord{"t", m})
		if !bytes.Equal(got, want) {
			t.Fatalf("record: %s, want %s", got, want)
		}
		var back Outputs
		if err := json.Unmarshal(want[bytes.Index(want, []byte(`"outputs":`))+10:len(want)-1], &back); err != nil || !back.Equal(o) || (back == nil) != (m == nil) {
			t.Fatalf("decoded %v (%v), want %v", back, err, o)
		}
		for name, d := range m {
			if g, ok := o.Get(name); !ok || g != d {
				t.Fatalf("Get(%q) = %v, %v", name, g, ok)
			}
		}
		if _, ok := o.Get("absent"); ok {
			t.Fatal("Get of an absent name")
		}
	}
	d := artifacts.Sum(nil)
	for _, bad := range []Outputs{{{"b", d}, {"a", d}}, {{"a", d}, {"a", d}}} {
		if b, err := json.Marshal(bad); err == nil {
			t.Errorf("%v encoded as %s", bad, b)
		}
	}
}

// TestCommittedLockRewritesByteForByte: the committed thv.lock, read and
// written again, gives its own bytes (its records' outputs decoded into
// Outputs and encoded back).
func TestCommittedLockRewritesByteForByte(t *testing.T) {
	want, err := os.ReadFile("../thv.lock")
	if err != nil {
		t.Fatal(err)
	}
	l, err := ReadLock("../thv.lock")
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Tasks) < 1000 {
		t.Fatalf("the committed lock has %d tasks", len(l.Tasks))
	}
	got, err := l.encode()
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("rewritten: %d bytes (%v), the file %d; equal %v", len(got), err, len(want), bytes.Equal(got, want))
	}
}
