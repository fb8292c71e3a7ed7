// Package codeid computes the code identity of a set of root packages: a
// complete description, derived from the import graph, of the code those
// packages run. It follows the Go build cache's action ID (cmd/go's
// buildActionID), which writes one line per package in the import graph and
// one per tool:
//
//   - one unit per in-module package of the transitive closure, hashed from its
//     source (embedded in the binary, so it is the code actually compiled in);
//   - one unit per third-party module that closure reaches, path@version with
//     its go.sum hash (h1:...), from the binary's build info;
//   - one unit for the Go toolchain (runtime.Version()), which covers the
//     standard library.
//
// A package's hash covers the token stream of every non-test .go file of its
// directory, whatever its build constraints (a platform-independent
// superset), together with the files' names (which carry GOOS/GOARCH
// constraints). Comments and layout are ignored, so comment-only and
// gofmt-only edits keep the identity, except //go: directives (//go:build,
// //go:embed, //go:noinline, ...), which change what is compiled and are kept;
// //go:build expressions are kept in canonical form. A package's imports are
// read from the same token stream (the import declarations after the package
// clause): files are tokenised, not parsed, since the embedded sources were
// compiled into the binary; a file must still scan, with a well-formed package
// clause and import declarations and matching brackets.
//
// Nothing is silently dropped: a reachable in-module package missing from the
// sources, a file that does not scan (or whose header or brackets are
// malformed), a cgo file, a third-party import missing from the third-party
// table, or a module missing from the build info (or without a checksum) is
// an error naming it and the fix.
//
// # Memo
//
// Files are tokenised by go/scanner, which takes about 9 ms of CPU for the
// packages a pipeline's tasks reach: too much to pay in every process when
// the answer depends only on the binary (its embedded sources and this
// code). A Module's Memo records, for every package it loaded, the SHA-256
// of the package's files, its hash and its imports, under the binary's Go
// build ID (Config.Binary, set by ForBinary; see BuildID); Seeded gives a
// later process of the same binary a Module that takes each package from
// the memo after checking that its files still have that SHA-256 (hashing
// them costs a fraction of scanning them: BenchmarkColdPipeline). Where the memo is kept, and who may
// use it, is the caller's: package pipeline keeps it in the store and
// verification never reads it, because nothing short of scanning the files
// again can tell a memo's hash from a forged one. (Until issue 20 a second,
// hand-written scanner beside go/scanner bought part of this time back in
// every process; testdata/normalised.golden pins the streams it gave.)
//
// # Build info under go test
//
// A binary built by go build, go install or go run records every module that
// provides a linked package, with its go.sum hash, and debug.ReadBuildInfo
// returns them as Deps (a replaced module has Replace set; its Sum is in
// Replace, and a directory replacement has none). A go test binary does too
// when the package under test is a main package (the test main copies its
// build info), but for any other package the build info has Main (the module)
// and NO Deps: cmd/go (load.TestPackagesFor, Go 1.26) computes the test main's
// build info before the test main's imports are loaded, so the walk over them
// finds nothing. ForBinary therefore falls back, in a test binary
// (BuildInfo.Path ends in ".test") whose build info lists no dependency, to
// "go list -m -json all" run in the working directory (the package directory,
// inside the module; go test puts its own toolchain's bin first on PATH), which
// reports the same versions and go.sum hashes. A binary built with -mod=vendor
// records no hashes: WithGoSumHashes takes them from the go.sum compiled in.
package codeid

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
)

// Config describes the module whose code is fingerprinted.
type Config struct {
	Path       string              // module path, e.g. "example.com/m"
	Sources    fs.FS               // module-relative tree holding the .go files of the fingerprintable packages
	ThirdParty map[string][]string // third-party import path (imported directly by an in-module package) → the module paths its package closure spans (generated)
	Modules    []*debug.Module     // from the build info: path, version, sum (Replace honoured)
	Toolchain  string              // runtime.Version()
	Hints      Hints               // the module's own words for the fixes its errors call for
	// Binary is the build identity of the binary that computes the
	// identities, its Go build ID (BinaryConfig sets it): a memo is used only
	// by the binary that wrote it (Seeded). "" means no memo.
	Binary string
	// SourcesInBinary says that Sources are compiled into that binary
	// (go:embed): its build ID, which hashes the binary's bytes, then
	// covers theirs, and Fingerprint need not read them. Tests that build
	// Modules over edited sources in one binary leave it false.
	SourcesInBinary bool
}

