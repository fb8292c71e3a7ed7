package stage

import (
	"context"
	"errors"
	"strings"
	"testing"
)

type params struct {
	K   int     `json:"k"`
	Eta float64 `json:"eta"`
}

func TestDecode(t *testing.T) {
	p, err := Decode[params]([]byte(`{"k":3,"eta":0.1}`))
	if err != nil || p != (params{K: 3, Eta: 0.1}) {
		t.Fatalf("Decode = %+v, %v", p, err)
	}
	for name, in := range map[string]string{
		"unknown field": `{"k":3,"eta":0.1,"T":100}`,
		"wrong type":    `{"k":"3"}`,
		"not JSON":      `k=3`,
		"empty":         ``,
	} {
		if _, err := Decode[params]([]byte(in)); err == nil || !strings.HasPrefix(err.Error(), "bad task parameters: ") {
			t.Errorf("%s: err = %v", name, err)
		}
	}
}

// TestRunIsAPlainFunc: a kind's Run has the plain type the engine stores.
func TestRunIsAPlainFunc(t *testing.T) {
	run := func(ctx context.Context, params []byte, in Inputs) (Outputs, error) {
		return Outputs{"x": params}, ctx.Err()
	}
	var plain func(context.Context, []byte, map[string][]byte) (map[string][]byte, error) = run
	out, err := plain(context.Background(), []byte("p"), nil)
	if err != nil || string(out["x"]) != "p" {
		t.Fatalf("got %v, %v", out, err)
	}
}

func TestStart(t *testing.T) {
	p, err := Start[params](context.Background(), []byte(`{"k":2}`))
	if err != nil || p.K != 2 {
		t.Fatalf("Start = %+v, %v", p, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Start[params](ctx, []byte(`{"k":2}`)); err != context.Canceled {
		t.Errorf("Start with a cancelled context: %v", err)
	}
}

func TestRead(t *testing.T) {
	in := Inputs{"a": []byte("12"), "b": []byte("x")}
	length := func(b []byte) (int, error) {
		if string(b) == "x" {
			return 0, errors.New("not a number")
		}
		return len(b), nil
	}
	if n, err := Read(in, "a", length); err != nil || n != 2 {
		t.Errorf("Read(a) = %d, %v", n, err)
	}
	if _, err := Read(in, "b", length); err == nil || err.Error() != "input b: not a number" {
		t.Errorf("Read(b): %v", err)
	}
	if _, err := Read(in, "c", length); err == nil || err.Error() != "missing input c" {
		t.Errorf("Read(c): %v", err)
	}
}
