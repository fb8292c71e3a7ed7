package run

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	_ "thv/algos/randomk" // registers RandomK
	_ "thv/algos/thvucb"  // registers THV-UCB
	"thv/envs"
	"thv/stages/formats"
	"thv/stages/stage"
)

// fakeRun is a simulation of a run whose trajectory has n rounds.
func fakeRun(calls *atomic.Int64, n int) func() ([]byte, []float64, error) {
	return func() ([]byte, []float64, error) {
		calls.Add(1)
		return []byte("summary"), make([]float64, n), nil
	}
}

// TestSimulationsPair: the second task of a pair takes the first's
// simulation, whichever comes first, and a third simulates again (the
// pair's entry is gone once both have had it).
func TestSimulationsPair(t *testing.T) {
	var calls atomic.Int64
	c := simulations{maxBytes: 1 << 20}
	first, err := c.do("a", fakeRun(&calls, 10))
	if err != nil {
		t.Fatal(err)
	}
	second, err := c.do("a", fakeRun(&calls, 10))
	if err != nil || second != first || calls.Load() != 1 || c.hits != 1 || c.misses != 1 {
		t.Fatalf("the pair's second: same entry %v, %d simulations, %d hits, %d misses, %v", second == first, calls.Load(), c.hits, c.misses, err)
	}
	if _, err := c.do("a", fakeRun(&calls, 10)); err != nil || calls.Load() != 2 {
		t.Fatalf("a third task: %d simulations, %v", calls.Load(), err)
	}
	if _, err := c.do("b", fakeRun(&calls, 10)); err != nil || calls.Load() != 3 {
		t.Fatalf("another key: %d simulations, %v", calls.Load(), err)
	}
	if len(c.byKey) != 2 || c.oldest.Len() != 2 || c.bytes != 2*first.size {
		t.Fatalf("%d keys, %d listed, %d bytes; want the third task's and b's, %d bytes", len(c.byKey), c.oldest.Len(), c.bytes, 2*first.size)
	}
}

// TestSimulationsEvict: past its budget the memo drops its oldest entries
// first and never holds more than the budget.
func TestSimulationsEvict(t *testing.T) {
	var calls atomic.Int64
	one, err := (&simulations{maxBytes: 1 << 20}).do("k0", fakeRun(&calls, 100))
	if err != nil {
		t.Fatal(err)
	}
	c := simulations{maxBytes: 3*one.size + one.size/2} // room for three
	for _, k := range []string{"k0", "k1", "k2", "k3", "k4"} {
		if _, err := c.do(k, fakeRun(&calls, 100)); err != nil {
			t.Fatal(err)
		}
		if c.bytes > c.maxBytes {
			t.Fatalf("after %s: %d bytes, above the budget %d", k, c.bytes, c.maxBytes)
		}
	}
	for _, k := range []string{"k0", "k1"} {
		if _, ok := c.byKey[k]; ok {
			t.Errorf("%s, among the oldest, is still kept", k)
		}
	}
	before := calls.Load()
	for _, k := range []string{"k2", "k3", "k4"} {
		if _, err := c.do(k, fakeRun(&calls, 100)); err != nil {
			t.Fatal(err)
		}
	}
	if calls.Load() != before || c.bytes != 0 || c.oldest.Len() != 0 {
		t.Fatalf("the newest three: %d simulations, %d bytes and %d entries left", calls.Load()-before, c.bytes, c.oldest.Len())
	}
	// A simulation bigger than the whole budget is not kept.
	small := simulations{maxBytes: 100}
	if _, err := small.do("big", fakeRun(&calls, 1000)); err != nil || small.bytes != 0 || len(small.byKey) != 0 {
		t.Fatalf("an entry above the budget: %d bytes, %d keys, %v", small.bytes, len(small.byKey), err)
	}
}

// TestSimulationsError: a failed simulation is not remembered, and a task
// waiting for it simulates for itself.
func TestSimulationsError(t *testing.T) {
	c := simulations{maxBytes: 1 << 20}
	failed := errors.New("cancelled")
	if _, err := c.do("a", func() ([]byte, []float64, error) { return nil, nil, failed }); err != failed {
		t.Fatalf("got %v", err)
	}
	if len(c.byKey) != 0 || c.bytes != 0 {
		t.Fatal("a failed simulation is kept")
	}
	var calls atomic.Int64
	if s, err := c.do("a", fakeRun(&calls, 3)); err != nil || calls.Load() != 1 || len(s.hv) != 3 {
		t.Fatalf("after a failure: %d simulations, %v", calls.Load(), err)
	}

	// The waiter of a failing simulation.
	c = simulations{maxBytes: 1 << 20}
	started, release := make(chan struct{}), make(chan struct{})
	go c.do("b", func() ([]byte, []float64, error) {
		close(started)
		<-release
		return nil, nil, failed
	})
	<-started
	go close(release)
	s, err := c.do("b", fakeRun(&calls, 4))
	if err != nil || len(s.hv) != 4 || calls.Load() != 2 {
		t.Fatalf("waiting for a failed simulation: %v, %d simulations", err, calls.Load())
	}
}