// Hints are how a module does what an error of its code identities calls
// for, in its own commands; the errors say it generically where one is "".
type Hints struct {
	// Build builds the binary in module mode, e.g. "go build ./cmd/tool".
	Build string
	// UpdateThirdParty regenerates Config.ThirdParty, e.g. "go generate
	// ./..." or the test that writes the table.
	UpdateThirdParty string
}

func (h Hints) build() string {
	if h.Build != "" {
		return h.Build
	}
	return "go build, from within the module"
}

func (h Hints) updateThirdParty() string {
	if h.UpdateThirdParty != "" {
		return h.UpdateThirdParty
	}
	return "list, for every third-party package an in-module package imports, the modules of its package closure (go list -deps)"
}

// Unit is one line of an identity: an in-module package and the hash of its
// normalised code ("example.com/m/hv", sha256 hex), a third-party module and its go.sum
// hash ("github.com/parquet-go/parquet-go@v0.32.0", "h1:..."; a replaced module
// is named "old=>new@version"), or the toolchain ("go", "go1.26.8").
type Unit struct{ Name, Hash string }

// Identity is the code identity of a set of root packages. It is shared by
// all callers asking for the same roots: do not modify it.
type Identity struct {
	Roots  []string // sorted, without duplicates
	Units  []Unit   // sorted by Name: in-module packages, third-party modules, toolchain
	Digest string   // "sha256:<hex>" over the lines "<name> <hash>\n"
}

// ToolchainUnit is the name of the toolchain's unit.
const ToolchainUnit = "go"

// Module computes identities for one Config. It is safe for concurrent use;
// results (and errors) are cached, so Config must not change after New.
type Module struct {
	c    Config
	mods map[string]*debug.Module // module path → build-info entry
	dups map[string]bool          // module paths listed twice in Config.Modules

	mu       sync.RWMutex
	pkgs     map[string]*pkg        // guarded by mu (write lock): loaded packages
	norm     normaliser             // guarded by mu (write lock): loads packages
	sets     map[string]*rootSet    // guarded by mu: per canonical root set
	seed     map[string]memoPackage // read-only: the memo of Seeded, by package path
	computed int                    // guarded by mu (write lock): packages normalised rather than taken from seed
	fp       fingerprint            // Fingerprint, computed once
}

type pkg struct {
	path    string
	files   []string // module-relative, sorted
	sources string   // hex SHA-256 of the files ("file <name> <length>\n<bytes>" each)
	hash    string   // hex SHA-256 of the files' normalised streams ("file <name> <length>\n<stream>" each)
	imports []string // sorted, unique
	err     error
}

type rootSet struct {
	roots    []string
	closure  []string // in-module packages, sorted
	closeErr error
	id       *Identity
	idErr    error
	idDone   bool
}

// New returns a Module for c. Errors in c surface from the methods, when they
// matter.
func New(c Config) *Module {
	m := &Module{
		c:    c,
		mods: make(map[string]*debug.Module, len(c.Modules)),
		dups: map[string]bool{},
		pkgs: map[string]*pkg{},
		sets: map[string]*rootSet{},
	}
	for _, d := range c.Modules {
		if d == nil {
			continue
		}
		if prev, ok := m.mods[d.Path]; ok && (prev.Version != d.Version || prev.Sum != d.Sum || !sameReplace(prev.Replace, d.Replace)) {
			m.dups[d.Path] = true
		}
		m.mods[d.Path] = d
	}
	return m
}

func sameReplace(a, b *debug.Module) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Path == b.Path && a.Version == b.Version && a.Sum == b.Sum
}

// ForBinary returns the Module of the running binary's BinaryConfig, with
// no hints.
func ForBinary(sources fs.FS, thirdParty map[string][]string) (*Module, error) {
	c, err := BinaryConfig(sources, thirdParty, Hints{})
	if err != nil {
		return nil, err
	}
	return New(c), nil
}

