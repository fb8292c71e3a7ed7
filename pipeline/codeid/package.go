package codeid

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"go/build/constraint"
	"go/token"
	"io/fs"
	"maps"
	"path"
	"slices"
	"strings"
)

// A package, as the identities see it: what its files declare, each
// declaration hashed on its own.
type pkg struct {
	path    string
	files   []string // module-relative .go files (not tests), sorted
	asm     []string // module-relative assembly files, sorted
	sources string   // hex SHA-256 of those files' bytes (digestSources)
	err     error

	// From its files, or the memo: what the import closure needs.
	name    string   // its package clause's name
	imports []string // sorted, unique

	scanned []scannedFile // its files read; nil when taken from the memo, or once resolved
	seed    *memoPackage  // its memo entry, if its files are the ones the entry was computed from

	// Resolved (resolve): what reachability needs. decls, uses, whole,
	// wholeWith and extra are what the memo keeps of a package.
	resolved   bool
	resolveErr error
	decls      []decl
	uses       []string            // "path name": each import the package names by the imported package's own name
	whole      bool                // reflection by name, //go:linkname, assembly: every declaration is reached with the package
	wholeWith  []string            // in-module packages its //go:linkname directives name: reached whole with it
	extra      []Unit              // its units that are no declaration's (extraUnits), named within the package
	hash       string              // hex SHA-256 of its units ("<unit> <hash>\n", sorted): all of its code (the golden file pins it)
	byName     map[string][]int32  // declared name → its declarations
	methods    map[string][]int32  // receiver type → its methods
	aliases    map[string][]string // type → the aliases whose declarations name it
	always     []int32             // the declarations that run whenever the package is linked
	local      [][]int32           // by declaration: the declarations of the package it reaches (names mentioned, methods)
	ext        [][]ref             // by declaration: those of other packages (Module.extEdges), once asked
	extDone    []bool
	units      []Unit  // its units, declarations' and extra, sorted by their full names ("path.unit")
	unitOf     []int32 // declaration → its unit in units
}

// decl is a top-level declaration (or, for "init", one of the package's
// init functions or blank variables, or a file's directives).
type decl struct {
	Unit   string   // its unit within the package: "F", "T.M" (a method), "A,B" (a group), "init"
	Hash   string   // hex SHA-256 of its constraint, the imports it names and its token stream
	Names  []string // the names it declares, but "_"
	Recv   string   // a method's receiver base type
	Alias  bool     // a type alias: its methods are its target's
	Always bool     // it runs whenever its package is linked
	Refs   []string // the names it mentions that its package declares
	Ext    []string // "path.name": names it mentions of in-module packages it imports
}

// scannedFile is a file's declarations as read, before the names of the
// packages it imports are known.
type scannedFile struct {
	name       string
	constraint string // its build constraint: //go:build (or // +build) and its name's GOOS/GOARCH
	specs      []importSpec
	decls      []rawDecl
	streams    [][]byte // the declarations' normalised streams
	dirs       []string // directives outside declarations, build constraints aside
	linknames  []string
}

// extraUnits are the units of a package that are no declaration's: the
// order of its initialisations (when it may matter), its blank imports
// with their files' constraints, its assembly.
var extraUnits = []string{"(init order)", "(blank imports)", "(assembly)"}

// assemblyExts are the files besides .go that the go command compiles into
// a package without cgo: assembly and its headers, and object files.
var assemblyExts = []string{".s", ".S", ".sx", ".h", ".syso"}

// loadInto lists p's files and reads what the import closure needs: from
// the memo if its entry was computed from these very files, else by
// scanning them.
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
		if e.IsDir() || strings.HasPrefix(name, "_") || strings.HasPrefix(name, ".") { // cmd/go ignores _* and .* files
			continue
		}
		switch {
		case strings.HasSuffix(name, "_test.go"):
		case strings.HasSuffix(name, ".go"):
			p.files = append(p.files, path.Join(dir, name))
		case slices.Contains(assemblyExts, path.Ext(name)):
			p.asm = append(p.asm, path.Join(dir, name))
		}
	}
	if len(p.files) == 0 {
		return fmt.Errorf("code identity: package %s has no non-test Go files in the embedded sources (directory %q): add them to the //go:embed line of sources.go", p.path, dir)
	}
	slices.Sort(p.files)
	slices.Sort(p.asm)
	if err := m.digestSources(p); err != nil {
		return fmt.Errorf("code identity: package %s: %w", p.path, err)
	}
	if e, ok := m.seed[p.path]; ok && e.Sources == p.sources {
		p.seed = &e
		p.name, p.imports = e.Name, e.Imports
		return nil
	}
	return m.scan(p)
}

