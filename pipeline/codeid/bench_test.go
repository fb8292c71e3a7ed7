package codeid

import (
	"bytes"
	"io/fs"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"thv"
)

// benchModule is the thv module with stand-in modules for its third-party
// table (the benchmark does not need real sums).
func benchModule() *Module {
	seen := map[string]bool{}
	var mods []*debug.Module
	for _, mps := range thv.ThirdParty {
		for _, mp := range mps {
			if !seen[mp] {
				seen[mp] = true
				mods = append(mods, &debug.Module{Path: mp, Version: "v0.0.0", Sum: "h1:bench="})
			}
		}
	}
	return New(Config{Path: "thv", Sources: thv.Sources, ThirdParty: thv.ThirdParty, PackageNames: thv.ThirdPartyNames, Modules: mods, Toolchain: runtime.Version()})
}

// A run task's roots: the run kind's entry and its algorithm's constructor.
var benchRoots = []string{"thv/stages/run.Run", "thv/algos/thvucb.init"}

func BenchmarkIdentity(b *testing.B) {
	b.Run("cached", func(b *testing.B) {
		m := benchModule()
		if _, err := m.Identity(benchRoots...); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := m.Identity(benchRoots...); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("cached-1-root", func(b *testing.B) {
		m := benchModule()
		if _, err := m.Identity(benchRoots[0]); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := m.Identity(benchRoots[0]); err != nil {
				b.Fatal(err)
			}
		}
	})
	// A root set not seen before, its packages already loaded.
	b.Run("uncached-set", func(b *testing.B) {
		m := benchModule()
		if _, err := m.Identity(benchRoots...); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			m.mu.Lock()
			clear(m.sets)
			m.mu.Unlock()
			if _, err := m.Identity(benchRoots...); err != nil {
				b.Fatal(err)
			}
		}
	})
	// A fresh Module: every reachable file read, tokenised and hashed.
	b.Run("cold", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := benchModule().Identity(benchRoots...); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// pipelineRoots are the roots of the pipeline's tasks, read from thv.Sources:
// the Run function of every package under stages/ that has one (a stage
// kind), and the run kind's with the init function of every algorithm
// family under algos/ that has one (where it registers its constructors).
func pipelineRoots(tb testing.TB) [][]string {
	var roots [][]string
	for _, top := range []string{"stages", "algos"} {
		entries, err := fs.ReadDir(thv.Sources, top)
		if err != nil {
			tb.Fatal(err)
		}
		for _, e := range entries {
			if !e.IsDir() {
				continue
			}
			dir := top + "/" + e.Name()
			files, err := fs.Glob(thv.Sources, dir+"/*.go")
			if err != nil {
				tb.Fatal(err)
			}
			for _, f := range files {
				if strings.HasSuffix(f, "_test.go") {
					continue
				}
				src, err := fs.ReadFile(thv.Sources, f)
				if err != nil {
					tb.Fatal(err)
				}
				if top == "stages" && bytes.Contains(src, []byte("\nfunc Run(")) {
					roots = append(roots, []string{"thv/" + dir + ".Run"})
					break
				}
				if top == "algos" && bytes.Contains(src, []byte("\nfunc init(")) {
					roots = append(roots, []string{"thv/stages/run.Run", "thv/" + dir + ".init"})
					break
				}
			}
		}
	}
	if len(roots) < 10 {
		tb.Fatalf("only %d pipeline roots in thv.Sources", len(roots))
	}
	return roots
}

// BenchmarkColdPipeline is the first identities of a process: a fresh Module
// and the identity of every task root of the pipeline (one per stage kind and
// algorithm family, as the scheduler asks for them), every package read,
// tokenised and hashed once ("scan"), or, in a process of a binary that has
// kept its memo ("memo"), every package read and its files' SHA-256 checked
// against the memo, the memo decoded first.
func BenchmarkColdPipeline(b *testing.B) {
	roots := pipelineRoots(b)
	identities := func(m *Module) {
		for _, r := range roots {
			if _, err := m.Identity(r...); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("scan", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			identities(benchModule())
		}
	})
	b.Run("memo", func(b *testing.B) {
		m := benchModule()
		m.c.Binary = "bench/binary"
		identities(m)
		memo, _ := m.Memo()
		b.ReportAllocs()
		for b.Loop() {
			s, err := m.Seeded(memo)
			if err != nil {
				b.Fatal(err)
			}
			identities(s)
			if s.computed != 0 {
				b.Fatalf("%d packages computed despite the memo", s.computed)
			}
		}
	})
}
