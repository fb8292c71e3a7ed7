package artifacts

import (
	"bytes"
	"crypto/sha256"
	"reflect"
	"testing"
)

// fuzzKey is the key the fuzzed index files are read for (the seeds in
// testdata/fuzz/FuzzDecodeEntry hold it).
var fuzzKey = Key(sha256.Sum256([]byte("fuzz")))

// FuzzDecodeEntry feeds arbitrary bytes to the index-entry reader. It must
// never panic, and an entry it accepts must be safe and canonical in
// meaning: every output name a single safe path component, digests
// non-zero, sizes non-negative, names sorted and unique; PutEntry's encoding
// of it reads back as the same entry and encodes to the same bytes.
//
//	go test ./artifacts -run '^$' -fuzz FuzzDecodeEntry -fuzztime 60s
func FuzzDecodeEntry(f *testing.F) {
	d1, d2 := Sum([]byte("one")), Sum([]byte("two"))
	for _, e := range []Entry{
		{Key: fuzzKey, Kind: "run", Outputs: []Output{{"summary", d1, 3}, {"trajectory", d2, 3}}, Meta: map[string]string{"preimage": "thv task v2\nkind run\n"}},
		{Key: fuzzKey, Kind: "tables", Outputs: []Output{}},
	} {
		data, err := encodeEntry(e)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		e, err := decodeEntry(data, fuzzKey)
		if err != nil {
			return
		}
		if e.Key != fuzzKey || e.Kind == "" {
			t.Fatalf("accepted entry with key %v, kind %q", e.Key, e.Kind)
		}
		for i, o := range e.Outputs {
			if err := CheckName(o.Name); err != nil {
				t.Fatalf("accepted an unsafe output name: %v", err)
			}
			if o.Digest.IsZero() || o.Size < 0 {
				t.Fatalf("accepted output %q with digest %v, size %d", o.Name, o.Digest, o.Size)
			}
			if i > 0 && e.Outputs[i-1].Name >= o.Name {
				t.Fatalf("accepted outputs out of order: %q, %q", e.Outputs[i-1].Name, o.Name)
			}
		}
		enc, err := encodeEntry(e)
		if err != nil {
			t.Fatalf("cannot encode an accepted entry: %v", err)
		}
		back, err := decodeEntry(enc, fuzzKey)
		if err != nil {
			t.Fatalf("PutEntry's encoding of an accepted entry is rejected: %v\n%s", err, enc)
		}
		if !reflect.DeepEqual(back, e) {
			t.Fatalf("round trip changed the entry:\n%+v\n%+v", e, back)
		}
		if again, _ := encodeEntry(back); !bytes.Equal(again, enc) {
			t.Fatalf("encoding is not stable:\n%s\n%s", enc, again)
		}
	})
}
