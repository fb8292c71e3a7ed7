package codeid

import (
	"fmt"
	"io/fs"
	"slices"
	"strings"
)

// A root is where a computation starts: a declaration of an in-module
// package ("example.com/m/p.F", a method "example.com/m/p.T.M", or
// "example.com/m/p.init", the package's initialisation alone), or a whole
// package ("example.com/m/p").
type root struct {
	pkg  string // import path
	decl string // "" for the whole package
}

// parseRoot splits a root into its package and declaration. A root naming
// a directory of the sources is a whole package.
func (m *Module) parseRoot(r string) (root, error) {
	if dir, ok := m.dir(r); ok {
		if st, err := fs.Stat(m.c.Sources, dir); err == nil && st.IsDir() || !strings.Contains(r[len(m.c.Path):], ".") {
			return root{pkg: r}, nil
		}
	}
	var rest string
	switch {
	case strings.HasPrefix(r, m.c.Path+"."):
		return root{pkg: m.c.Path, decl: r[len(m.c.Path)+1:]}, nil
	case strings.HasPrefix(r, m.c.Path+"/") && m.c.Path != "":
		rest = r[len(m.c.Path)+1:]
	default:
		return root{}, fmt.Errorf("code identity: root %q is not a package of module %s, nor a declaration of one", r, m.c.Path)
	}
	slash := strings.LastIndexByte(rest, '/')
	dot := strings.IndexByte(rest[slash+1:], '.')
	if dot < 0 {
		return root{pkg: r}, nil
	}
	cut := len(m.c.Path) + 1 + slash + 1 + dot
	return root{pkg: r[:cut], decl: r[cut+1:]}, nil
}

// rootPackages returns the packages of roots, sorted and unique.
func (m *Module) rootPackages(roots []string) ([]string, error) {
	var pkgs []string
	for _, r := range roots {
		rt, err := m.parseRoot(r)
		if err != nil {
			return nil, err
		}
		pkgs = append(pkgs, rt.pkg)
	}
	return sortUnique(pkgs), nil
}

// reach marks the declarations that the roots can run, in the packages of
// their closure (all loaded and resolved), conservatively and without type
// information:
//
//   - a root declaration, and every declaration of a whole package (one
//     that a root names whole, or that reflects by name, links by name or
//     has assembly, and those its //go:linkname directives name);
//   - every declaration that runs when its package is initialised: init
//     functions, variables with an initialiser, blank variables;
//   - from a reached declaration, every declaration of each name it
//     mentions: of its own package for a bare name x (in every file,
//     whatever its build constraint), of package q for q.x where q names an
//     import of its file;
//   - every method of a reached type (it may be called through an
//     interface, by a name that a selector anywhere gives), and of the
//     aliases of a reached type.
//
// A name that a local variable shadows still reaches the declarations of
// that name: the rule can only over-approximate.
func (m *Module) reach(s *rootSet) (map[string][]bool, error) {
	marks := make(map[string][]bool, len(s.closure))
	for _, pp := range s.closure {
		p := m.pkgs[pp]
		if err := m.resolve(p); err != nil {
			return nil, err
		}
		marks[pp] = make([]bool, len(p.decls))
	}
	var work []ref
	mark := func(p *pkg, i int32) {
		if mk := marks[p.path]; !mk[i] {
			mk[i] = true
			work = append(work, ref{p, i})
		}
	}
	markAll := func(p *pkg) {
		for i := range p.decls {
			mark(p, int32(i))
		}
	}
	for _, r := range s.roots {
		rt, err := m.parseRoot(r)
		if err != nil {
			return nil, err
		}
		p := m.pkgs[rt.pkg]
		found := false
		switch {
		case rt.decl == "":
			markAll(p)
			found = true
		case rt.decl == "init":
			found = true // its initialisation: below, for every package
		default:
			typ, method, isMethod := strings.Cut(rt.decl, ".")
			for i, d := range p.decls {
				if isMethod && d.Recv == typ && d.Unit == typ+"."+method || !isMethod && slices.Contains(d.Names, rt.decl) {
					mark(p, int32(i))
					found = true
				}
			}
		}
		if !found {
			return nil, fmt.Errorf("code identity: root %q: package %s declares no %s", r, rt.pkg, rt.decl)
		}
	}
	for _, pp := range s.closure {
		p := m.pkgs[pp]
		for _, i := range p.always {
			mark(p, i)
		}
		if p.whole {
			markAll(p)
			for _, q := range p.wholeWith {
				if qp := m.pkgs[q]; qp != nil && marks[q] != nil {
					markAll(qp)
				}
			}
		}
	}
	for len(work) > 0 {
		r := work[len(work)-1]
		work = work[:len(work)-1]
		p := r.p
		for _, j := range p.local[r.i] {
			mark(p, j)
		}
		for _, e := range m.extEdges(p, r.i) {
			if marks[e.p.path] != nil { // always: an import of a package of the closure is in the closure
				mark(e.p, e.i)
			}
		}
	}
	return marks, nil
}

// ref is a declaration: package and index.
type ref struct {
	p *pkg
	i int32
}

// extEdges returns the declarations of other packages that declaration i
// of p mentions (d.Ext resolved, once).
func (m *Module) extEdges(p *pkg, i int32) []ref {
	if p.ext == nil {
		p.ext = make([][]ref, len(p.decls))
		p.extDone = make([]bool, len(p.decls))
	}
	if !p.extDone[i] {
		for _, e := range p.decls[i].Ext {
			dot := strings.LastIndexByte(e, '.')
			if q := m.pkgs[e[:dot]]; q != nil && q.resolved {
				for _, j := range q.byName[e[dot+1:]] {
					p.ext[i] = append(p.ext[i], ref{q, j})
				}
			}
		}
		p.extDone[i] = true
	}
	return p.ext[i]
}

// reachedNames lists the declarations marked, as "path.Name" for each name
// a declaration declares, "path.T.M" for a method, "path.init" for the
// package's initialisation, sorted.
func (m *Module) reachedNames(marks map[string][]bool) []string {
	var out []string
	for pp, mk := range marks {
		p := m.pkgs[pp]
		for i, d := range p.decls {
			if !mk[i] {
				continue
			}
			switch {
			case d.Recv != "", d.Unit == "init":
				out = append(out, pp+"."+d.Unit)
			default:
				for _, name := range d.Names {
					out = append(out, pp+"."+name)
				}
			}
		}
	}
	return sortUnique(out)
}