// BinaryConfig is the Config of the running binary, its modules and
// toolchain read from debug.ReadBuildInfo and runtime.Version() (see the
// package doc for test binaries).
func BinaryConfig(sources fs.FS, thirdParty map[string][]string, hints Hints) (Config, error) {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return Config{}, fmt.Errorf("code identity: the binary has no build info; build it in module mode (%s)", hints.build())
	}
	if bi.Main.Path == "" {
		return Config{}, fmt.Errorf("code identity: the build info of %q names no main module; build the binary from within its module (%s)", bi.Path, hints.build())
	}
	mods := bi.Deps
	if len(mods) == 0 && strings.HasSuffix(bi.Path, ".test") {
		var err error
		mods, err = GoListModules("", bi.Main.Path)
		if err != nil {
			return Config{}, fmt.Errorf("code identity: test binary %s has no dependency modules in its build info, and the fallback failed: %w", bi.Path, err)
		}
	}
	binary := ""
	if exe, err := os.Executable(); err == nil {
		binary, _ = BuildID(exe) // none: identities work, memos do not
	}
	return Config{
		Path:       bi.Main.Path,
		Sources:    sources,
		ThirdParty: thirdParty,
		Modules:    mods,
		Toolchain:  runtime.Version(),
		Hints:      hints,
		Binary:     binary,
	}, nil
}

// GoListModules returns the modules of the build list of the main module in
// dir ("" for the working directory), as the build info would list them, from
// "go list -m -json all". mainPath, if not "", must be the main module's path.
func GoListModules(dir, mainPath string) ([]*debug.Module, error) {
	cmd := exec.Command("go", "list", "-m", "-json", "all")
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list -m -json all: %v: %s", err, bytes.TrimSpace(stderr.Bytes()))
	}
	type listed struct {
		Path, Version, Sum string
		Main               bool
		Replace            *listed
	}
	toDebug := func(l *listed) *debug.Module {
		v := l.Version
		if v == "" {
			v = "(devel)"
		}
		return &debug.Module{Path: l.Path, Version: v, Sum: l.Sum}
	}
	var mods []*debug.Module
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var l listed
		if err := dec.Decode(&l); err == io.EOF {
			break
		} else if err != nil {
			return nil, fmt.Errorf("go list -m -json all: %w", err)
		}
		if l.Main {
			if mainPath != "" && l.Path != mainPath {
				return nil, fmt.Errorf("go list -m -json all in %q lists main module %q, want %q", dir, l.Path, mainPath)
			}
			continue
		}
		d := toDebug(&l)
		if l.Replace != nil {
			d.Sum = "" // as in the build info: the sum is the replacement's
			d.Replace = toDebug(l.Replace)
		}
		mods = append(mods, d)
	}
	return mods, nil
}

// Identity returns the code identity of the given in-module packages and
// everything they import.
func (m *Module) Identity(roots ...string) (*Identity, error) {
	key, sorted := canonical(roots)
	m.mu.RLock()
	s := m.sets[key]
	if s != nil && s.idDone {
		id, err := s.id, s.idErr
		m.mu.RUnlock()
		return id, err
	}
	m.mu.RUnlock()

	m.mu.Lock()
	defer m.mu.Unlock()
	s = m.set(key, sorted)
	if !s.idDone {
		s.id, s.idErr = m.identity(s)
		s.idDone = true
	}
	return s.id, s.idErr
}

// Packages returns the in-module packages the roots import transitively,
// roots included, sorted.
func (m *Module) Packages(roots ...string) ([]string, error) {
	key, sorted := canonical(roots)
	m.mu.RLock()
	s := m.sets[key]
	m.mu.RUnlock()
	if s == nil {
		m.mu.Lock()
		s = m.set(key, sorted)
		m.mu.Unlock()
	}
	return slices.Clone(s.closure), s.closeErr
}

// Files returns the module-relative names of the files hashed for the
// in-module package pkg, sorted.
func (m *Module) Files(pkgPath string) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.dir(pkgPath); !ok {
		return nil, fmt.Errorf("code identity: %q is not in module %s", pkgPath, m.c.Path)
	}
	p := m.load(pkgPath)
	return slices.Clone(p.files), p.err
}