// TestSimulationsConcurrent: tasks of many pairs at once, both of a pair
// often together, simulate each run once and each get its result (run
// with -race).
func TestSimulationsConcurrent(t *testing.T) {
	c := simulations{maxBytes: 1 << 30}
	const pairs = 200
	var calls atomic.Int64
	var wg sync.WaitGroup
	got := make([]*simulation, 2*pairs)
	for i := range 2 * pairs {
		wg.Go(func() {
			key := string(rune('A' + i/2))
			s, err := c.do(key, func() ([]byte, []float64, error) {
				calls.Add(1)
				return []byte(key), []float64{float64(i / 2)}, nil
			})
			if err != nil {
				t.Error(err)
				return
			}
			got[i] = s
		})
	}
	wg.Wait()
	if calls.Load() != pairs || c.hits != pairs || c.misses != pairs {
		t.Fatalf("%d simulations, %d hits, %d misses for %d pairs", calls.Load(), c.hits, c.misses, pairs)
	}
	for i, s := range got {
		if s == nil || string(s.summary) != string(rune('A'+i/2)) || s.hv[0] != float64(i/2) {
			t.Fatalf("task %d got another run's simulation", i)
		}
	}
	if c.oldest.Len() != 0 || c.bytes != 0 {
		t.Fatalf("every pair done: %d entries, %d bytes kept", c.oldest.Len(), c.bytes)
	}
}

// TestTwinSameBytes: a run keeping its trajectory gives the same bytes
// whether it simulates or takes its plain run's simulation, and whichever
// of the pair runs first; a run of other parameters or inputs is not
// taken for it.
func TestTwinSameBytes(t *testing.T) {
	inst, err := envs.Generate("concave", 3, 20, 4)
	if err != nil {
		t.Fatal(err)
	}
	instBytes, err := formats.EncodeInstance(formats.Instance(*inst))
	if err != nil {
		t.Fatal(err)
	}
	benchBytes, err := formats.EncodeBenchmark(formats.Benchmark{VStar: 1, SStar: []int{0, 1, 2}, HVGreedy: 0.9, GStar: []int{2, 1, 0}})
	if err != nil {
		t.Fatal(err)
	}
	in := stage.Inputs{string(InstanceRole): instBytes, string(BenchmarkRole): benchBytes}
	run := func(p Params, in stage.Inputs) stage.Outputs {
		t.Helper()
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		out, err := Run(context.Background(), b, in)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	p := Params{Algo: "THV-UCB", Eta: 0.1, Params: map[string]float64{"delta": 0, "clip": 1}, K: 3, T: 200, Sigma: 0.05, Seed: 3, MinPulls: 2, Window: 50}
	twin := p
	twin.Trajectory = true

	reset := func() { simulated = simulations{maxBytes: maxSimulationBytes} }
	reset()
	alone := run(twin, in) // simulated, nothing to take
	if simulated.misses != 1 || simulated.hits != 0 {
		t.Fatalf("alone: %d hits, %d misses", simulated.hits, simulated.misses)
	}
	for _, order := range []string{"plain first", "twin first"} {
		reset()
		var plain, withMemo stage.Outputs
		if order == "plain first" {
			plain, withMemo = run(p, in), run(twin, in)
		} else {
			withMemo, plain = run(twin, in), run(p, in)
		}
		if simulated.hits != 1 || simulated.misses != 1 {
			t.Fatalf("%s: %d hits, %d misses, want the second to take the first's", order, simulated.hits, simulated.misses)
		}
		if string(withMemo[string(Summary)]) != string(alone[string(Summary)]) || string(withMemo[string(Trajectory)]) != string(alone[string(Trajectory)]) {
			t.Errorf("%s: the twin's outputs differ from a twin simulated alone", order)
		}
		if _, ok := plain[string(Trajectory)]; ok || string(plain[string(Summary)]) != string(alone[string(Summary)]) {
			t.Errorf("%s: the plain run's outputs differ", order)
		}
	}

	// What the key covers: any parameter, and either input's bytes.
	reset()
	run(p, in)
	other := twin
	other.Seed++
	run(other, in)
	otherBench, err := formats.EncodeBenchmark(formats.Benchmark{VStar: 1.5, SStar: []int{0, 1, 2}, HVGreedy: 0.9, GStar: []int{2, 1, 0}})
	if err != nil {
		t.Fatal(err)
	}
	out := run(twin, stage.Inputs{string(InstanceRole): instBytes, string(BenchmarkRole): otherBench})
	if simulated.hits != 0 || simulated.misses != 3 {
		t.Fatalf("other parameters or inputs: %d hits, %d misses, want none taken", simulated.hits, simulated.misses)
	}
	if string(out[string(Summary)]) == string(alone[string(Summary)]) {
		t.Error("another benchmark gave the same summary")
	}
	reset()
}
