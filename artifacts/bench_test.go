package artifacts

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"testing"
)

// BenchmarkNoOpLookup is the per-task cost of a no-op rerun: read the index
// entry, then stat each output.
func BenchmarkNoOpLookup(b *testing.B) {
	s := openTemp(b)
	k := Key(sha256.Sum256([]byte("task")))
	e := Entry{Key: k, Kind: "run", Meta: map[string]string{"preimage": "kind run\ncode sha256:...\nparams {\"T\":2000}\n"}}
	for i := range 2 {
		data := fmt.Appendf(nil, "output %d", i)
		d, err := s.Put(data)
		if err != nil {
			b.Fatal(err)
		}
		e.Outputs = append(e.Outputs, Output{Name: fmt.Sprint("out", i), Digest: d, Size: int64(len(data))})
	}
	if err := s.PutEntry(e); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		got, ok, err := s.GetEntry(k)
		if !ok || err != nil {
			b.Fatal(ok, err)
		}
		for _, o := range got.Outputs {
			if !s.Has(o.Digest) {
				b.Fatal("missing output")
			}
		}
	}
}

// BenchmarkPut100kB writes a new 100 kB object per iteration (temp file,
// fsync, rename, directory fsync).
func BenchmarkPut100kB(b *testing.B) {
	s := openTemp(b)
	data := make([]byte, 100_000)
	b.SetBytes(int64(len(data)))
	var n uint64
	for b.Loop() {
		n++
		binary.LittleEndian.PutUint64(data, n)
		if _, err := s.Put(data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPut100kBExisting is a Put of an object already present: hash,
// then read and hash the stored copy; nothing is written.
func BenchmarkPut100kBExisting(b *testing.B) {
	s := openTemp(b)
	data := make([]byte, 100_000)
	if _, err := s.Put(data); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := s.Put(data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkHas is the presence check of the no-op path, alone.
func BenchmarkHas(b *testing.B) {
	s := openTemp(b)
	d, err := s.Put([]byte("present"))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if !s.Has(d) {
			b.Fatal("missing")
		}
	}
}

// BenchmarkListing lists a store of 2000 objects and 1000 index entries
// (Objects and Keys), as the no-op path of a large pipeline does once.
func BenchmarkListing(b *testing.B) {
	s := openTemp(b)
	for i := range 2000 {
		data := fmt.Appendf(nil, "object %d", i)
		d, err := s.Put(data)
		if err != nil {
			b.Fatal(err)
		}
		if i%2 == 0 {
			e := Entry{Key: Key(sha256.Sum256(data)), Kind: "k", Outputs: []Output{{Name: "o", Digest: d, Size: int64(len(data))}}}
			if err := s.PutEntry(e); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		objs, err := s.Objects()
		if err != nil || len(objs) != 2000 {
			b.Fatal(len(objs), err)
		}
		keys, err := s.Keys()
		if err != nil || len(keys) != 1000 {
			b.Fatal(len(keys), err)
		}
	}
}

// BenchmarkPut4kB writes a new 4 kB object per iteration (a run's summary
// is of this order), in a store opened Create and in a Scratch one (no
// fsync): the difference is what the fsyncs cost per object.
func BenchmarkPut4kB(b *testing.B) {
	for _, mode := range []Mode{Create, Scratch} {
		b.Run(mode.String(), func(b *testing.B) {
			s, err := Open(b.TempDir()+"/.thv", mode)
			if err != nil {
				b.Fatal(err)
			}
			data := make([]byte, 4096)
			var n uint64
			for b.Loop() {
				n++
				binary.LittleEndian.PutUint64(data, n)
				if _, err := s.Put(data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDecodeDigest decodes a digest's 64 hex digits, from a string
// and from bytes (a lock file holds two or three per task, a fan-out
// directory's listing one per object).
func BenchmarkDecodeDigest(b *testing.B) {
	hexDigits := Sum([]byte("x")).Hex()
	var d Digest
	var ok bool
	b.Run("string", func(b *testing.B) {
		for b.Loop() {
			ok = decodeLowerHex(d[:], hexDigits)
		}
	})
	name := []byte(hexDigits)
	b.Run("bytes", func(b *testing.B) {
		for b.Loop() {
			ok = decodeLowerHex(d[:], name)
		}
	})
	if !ok {
		b.Fatal("not decoded")
	}
}
