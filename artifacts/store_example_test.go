package artifacts_test

import (
	"crypto/sha256"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"thv/artifacts"
)

// A store keeps blobs by the SHA-256 of their bytes, and an index entry
// per task key naming its outputs. Put and Get are the object side; Get
// checks the bytes against their name.
func ExampleStore() {
	dir, err := os.MkdirTemp("", "store-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	s, err := artifacts.Open(filepath.Join(dir, ".thv"), artifacts.Create)
	if err != nil {
		log.Fatal(err)
	}

	d, err := s.Put([]byte("hello\n"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(d)
	b, err := s.Get(d)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%q\n", b)
	// Output:
	// sha256:5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03
	// "hello\n"
}

// An index entry records what a task produced under its key (which the
// pipeline computes from everything the task depends on): a later run
// with the same key finds its outputs with one read, then checks each is
// still present.
func ExampleStore_PutEntry() {
	dir, err := os.MkdirTemp("", "store-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	s, err := artifacts.Open(dir, artifacts.Create)
	if err != nil {
		log.Fatal(err)
	}

	table := []byte("a,b\n1,2\n")
	d, err := s.Put(table) // objects first, then the entry that names them
	if err != nil {
		log.Fatal(err)
	}
	key := artifacts.Key(sha256.Sum256([]byte("kind tables; code …; params …; inputs …")))
	err = s.PutEntry(artifacts.Entry{Key: key, Kind: "tables", Outputs: []artifacts.Output{{Name: "all.csv", Digest: d, Size: int64(len(table))}}})
	if err != nil {
		log.Fatal(err)
	}

	e, ok, err := s.GetEntry(key)
	if err != nil || !ok {
		log.Fatal(ok, err)
	}
	out, _ := e.Output("all.csv")
	fmt.Println(e.Kind, out.Name, out.Size, s.Has(out.Digest))
	_, ok, _ = s.GetEntry(artifacts.Key(sha256.Sum256([]byte("another task"))))
	fmt.Println("another key:", ok)
	// Output:
	// tables all.csv 8 true
	// another key: false
}
