package pipeline

import (
	"context"
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