// digestSources sets p.sources: the SHA-256 of its files, each as "file
// <base name> <length>\n" and its bytes, the Go files then the assembly.
func (m *Module) digestSources(p *pkg) error {
	h := sha256.New()
	for _, f := range slices.Concat(p.files, p.asm) {
		src, err := m.norm.read(m.c.Sources, f)
		if err != nil {
			return err
		}
		writeFileHeader(h, &m.norm.line, f, len(src))
		h.Write(src)
	}
	p.sources = hex.EncodeToString(h.Sum(nil))
	return nil
}

// scan reads p's Go files: their package clause, imports and declarations.
func (m *Module) scan(p *pkg) error {
	m.computed++
	n := &m.norm
	n.imports = n.imports[:0]
	p.scanned = make([]scannedFile, 0, len(p.files))
	for _, f := range p.files {
		src, err := n.read(m.c.Sources, f)
		if err != nil {
			return fmt.Errorf("code identity: package %s: %w", p.path, err)
		}
		if err := n.normalise(f, src); err != nil {
			return fmt.Errorf("code identity: package %s: %w", p.path, err)
		}
		if p.name == "" {
			p.name = n.pkgName
		}
		sf := scannedFile{
			name:       f,
			constraint: fileConstraint(path.Base(f), n.build),
			specs:      slices.Clone(n.specs),
			decls:      slices.Clone(n.decls),
			streams:    make([][]byte, len(n.decls)),
			dirs:       slices.Clone(n.fileDirs),
			linknames:  slices.Clone(n.linknames),
		}
		for i, d := range n.decls {
			sf.streams[i] = slices.Clone(n.out[d.start:d.end])
		}
		p.scanned = append(p.scanned, sf)
	}
	imports := slices.Clone(n.imports)
	for _, f := range p.scanned {
		for _, target := range f.linknames {
			// A package a //go:linkname names is linked with this one.
			if q := linknamePackage(target); q != "" && q != p.path {
				if _, in := m.dir(q); in {
					imports = append(imports, q)
				}
			}
		}
	}
	slices.Sort(imports)
	p.imports = slices.Compact(imports)
	return nil
}

// fileConstraint is the build constraint of a file: its //go:build line
// (or, without one, its // +build lines) and the GOOS and GOARCH its name
// implies (go/build's goodOSArchFile). A declaration carries its file's.
func fileConstraint(base string, build []string) string {
	var parts []string
	plus := false
	for _, line := range build {
		if strings.HasPrefix(line, "//go:build ") {
			parts = []string{line}
			plus = false
			break
		}
		parts, plus = append(parts, line), true
	}
	if plus { // several // +build lines: each must hold
		var all constraint.Expr
		var bad []string
		for _, line := range parts {
			e, err := constraint.Parse(line)
			switch {
			case err != nil:
				bad = append(bad, line)
			case all == nil:
				all = e
			default:
				all = &constraint.AndExpr{X: all, Y: e}
			}
		}
		parts = bad
		if all != nil {
			parts = append([]string{"+build " + all.String()}, bad...)
		}
	}
	name, _, _ := strings.Cut(base, ".")
	if i := strings.Index(name, "_"); i >= 0 {
		l := strings.Split(name[i:], "_")
		if k := len(l); k > 0 && l[k-1] == "test" {
			l = l[:k-1]
		}
		switch k := len(l); {
		case k >= 2 && knownOS[l[k-2]] && knownArch[l[k-1]]:
			parts = append(parts, "goos "+l[k-2], "goarch "+l[k-1])
		case k >= 1 && knownOS[l[k-1]]:
			parts = append(parts, "goos "+l[k-1])
		case k >= 1 && knownArch[l[k-1]]:
			parts = append(parts, "goarch "+l[k-1])
		}
	}
	return strings.Join(parts, "; ")
}

