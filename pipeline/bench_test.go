package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	"thv/artifacts"
)

// wide is a plan of n generators feeding groups of 10 sums, the shape of
// the paper's runs feeding their select and collect tasks.
func wide(n int) *Plan {
	p := NewPlan()
	var group *Task
	for i := range n {
		if i%10 == 0 {
			group = &Task{ID: fmt.Sprintf("sum/%d", i/10), Kind: "sum", Params: i / 10}
		}
		g := p.Add(&Task{ID: fmt.Sprintf("gen/%d", i), Kind: "gen", Roots: []string{"fake/famA"}, Params: genParams{Name: "g", N: i}})
		group.Deps = append(group.Deps, Dep{Name: g.ID, From: g, Output: "x"})
		if i%10 == 9 || i == n-1 {
			p.Add(group)
		}
	}
	return p
}

// BenchmarkEngine measures the engine's own cost per task (stages that do
// nothing): a cold pass (keys, specs, the local executor's store writes and
// index entries, the lock) and a no-op pass (keys, lock and index lookups).
// ns/op is per task.
func BenchmarkEngine(b *testing.B) {
	const n = 5000
	for _, cold := range []bool{true, false} {
		name := map[bool]string{true: "cold", false: "noop"}[cold]
		b.Run(name, func(b *testing.B) {
			code := newFakeCode()
			kinds := fakeKinds(b, code)
			dir := b.TempDir()
			var st *artifacts.Store
			open := func(sub string) {
				var err error
				if st, err = artifacts.Open(filepath.Join(dir, sub), artifacts.Create); err != nil {
					b.Fatal(err)
				}
			}
			open("warm")
			run := func() {
				plan := wide(n)
				proj, err := NewProject(plan, kinds, st, filepath.Join(st.Root(), "test.lock"), "bench")
				if err != nil {
					b.Fatal(err)
				}
				if _, err := proj.Repro(context.Background(), Options{Jobs: 2}); err != nil {
					b.Fatal(err)
				}
			}
			if !cold {
				run()
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if cold {
					b.StopTimer()
					open(fmt.Sprintf("cold%d", i))
					b.StartTimer()
				}
				run()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(wide(n).Tasks)), "ns/task")
		})
	}
}

// BenchmarkDecodeLock decodes a lock of 20,000 tasks in the run records'
// shape (the scale profile's lock is 70,826 such lines, 56.8 MB): what
// every no-op pass pays before anything else. ns/op is per lock.
func BenchmarkDecodeLock(b *testing.B) {
	l := &Lock{Version: lockVersion, Profile: "bench", Code: map[string]string{"thv/algos": "abc"}}
	for i := range 20000 {
		in, bench := artifacts.Sum(fmt.Appendf(nil, "i%d", i%8)), artifacts.Sum(fmt.Appendf(nil, "b%d", i%8))
		l.Tasks = append(l.Tasks, Record{
			ID:     fmt.Sprintf("run/d2/clusters/THV-UCB/eta=0.01/seed=%d", i),
			Kind:   "run",
			Key:    artifacts.Key(artifacts.Sum(fmt.Appendf(nil, "k%d", i))),
			Params: json.RawMessage(fmt.Sprintf(`{"algo":"THV-UCB","eta":0.01,"params":{"clip":1,"delta":0},"k":3,"T":300,"sigma":0.05,"seed":%d,"min_pulls":2,"init_ties":"lowest_index","reference":0,"hv_window":100}`, i)),
			Inputs: json.RawMessage(`{"benchmark":"` + bench.String() + `","instance":"` + in.String() + `"}`),
			Outputs: OutputsOf(map[string]artifacts.Digest{
				"summary":    artifacts.Sum(fmt.Appendf(nil, "s%d", i)),
				"trajectory": artifacts.Sum(fmt.Appendf(nil, "t%d", i)),
			}),
		})
	}
	data, err := l.encode()
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := decodeLock(data); err != nil {
			b.Fatal(err)
		}
	}
}