// Imports returns the imports from outside the module (standard library and
// third-party) of the packages Packages(roots...) returns, sorted. It does not
// use the third-party table, which is generated from it.
func (m *Module) Imports(roots ...string) ([]string, error) {
	pkgs, err := m.Packages(roots...)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for _, pp := range pkgs {
		for _, imp := range m.pkgs[pp].imports {
			if _, in := m.dir(imp); !in {
				out = append(out, imp)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// canonical returns the cache key of a root set and the sorted, deduplicated
// roots.
func canonical(roots []string) (string, []string) {
	if len(roots) == 1 {
		return roots[0], roots
	}
	sorted := slices.Clone(roots)
	slices.Sort(sorted)
	sorted = slices.Compact(sorted)
	return strings.Join(sorted, "\n"), sorted
}

// set returns the root set for key, computing its closure. m.mu must be held
// for writing.
func (m *Module) set(key string, roots []string) *rootSet {
	if s := m.sets[key]; s != nil {
		return s
	}
	s := &rootSet{roots: slices.Clone(roots)}
	s.closure, s.closeErr = m.closure(s.roots)
	m.sets[key] = s
	return s
}

// dir returns the Sources directory of an in-module import path.
func (m *Module) dir(importPath string) (string, bool) {
	if importPath == m.c.Path {
		return ".", true
	}
	if rest, ok := strings.CutPrefix(importPath, m.c.Path+"/"); ok && m.c.Path != "" {
		return rest, true
	}
	return "", false
}

func (m *Module) closure(roots []string) ([]string, error) {
	if m.c.Path == "" {
		return nil, errors.New("code identity: Config.Path (the module path) is empty")
	}
	if m.c.Sources == nil {
		return nil, errors.New("code identity: Config.Sources is nil")
	}
	if len(roots) == 0 {
		return nil, errors.New("code identity: no root package")
	}
	importedBy := map[string]string{}
	var stack []string
	for _, r := range roots {
		if _, ok := m.dir(r); !ok {
			return nil, fmt.Errorf("code identity: root %q is not a package of module %s", r, m.c.Path)
		}
		if _, seen := importedBy[r]; !seen {
			importedBy[r] = ""
			stack = append(stack, r)
		}
	}
	for len(stack) > 0 {
		pp := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		p := m.load(pp)
		if p.err != nil {
			return nil, fmt.Errorf("%w%s", p.err, chain(importedBy, pp))
		}
		for _, imp := range p.imports {
			if _, in := m.dir(imp); !in {
				continue
			}
			if _, seen := importedBy[imp]; !seen {
				importedBy[imp] = pp
				stack = append(stack, imp)
			}
		}
	}
	out := make([]string, 0, len(importedBy))
	for pp := range importedBy {
		out = append(out, pp)
	}
	slices.Sort(out)
	return out, nil
}

// chain describes how pp was reached, for errors.
func chain(importedBy map[string]string, pp string) string {
	var via []string
	for p := importedBy[pp]; p != ""; p = importedBy[p] {
		via = append(via, p)
	}
	if len(via) == 0 {
		return ""
	}
	return " (imported by " + strings.Join(via, " <- ") + ")"
}

func (m *Module) identity(s *rootSet) (*Identity, error) {
	if s.closeErr != nil {
		return nil, s.closeErr
	}
	if m.c.Toolchain == "" {
		return nil, errors.New("code identity: Config.Toolchain is empty; set it to runtime.Version()")
	}
	units := make([]Unit, 0, len(s.closure)+16)
	type via struct{ imp, pkg string }
	modules := map[string]via{} // module path → the import that reaches it
	for _, pp := range s.closure {
		p := m.pkgs[pp]
		units = append(units, Unit{Name: pp, Hash: p.hash})
		for _, imp := range p.imports {
			if _, in := m.dir(imp); in {
				continue
			}
			mps, third := m.c.ThirdParty[imp]
			if !third {
				if isStandard(imp) {
					continue // covered by the toolchain unit
				}
				return nil, fmt.Errorf("code identity: package %s imports %q, which is not in the third-party table (Config.ThirdParty); regenerate it: %s", pp, imp, m.c.Hints.updateThirdParty())
			}
			if len(mps) == 0 {
				return nil, fmt.Errorf("code identity: the third-party table lists no module for %q (imported by %s); regenerate it: %s", imp, pp, m.c.Hints.updateThirdParty())
			}
			for _, mp := range mps {
				if _, ok := modules[mp]; !ok {
					modules[mp] = via{imp, pp}
				}
			}
		}
	}
	for _, mp := range slices.Sorted(maps.Keys(modules)) { // sorted: the first error is always the same
		u, err := m.moduleUnit(mp)
		if err != nil {
			return nil, fmt.Errorf("code identity: module %s (reached through import %q of package %s): %w", mp, modules[mp].imp, modules[mp].pkg, err)
		}
		units = append(units, u)
	}
	units = append(units, Unit{Name: ToolchainUnit, Hash: m.c.Toolchain})
	slices.SortFunc(units, func(a, b Unit) int { return strings.Compare(a.Name, b.Name) })
	lines := make([]byte, 0, 96*len(units))
	for _, u := range units {
		lines = append(lines, u.Name...)
		lines = append(lines, ' ')
		lines = append(lines, u.Hash...)
		lines = append(lines, '\n')
	}
	sum := sha256.Sum256(lines)
	return &Identity{
		Roots:  s.roots,
		Units:  units,
		Digest: "sha256:" + hex.EncodeToString(sum[:]),
	}, nil
}

func (m *Module) moduleUnit(mp string) (Unit, error) {
	if mp == m.c.Path {
		return Unit{}, errors.New("the third-party table names the main module; regenerate it: " + m.c.Hints.updateThirdParty())
	}
	if m.dups[mp] {
		return Unit{}, errors.New("listed twice, differently, in Config.Modules")
	}
	d, ok := m.mods[mp]
	if !ok {
		return Unit{}, fmt.Errorf("not in the build info's modules (Config.Modules): build the binary in module mode from module %s so that it links the package (%s), and regenerate the third-party table if it is stale: %s", m.c.Path, m.c.Hints.build(), m.c.Hints.updateThirdParty())
	}
	if r := d.Replace; r != nil {
		if r.Version == "" || r.Version == "(devel)" || r.Sum == "" {
			return Unit{}, fmt.Errorf("replaced by %s %s, which has no checksum (a directory replacement?): its code cannot be identified; replace it by a module version, or move the code into module %s", r.Path, r.Version, m.c.Path)
		}
		return Unit{Name: d.Path + "=>" + r.Path + "@" + r.Version, Hash: r.Sum}, nil
	}
	if d.Version == "" || d.Version == "(devel)" || d.Sum == "" {
		return Unit{}, fmt.Errorf("version %q has no checksum in the build info (built with -mod=vendor?); build with the module cache (-mod=readonly)", d.Version)
	}
	return Unit{Name: d.Path + "@" + d.Version, Hash: d.Sum}, nil
}

// isStandard reports whether an import path names a standard-library package,
// by cmd/go's rule (search.IsStandardImportPath): its first element has no
// dot. In-module and third-party paths are recognised before it is asked.
func isStandard(importPath string) bool {
	first, _, _ := strings.Cut(importPath, "/")
	return !strings.Contains(first, ".")
}

// load returns the package importPath, loading it on first use. m.mu must be
// held for writing.
func (m *Module) load(importPath string) *pkg {
	if p := m.pkgs[importPath]; p != nil {
		return p
	}
	p := &pkg{path: importPath}
	p.err = m.loadInto(p)
	m.pkgs[importPath] = p
	return p
}

func (m *Module) loadInto(p *pkg) error {
	dir, _ := m.dir(p.path)
	entries, err := fs.ReadDir(m.c.Sources, dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("code identity: package %s is not in the embedded sources (no directory %q): add its top-level directory to the //go:embed line of sources.go", p.path, dir)
		}
		return fmt.Errorf("code identity: package %s: %w", p.path, err)
	}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") ||
			strings.HasPrefix(name, "_") || strings.HasPrefix(name, ".") { // cmd/go ignores _* and .* files
			continue
		}
		p.files = append(p.files, path.Join(dir, name))
	}
	if len(p.files) == 0 {
		return fmt.Errorf("code identity: package %s has no non-test Go files in the embedded sources (directory %q): add them to the //go:embed line of sources.go", p.path, dir)
	}
	slices.Sort(p.files)
	if ok, err := m.fromSeed(p); ok || err != nil {
		if err != nil {
			return fmt.Errorf("code identity: package %s: %w", p.path, err)
		}
		return nil
	}
	m.computed++
	n := &m.norm
	n.imports = n.imports[:0]
	h, raw := sha256.New(), sha256.New()
	for _, f := range p.files {
		src, err := n.read(m.c.Sources, f)
		if err != nil {
			return fmt.Errorf("code identity: package %s: %w", p.path, err)
		}
		writeFileHeader(raw, &n.line, f, len(src))
		raw.Write(src)
		if err := n.normalise(f, src); err != nil {
			return fmt.Errorf("code identity: package %s: %w", p.path, err)
		}
		// "file <name> <length of the stream>\n", then the stream.
		writeFileHeader(h, &n.line, f, len(n.out))
		h.Write(n.out)
	}
	imports := slices.Clone(n.imports)
	slices.Sort(imports)
	p.imports = slices.Compact(imports)
	p.hash = hex.EncodeToString(h.Sum(nil))
	p.sources = hex.EncodeToString(raw.Sum(nil))
	return nil
}
