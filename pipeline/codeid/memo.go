package codeid

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"go/token"
	"io"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"
)

// memoVersion names the memo's format; the normaliser's version is the
// binary's build ID.
const memoVersion = "code identity memo 2"

// memoFile is a memo: the packages a Module computed, for the next process
// of the same binary.
type memoFile struct {
	Memo      string        `json:"memo"`      // memoVersion
	Binary    string        `json:"binary"`    // Config.Binary of the Module that wrote it
	Module    string        `json:"module"`    // Config.Path
	Toolchain string        `json:"toolchain"` // Config.Toolchain
	Packages  []memoPackage `json:"packages"`  // sorted by Path, no duplicates
}

type memoPackage struct {
	Path      string   `json:"path"`
	Sources   string   `json:"sources"` // hex SHA-256 of the package's files, as they were read (digestSources)
	Name      string   `json:"name"`    // its package clause's
	Imports   []string `json:"imports"` // sorted, unique
	Uses      []string `json:"uses"`    // "path name": the imports it names by their own names, sorted
	Whole     bool     `json:"whole,omitempty"`
	WholeWith []string `json:"whole_with,omitempty"`
	Decls     []string `json:"decls"` // one string each (encodeDecl): a few times faster to decode than objects
	Extra     []Unit   `json:"extra,omitempty"`

	decls []decl // Decls decoded, by Seeded
}

// encodeDecl writes a declaration as seven fields separated by spaces:
// its unit, its hash, its flags ("a" always, "l" an alias, or "-"), its
// names, its receiver, its mentions of its package's names and of other
// packages' (lists joined by commas, "-" when empty).
func encodeDecl(d decl) string {
	list := func(s []string) string { return cmp.Or(strings.Join(s, ","), "-") }
	flags := ""
	if d.Always {
		flags += "a"
	}
	if d.Alias {
		flags += "l"
	}
	return strings.Join([]string{d.Unit, d.Hash, cmp.Or(flags, "-"), list(d.Names), cmp.Or(d.Recv, "-"), list(d.Refs), list(d.Ext)}, " ")
}

// decodeDecl reads encodeDecl's form.
func decodeDecl(s string) (decl, error) {
	f := strings.Split(s, " ")
	if len(f) != 7 {
		return decl{}, fmt.Errorf("%d fields, want 7", len(f))
	}
	list := func(s string) []string {
		if s == "-" {
			return nil
		}
		return strings.Split(s, ",")
	}
	d := decl{Unit: f[0], Hash: f[1], Names: list(f[3]), Refs: list(f[5]), Ext: list(f[6])}
	switch f[2] {
	case "-":
	case "a":
		d.Always = true
	case "l":
		d.Alias = true
	case "al":
		d.Always, d.Alias = true, true
	default:
		return decl{}, fmt.Errorf("flags %q", f[2])
	}
	if f[4] != "-" {
		d.Recv = f[4]
	}
	return d, nil
}

// Binary returns the build identity of the binary m's identities are
// computed by (Config.Binary).
func (m *Module) Binary() string { return m.c.Binary }

