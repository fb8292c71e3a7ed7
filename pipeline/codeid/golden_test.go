package codeid

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"testing"

	"thv"
)

var update = flag.Bool("update", false, "rewrite testdata/normalised.golden with what the current normaliser computes")

// goldenPath pins the normaliser's output: a code identity is a hash of
// normalised token streams, so any change of the stream of any file changes
// identities, hence task keys, and reruns the pipeline.
//
// Each line is a fact about contents, not about a file name, so it stays
// true however the sources change:
//
//	file <sha256 of the file> <sha256 of its normalised stream, or "error"> <name> [<import>...]
//	package <sha256 of the package's files> <package hash> <import path> [<import>...]
//
// where a package's files are hashed "file <name> <length>\n<bytes>" for
// each non-test file, in name order, and its hash is that of all its
// declarations' units (pkg.hash). A file or package whose contents have
// changed since the facts were written is not pinned any more (only
// logged); -update rewrites the facts for the current contents.
//
// The facts are independent of how the normaliser is written: they pin
// the streams themselves, so that a rewrite of the normaliser (its lexer,
// its splitting into declarations) that changes any stream fails here.
const goldenPath = "testdata/normalised.golden"

type goldenFile struct {
	name string
	src  []byte
	// frozen: the contents are part of this package's tests (fake module,
	// odd headers, fuzz seeds), so they must always be pinned.
	frozen bool
}

// goldenCorpus returns the files the golden facts are about: every Go file of
// thv.Sources (tests and test data included) and the files this package's
// tests hold.
func goldenCorpus(t *testing.T) []goldenFile {
	var files []goldenFile
	err := fs.WalkDir(thv.Sources, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") {
			return err
		}
		src, err := fs.ReadFile(thv.Sources, p)
		files = append(files, goldenFile{name: "thv/" + p, src: src})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for n := range fakeFiles {
			if strings.HasSuffix(n, ".go") && !yield(n) {
				return
			}
		}
	}) {
		files = append(files, goldenFile{name: "ex/" + name, src: []byte(fakeFiles[name]), frozen: true})
	}
	for i, src := range oddHeaders {
		files = append(files, goldenFile{name: fmt.Sprintf("odd-header-%d.go", i), src: []byte(src), frozen: true})
	}
	for i, src := range fuzzSeeds {
		files = append(files, goldenFile{name: fmt.Sprintf("fuzz-seed-%d.go", i), src: []byte(src), frozen: true})
	}
	return files
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// fileFact is the golden fact of one file, computed by the normaliser.
func fileFact(f goldenFile) (key, fact string) {
	key = "file " + sha256Hex(f.src)
	stream, imports, err := normalise(f.name, f.src)
	if err != nil {
		return key, "error " + f.name
	}
	return key, strings.Join(append([]string{sha256Hex(stream), f.name}, imports...), " ")
}

// packageFacts returns the golden facts of every package of a module's
// sources.
func packageFacts(t *testing.T, c Config) map[string]string {
	module, fsys := c.Path, c.Sources
	dirs := map[string]bool{}
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && (d.Name() == "testdata" || p != "." && strings.HasPrefix(d.Name(), "_")) {
			return fs.SkipDir
		}
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".go") && !strings.HasSuffix(p, "_test.go") {
			dirs[path.Dir(p)] = true
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	m := New(c)
	facts := map[string]string{}
	for dir := range dirs {
		pp := module
		if dir != "." {
			pp += "/" + dir
		}
		files, err := m.Files(pp)
		if err != nil {
			t.Fatalf("%s: %v", pp, err)
		}
		if _, err := m.Packages(pp); err != nil {
			// The wiring (thv/protocol) imports packages outside
			// the sources: no identity reaches it.
			t.Logf("%s: no facts: %v", pp, err)
			continue
		}
		raw := sha256.New()
		for _, f := range files {
			src, err := fs.ReadFile(fsys, f)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(raw, "file %s %d\n", path.Base(f), len(src))
			raw.Write(src)
		}
		m.mu.Lock()
		p := m.pkgs[pp]
		err = m.resolve(p)
		m.mu.Unlock()
		if err != nil {
			t.Logf("%s: no facts: %v", pp, err)
			continue
		}
		if sources := hex.EncodeToString(raw.Sum(nil)); p.sources != sources {
			t.Errorf("%s: the Module's digest of the sources (its memo's) is %s, want %s", pp, p.sources, sources)
		}
		facts["package "+hex.EncodeToString(raw.Sum(nil))] = strings.Join(append([]string{p.hash, pp}, p.imports...), " ")
	}
	return facts
}

