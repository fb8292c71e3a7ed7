//go:build unix

package flock

import (
	"os"
	"path/filepath"
	"testing"
)

// TestExclusion: two open file descriptions of one file, in one process:
// an exclusive flock excludes every other, shared ones coexist, and a
// released or closed one frees the file.
func TestExclusion(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	open := func() *os.File {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	a, b := open(), open()
	if err := Acquire(a, true); err != nil {
		t.Fatal(err)
	}
	for _, exclusive := range []bool{true, false} {
		if ok, err := TryAcquire(b, exclusive); ok || err != nil {
			t.Fatalf("exclusive held: TryAcquire(exclusive %v) = %v, %v", exclusive, ok, err)
		}
	}
	if err := Release(a); err != nil {
		t.Fatal(err)
	}
	if ok, err := TryAcquire(b, false); !ok || err != nil {
		t.Fatalf("after Release: %v, %v", ok, err)
	}
	if ok, err := TryAcquire(a, false); !ok || err != nil {
		t.Fatalf("shared with shared: %v, %v", ok, err)
	}
	if ok, err := TryAcquire(open(), true); ok || err != nil {
		t.Fatalf("exclusive over shared: %v, %v", ok, err)
	}
	a.Close()
	b.Close()
	if ok, err := TryAcquire(open(), true); !ok || err != nil {
		t.Fatalf("after close: %v, %v", ok, err)
	}
}