// implicitName is the name a file gives an import that it does not name:
// the imported package's own. An in-module package's is its package
// clause's (loaded: it is in the closure); a third-party package's is in
// Config.PackageNames; a standard-library package's is its path's last
// element (a major version element, as in math/rand/v2, aside).
func (m *Module) implicitName(importPath string) (string, error) {
	if _, in := m.dir(importPath); in {
		q := m.pkgs[importPath]
		if q == nil || q.err != nil || q.name == "" {
			return "", fmt.Errorf("in-module package %s is not loaded", importPath)
		}
		return q.name, nil
	}
	if _, third := m.c.ThirdParty[importPath]; third {
		if name := m.c.PackageNames[importPath]; name != "" {
			return name, nil
		}
		return "", fmt.Errorf("the third-party table names no package name for %q (Config.PackageNames); regenerate it: %s", importPath, m.c.Hints.updateThirdParty())
	}
	if !isStandard(importPath) {
		return "", fmt.Errorf("import %q is not in the third-party table (Config.ThirdParty); regenerate it: %s", importPath, m.c.Hints.updateThirdParty())
	}
	elems := strings.Split(importPath, "/")
	last := elems[len(elems)-1]
	if len(elems) > 1 && isMajorVersion(last) {
		last = elems[len(elems)-2]
	}
	return last, nil
}