func readGolden(t *testing.T) map[string]string {
	data, err := os.ReadFile(goldenPath)
	if err != nil {
		t.Fatalf("%v (write it with: go test ./pipeline/codeid -run TestNormalisedGolden -update)", err)
	}
	facts := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.SplitN(line, " ", 3)
		if len(f) != 3 || (f[0] != "file" && f[0] != "package") || len(f[1]) != 64 {
			t.Fatalf("%s:%d: malformed line %q", goldenPath, n, line)
		}
		facts[f[0]+" "+f[1]] = f[2]
	}
	return facts
}

// TestNormalisedGolden checks the normalised stream and imports of every
// file, and the hash and imports of every package, whose contents the golden
// facts know.
func TestNormalisedGolden(t *testing.T) {
	got := map[string]string{}
	frozen := map[string]string{} // key → name, for files that must be pinned
	var sources []string          // keys of the files of thv.Sources
	for _, f := range goldenCorpus(t) {
		key, fact := fileFact(f)
		got[key] = fact
		if f.frozen {
			frozen[key] = f.name
		}
		if strings.HasPrefix(f.name, "thv/") {
			sources = append(sources, key)
		}
	}
	pkgs := packageFacts(t, thvConfig())
	for k, v := range packageFacts(t, fakeConfig(nil)) {
		pkgs[k] = v
		frozen[k] = strings.Fields(v)[1]
	}
	for k, v := range pkgs {
		got[k] = v
	}

	if *update {
		var b strings.Builder
		b.WriteString("# Golden facts of pipeline/codeid's normaliser (see goldenPath in golden_test.go).\n")
		b.WriteString("# A change of any line changes code identities, hence task keys: regenerate only on purpose,\n")
		b.WriteString("# with: go test ./pipeline/codeid -run TestNormalisedGolden -update\n")
		for _, k := range slices.Sorted(func(yield func(string) bool) {
			for k := range got {
				if !yield(k) {
					return
				}
			}
		}) {
			fmt.Fprintf(&b, "%s %s\n", k, got[k])
		}
		if err := os.WriteFile(goldenPath, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %d facts to %s", len(got), goldenPath)
		return
	}

	want := readGolden(t)
	pinned, pinnedPkgs := 0, 0
	for k, fact := range got {
		w, ok := want[k]
		if !ok {
			if name, isFrozen := frozen[k]; isFrozen {
				t.Errorf("%s: not in %s; a test file was added or changed: run go test ./pipeline/codeid -run TestNormalisedGolden -update", name, goldenPath)
			} else {
				t.Logf("not pinned (changed since %s was written): %s", goldenPath, fact)
			}
			continue
		}
		pinned++
		if strings.HasPrefix(k, "package ") {
			pinnedPkgs++
		}
		// The name is that of whichever file had the contents; the rest must agree.
		if gf, wf := strings.Fields(fact), strings.Fields(w); gf[0] != wf[0] || !slices.Equal(gf[2:], wf[2:]) {
			t.Errorf("%s: the normaliser now gives\n\t%s\nwhere %s pins\n\t%s\n"+
				"this changes code identities, hence every task key that covers the file; if that is intended, run go test ./pipeline/codeid -run TestNormalisedGolden -update",
				k, fact, goldenPath, w)
		}
	}
	pinnedSources := 0
	for _, k := range sources {
		if _, ok := want[k]; ok {
			pinnedSources++
		}
	}
	nSources := len(sources)
	t.Logf("%d facts checked (%d of the %d files of thv.Sources, %d packages)", pinned, pinnedSources, nSources, pinnedPkgs)
	// The facts decay as the sources change; keep at least half of them
	// checkable.
	if pinnedSources*2 < nSources {
		t.Errorf("only %d of the %d Go files of thv.Sources are pinned: refresh %s (go test ./pipeline/codeid -run TestNormalisedGolden -update) after checking that TestHashesMatchParser passes", pinnedSources, nSources, goldenPath)
	}
}
