package run

import (
	"errors"
	"reflect"
	"testing"
)

// TestMemo: a hit is what decoding the same bytes gives, an error is never
// remembered, and the memo stays bounded.
func TestMemo(t *testing.T) {
	calls := 0
	var c memo[[]byte]
	dec := c.decode(func(b []byte) ([]byte, error) {
		calls++
		if len(b) == 0 {
			return nil, errors.New("empty")
		}
		return append([]byte("decoded:"), b...), nil
	})
	for range 3 {
		v, err := dec([]byte("abc"))
		if err != nil || string(v) != "decoded:abc" {
			t.Fatalf("got %q, %v", v, err)
		}
	}
	if calls != 1 {
		t.Fatalf("decoded %d times, want once", calls)
	}
	if v, err := dec([]byte("abd")); err != nil || string(v) != "decoded:abd" || calls != 2 {
		t.Fatalf("other bytes: got %q, %v after %d calls", v, err, calls)
	}
	for range 2 {
		if _, err := dec(nil); err == nil {
			t.Fatal("no error for bad bytes")
		}
	}
	if calls != 4 {
		t.Fatalf("an error was remembered: %d calls", calls)
	}
	for i := range 3 * memoSize {
		if _, err := dec([]byte{byte(i), byte(i >> 8), 1}); err != nil {
			t.Fatal(err)
		}
	}
	if len(c.m) > memoSize {
		t.Fatalf("memo holds %d entries, above %d", len(c.m), memoSize)
	}
	if !reflect.DeepEqual(c.m[string([]byte{byte(3*memoSize - 1), byte((3*memoSize - 1) >> 8), 1})], []byte("decoded:\xbf\x00\x01")) {
		t.Fatal("the latest entry is not remembered")
	}
}