// isMajorVersion reports whether a path element is "v2", "v3", ...
func isMajorVersion(e string) bool {
	if len(e) < 2 || e[0] != 'v' || e[1] < '1' || e[1] > '9' {
		return false
	}
	for _, c := range e[2:] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// resolve turns p's scanned files into declarations: each hashed with its
// file's constraint and the imports it names, its mentions resolved to
// declarations of p and of the in-module packages p imports (all loaded:
// they are in the closure). A package from the memo takes them from its
// entry if the names it gave its imports are still their names, and is
// scanned again otherwise. m.mu must be held for writing.
func (m *Module) resolve(p *pkg) error {
	if p.resolved || p.resolveErr != nil {
		return p.resolveErr
	}
	p.resolveErr = m.resolveOnce(p)
	return p.resolveErr
}

func (m *Module) resolveOnce(p *pkg) error {
	if e := p.seed; e != nil {
		p.seed = nil
		if m.usesHold(e.Uses) {
			p.decls, p.uses, p.whole, p.wholeWith, p.extra = e.decls, e.Uses, e.Whole, e.WholeWith, e.Extra
			p.index()
			p.resolved = true
			return nil
		}
		p.name, p.imports = "", nil
		if err := m.scan(p); err != nil {
			return err
		}
	}
	if err := m.resolveScanned(p); err != nil {
		return fmt.Errorf("code identity: package %s: %w", p.path, err)
	}
	p.scanned = nil
	p.index()
	p.resolved = true
	return nil
}

// usesHold reports whether every "path name" of uses is still the name of
// the import path.
func (m *Module) usesHold(uses []string) bool {
	for _, u := range uses {
		ip, name, _ := strings.Cut(u, " ")
		if got, err := m.implicitName(ip); err != nil || got != name {
			return false
		}
	}
	return true
}

// byNameImports are the packages that call methods or read fields by their
// names: a package importing one is reached whole.
var byNameImports = []string{"text/template", "html/template", "plugin"}

func (m *Module) resolveScanned(p *pkg) error {
	declared := map[string]bool{}
	for _, f := range p.scanned {
		for _, d := range f.decls {
			for _, name := range d.names {
				declared[name] = true
			}
		}
	}
	delete(declared, "_")
	uses := map[string]bool{}
	var blank []string // "path constraint": the packages a file links for their initialisation alone
	var order []string // the effectful initialisations, in the order Go runs them (files by name, then position)
	for _, f := range p.scanned {
		local := map[string]string{} // name → import path
		var dots []string
		for _, s := range f.specs {
			if slices.Contains(byNameImports, s.path) {
				p.whole = true
			}
			switch s.name {
			case "_":
				blank = append(blank, s.path+" "+f.constraint)
				continue
			case ".":
				dots = append(dots, s.path)
				continue
			case "":
				name, err := m.implicitName(s.path)
				if err != nil {
					return fmt.Errorf("%s: %w", f.name, err)
				}
				local[name] = s.path
				uses[s.path+" "+name] = true
			default:
				local[s.name] = s.path
			}
		}
		slices.Sort(dots)
		for _, target := range f.linknames {
			p.whole = true
			if q := linknamePackage(target); q != "" && q != p.path {
				if _, in := m.dir(q); in {
					p.wholeWith = append(p.wholeWith, q)
				}
			}
		}
		for i, rd := range f.decls {
			d := decl{Unit: unitName(rd), Recv: rd.recv, Alias: rd.alias, Always: rd.init || rd.tok == token.VAR && slices.Contains(rd.names, "_")}
			for _, name := range rd.names {
				if name != "_" && !(rd.tok == token.FUNC && (name == "init" || rd.method != "")) {
					d.Names = append(d.Names, name)
				}
			}
			if rd.byName {
				p.whole = true
			}
			h := sha256.New()
			fmt.Fprintf(h, "decl\n")
			if f.constraint != "" {
				fmt.Fprintf(h, "build %s\n", f.constraint)
			}
			var headsUsed []string
			for _, pair := range rd.pairs {
				head, sel, _ := strings.Cut(pair, ".")
				ip, ok := local[head]
				if !ok {
					continue
				}
				headsUsed = append(headsUsed, head)
				if _, in := m.dir(ip); in {
					d.Ext = append(d.Ext, ip+"."+sel)
				}
			}
			for _, head := range sortUnique(headsUsed) {
				fmt.Fprintf(h, "uses %s %s\n", head, local[head])
			}
			for _, dot := range dots {
				fmt.Fprintf(h, "dot %s\n", dot)
			}
			h.Write(f.streams[i])
			d.Hash = hex.EncodeToString(h.Sum(nil))
			for _, id := range rd.idents {
				if declared[id] {
					d.Refs = append(d.Refs, id)
				}
				for _, dot := range dots {
					if _, in := m.dir(dot); in {
						d.Ext = append(d.Ext, dot+"."+id)
					}
				}
			}
			d.Ext = sortUnique(d.Ext)
			p.decls = append(p.decls, d)
			if rd.effect {
				if rd.tok == token.FUNC {
					order = append(order, "init "+d.Hash)
				} else {
					order = append(order, "var "+d.Unit)
				}
			}
		}
		if len(f.dirs) > 0 {
			// Directives outside any declaration run with the package.
			h := sha256.New()
			fmt.Fprintf(h, "directives\nbuild %s\n%s\n", f.constraint, strings.Join(f.dirs, "\n"))
			p.decls = append(p.decls, decl{Unit: "init", Always: true, Hash: hex.EncodeToString(h.Sum(nil))})
		}
	}
	for u := range uses {
		p.uses = append(p.uses, u)
	}
	slices.Sort(p.uses)
	p.wholeWith = sortUnique(p.wholeWith)
	if blank = sortUnique(blank); len(blank) > 0 {
		// Nothing names a blank import: what it adds, the imported
		// package's initialisation, depends on the importing file's
		// constraint alone.
		sum := sha256.Sum256([]byte(strings.Join(blank, "\n")))
		p.extra = append(p.extra, Unit{Name: "(blank imports)", Hash: hex.EncodeToString(sum[:])})
	}
	if len(order) >= 2 {
		// Several initialisations whose order may matter: their order is
		// code too.
		sum := sha256.Sum256([]byte(strings.Join(order, "\n")))
		p.extra = append(p.extra, Unit{Name: "(init order)", Hash: hex.EncodeToString(sum[:])})
	}
	if len(p.asm) > 0 {
		p.whole = true
		h := sha256.New()
		for _, f := range p.asm {
			src, err := m.norm.read(m.c.Sources, f)
			if err != nil {
				return err
			}
			writeFileHeader(h, &m.norm.line, f, len(src))
			h.Write(src)
		}
		p.extra = append(p.extra, Unit{Name: "(assembly)", Hash: hex.EncodeToString(h.Sum(nil))})
	}
	return nil
}

// linknamePackage is the import path in a //go:linkname target
// ("example.com/m/p.f" → "example.com/m/p"), or "".
func linknamePackage(target string) string {
	slash := strings.LastIndexByte(target, '/')
	if dot := strings.IndexByte(target[slash+1:], '.'); dot >= 0 {
		return target[:slash+1+dot]
	}
	return ""
}

// unitName is a declaration's unit within its package.
func unitName(d rawDecl) string {
	switch {
	case d.tok == token.FUNC && d.recv != "":
		return d.recv + "." + d.method
	case d.tok == token.FUNC && len(d.names) == 1 && d.names[0] == "init":
		return "init"
	case d.tok == token.VAR && len(d.names) > 0 && !slices.ContainsFunc(d.names, func(n string) bool { return n != "_" }):
		return "init" // blank variables: they are initialised, nothing names them
	case len(d.names) == 0:
		return "_"
	}
	return strings.Join(d.names, ",")
}

// index builds p's lookup tables, its units and its hash from its
// declarations.
func (p *pkg) index() {
	p.byName = map[string][]int32{}
	p.methods = map[string][]int32{}
	p.aliases = map[string][]string{}
	p.always = p.always[:0]
	byUnit := map[string][]int32{}
	for i, d := range p.decls {
		for _, name := range d.Names {
			p.byName[name] = append(p.byName[name], int32(i))
		}
		if d.Alias { // type A = T: A's methods are T's
			for _, r := range d.Refs {
				p.aliases[r] = append(p.aliases[r], d.Names...)
			}
		}
		if d.Recv != "" {
			p.methods[d.Recv] = append(p.methods[d.Recv], int32(i))
		}
		if d.Always {
			p.always = append(p.always, int32(i))
		}
		byUnit[d.Unit] = append(byUnit[d.Unit], int32(i))
	}
	// A declaration reaches the declarations of the names it mentions, and
	// a type its methods and its aliases' methods.
	p.local = make([][]int32, len(p.decls))
	for i, d := range p.decls {
		var edges []int32
		for _, name := range d.Refs {
			edges = append(edges, p.byName[name]...)
		}
		for _, name := range d.Names {
			edges = append(edges, p.methods[name]...)
			for _, alias := range p.aliases[name] {
				edges = append(edges, p.methods[alias]...)
			}
		}
		p.local[i] = edges
	}
	p.ext, p.extDone = nil, nil

	// A unit's hash is its declaration's, or, when several declarations
	// share a unit (a name declared in files of different build
	// constraints, init functions), the SHA-256 of their sorted hashes.
	// They are reached together: by their names, or as methods of their
	// type. The package's extra units are always reached.
	names := slices.Collect(maps.Keys(byUnit))
	for _, u := range p.extra {
		names = append(names, u.Name)
	}
	slices.Sort(names)
	p.units, p.unitOf = p.units[:0], make([]int32, len(p.decls))
	for _, name := range names {
		decls, ok := byUnit[name]
		if !ok { // an extra unit
			i := slices.IndexFunc(p.extra, func(u Unit) bool { return u.Name == name })
			p.units = append(p.units, Unit{Name: p.path + "." + name, Hash: p.extra[i].Hash})
			continue
		}
		h := p.decls[decls[0]].Hash
		if len(decls) > 1 {
			hashes := make([]string, len(decls))
			for i, d := range decls {
				hashes[i] = p.decls[d].Hash
			}
			slices.Sort(hashes)
			sum := sha256.Sum256([]byte("variants\n" + strings.Join(hashes, "\n")))
			h = hex.EncodeToString(sum[:])
		}
		for _, d := range decls {
			p.unitOf[d] = int32(len(p.units))
		}
		p.units = append(p.units, Unit{Name: p.path + "." + name, Hash: h})
	}
	all := make([]bool, len(p.decls))
	for i := range all {
		all[i] = true
	}
	h := sha256.New()
	for _, u := range p.unitsReached(all, nil) {
		fmt.Fprintf(h, "%s %s\n", strings.TrimPrefix(u.Name, p.path+"."), u.Hash)
	}
	p.hash = hex.EncodeToString(h.Sum(nil))
}

// unitsReached appends to dst the units of p's declarations marked in
// reached, and its extra units, sorted by name (full names: "path.unit").
func (p *pkg) unitsReached(reached []bool, dst []Unit) []Unit {
	in := make([]bool, len(p.units))
	for i, u := range p.units {
		in[i] = strings.HasSuffix(u.Name, ")") // an extra unit: "(init order)", ...
	}
	for i, r := range reached {
		if r {
			in[p.unitOf[i]] = true
		}
	}
	for i, u := range p.units {
		if in[i] {
			dst = append(dst, u)
		}
	}
	return dst
}