// Memo returns what m has computed, for Seeded in the next process of the
// same binary: for every package m resolved, the SHA-256 of its files, its
// imports and its declarations (and the entries of m's own seed that it did
// not need). computed reports whether m normalised any package itself, that is,
// whether the memo knows more than m's seed did. A Module whose Config has no
// Binary has no memo (nil, false).
func (m *Module) Memo() (memo []byte, computed bool) {
	if m.c.Binary == "" {
		return nil, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	byPath := maps.Clone(m.seed)
	if byPath == nil {
		byPath = map[string]memoPackage{}
	}
	for pp, p := range m.pkgs {
		if p.err != nil {
			delete(byPath, pp)
			continue
		}
		if !p.resolved {
			continue
		}
		e := memoPackage{Path: pp, Sources: p.sources, Name: p.name, Imports: p.imports, Uses: p.uses,
			Whole: p.whole, WholeWith: p.wholeWith, Decls: make([]string, len(p.decls)), Extra: p.extra}
		for i, d := range p.decls {
			e.Decls[i] = encodeDecl(d)
		}
		byPath[pp] = e
	}
	f := memoFile{Memo: memoVersion, Binary: m.c.Binary, Module: m.c.Path, Toolchain: m.c.Toolchain, Packages: []memoPackage{}}
	for _, pp := range slices.Sorted(maps.Keys(byPath)) {
		e := byPath[pp]
		if e.Imports == nil {
			e.Imports = []string{}
		}
		if e.Uses == nil {
			e.Uses = []string{}
		}
		if e.Decls == nil {
			e.Decls = []string{}
		}
		f.Packages = append(f.Packages, e)
	}
	data, err := json.Marshal(f)
	if err != nil {
		panic(err) // strings and slices of strings
	}
	return data, m.computed > 0
}

// Seeded returns a new Module with m's Config that takes a package's
// imports and declarations from memo, written by Memo, instead of
// normalising its files — if memo was written by this very binary
// (Config.Binary, which covers the normaliser's code and the embedded
// sources), for the same module and toolchain, the package's files, read
// now, have the SHA-256 the memo recorded, and the packages it imports
// still have the names it gave them. Any other package is computed as
// New's Module computes it.
//
// A memo that is malformed in any way, or of another binary, is refused as
// a whole with an error saying why, and the caller goes on without it. What
// Seeded cannot check is that the memo's hashes are the ones this binary
// computes from those files: only normalising them again would tell. A memo
// is therefore only as trustworthy as whoever could write it: a process of
// this binary on this machine, for the store it keeps it in. Verification
// must not use one (see the package doc).
func (m *Module) Seeded(memo []byte) (*Module, error) {
	if m.c.Binary == "" {
		return nil, errors.New("code identity memo: this binary has no build ID (Config.Binary), so no memo can be told to be its own")
	}
	var f memoFile
	dec := json.NewDecoder(bytes.NewReader(memo))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("code identity memo: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("code identity memo: data after the memo")
	}
	switch {
	case f.Memo != memoVersion:
		return nil, fmt.Errorf("code identity memo: format %q, want %q", f.Memo, memoVersion)
	case f.Binary != m.c.Binary:
		return nil, fmt.Errorf("code identity memo: written by binary %q, this is %q", f.Binary, m.c.Binary)
	case f.Module != m.c.Path || f.Toolchain != m.c.Toolchain:
		return nil, fmt.Errorf("code identity memo: of module %q with toolchain %q, this is %q with %q", f.Module, f.Toolchain, m.c.Path, m.c.Toolchain)
	}
	seed := make(map[string]memoPackage, len(f.Packages))
	for i, e := range f.Packages {
		if err := m.checkMemoPackage(&e); err != nil {
			return nil, fmt.Errorf("code identity memo: package %d (%q): %w", i, e.Path, err)
		}
		if i > 0 && f.Packages[i-1].Path >= e.Path {
			return nil, fmt.Errorf("code identity memo: packages not sorted, or listed twice (%q after %q)", e.Path, f.Packages[i-1].Path)
		}
		seed[e.Path] = e
	}
	s := New(m.c)
	s.seed = seed
	return s, nil
}

// checkMemoPackage checks the form of a memo's entry.
func (m *Module) checkMemoPackage(e *memoPackage) error {
	if _, ok := m.dir(e.Path); !ok {
		return fmt.Errorf("not a package of module %s", m.c.Path)
	}
	if !isHexSHA256(e.Sources) {
		return errors.New("sources is not a hex SHA-256")
	}
	if !token.IsIdentifier(e.Name) {
		return fmt.Errorf("package name %q is not an identifier", e.Name)
	}
	for i, imp := range e.Imports {
		switch {
		case imp == "" || imp == "C" || strings.HasPrefix(imp, ".") || strings.HasPrefix(imp, "/"):
			return fmt.Errorf("import %q is not a module import path", imp)
		case i > 0 && e.Imports[i-1] >= imp:
			return fmt.Errorf("imports not sorted, or listed twice (%q after %q)", imp, e.Imports[i-1])
		}
	}
	for i, u := range e.Uses {
		ip, name, ok := strings.Cut(u, " ")
		switch {
		case !ok || !slices.Contains(e.Imports, ip) || !token.IsIdentifier(name):
			return fmt.Errorf("use %q is not an import and its name", u)
		case i > 0 && e.Uses[i-1] >= u:
			return fmt.Errorf("uses not sorted, or listed twice (%q after %q)", u, e.Uses[i-1])
		}
	}
	for _, q := range e.WholeWith {
		if _, ok := m.dir(q); !ok || !slices.Contains(e.Imports, q) {
			return fmt.Errorf("whole_with %q is not an in-module import", q)
		}
	}
	e.decls = make([]decl, len(e.Decls))
	for i, s := range e.Decls {
		d, err := decodeDecl(s)
		if err == nil {
			err = m.checkMemoDecl(e, d)
		}
		if err != nil {
			return fmt.Errorf("declaration %d (%q): %w", i, s, err)
		}
		e.decls[i] = d
	}
	for _, u := range e.Extra {
		if !slices.Contains(extraUnits, u.Name) || !isHexSHA256(u.Hash) {
			return fmt.Errorf("extra unit %q %q is not one a package has", u.Name, u.Hash)
		}
	}
	return nil
}

// checkMemoDecl checks the form of a memo's declaration: names that are
// identifiers, mentions of imports of its package.
func (m *Module) checkMemoDecl(e *memoPackage, d decl) error {
	if !isHexSHA256(d.Hash) {
		return errors.New("hash is not a hex SHA-256")
	}
	if d.Unit == "" || strings.ContainsAny(d.Unit, " \n") {
		return errors.New("malformed unit name")
	}
	for _, name := range slices.Concat(d.Names, d.Refs, []string{cmp.Or(d.Recv, "x")}) {
		if !token.IsIdentifier(name) {
			return fmt.Errorf("%q is not an identifier", name)
		}
	}
	for _, x := range d.Ext {
		dot := strings.LastIndexByte(x, '.')
		if dot < 0 || !slices.Contains(e.Imports, x[:dot]) || !token.IsIdentifier(x[dot+1:]) {
			return fmt.Errorf("mention %q is not a name of an import", x)
		}
	}
	return nil
}

func isHexSHA256(s string) bool {
	if len(s) != 2*sha256.Size {
		return false
	}
	for _, c := range []byte(s) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// writeFileHeader writes "file <base name> <length>\n" to h, which is how a
// file starts in a package's hash (its normalised stream follows) and in
// the digest of its sources (its bytes follow).
func writeFileHeader(h io.Writer, line *[]byte, name string, length int) {
	b := append((*line)[:0], "file "...)
	b = append(b, path.Base(name)...)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(length), 10)
	b = append(b, '\n')
	h.Write(b)
	*line = b
}
