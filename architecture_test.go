package thv

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	pathpkg "path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// archPackage is what the architecture check needs of a package.
type archPackage struct {
	ImportPath                                                  string
	Dir                                                         string
	GoFiles, IgnoredGoFiles, TestGoFiles, XTestGoFiles, Imports []string
}

// archRow is a row of docs/architecture.md's package table.
type archRow struct {
	line                 int
	names, owns, imports string
}

// archRows reads the package table of docs/architecture.md: the rows
// after its "| package | owns | imports |" header.
func archRows(t *testing.T) []archRow {
	t.Helper()
	b, err := os.ReadFile("docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	var rows []archRow
	inTable := false
	for i, line := range strings.Split(string(b), "\n") {
		switch {
		case strings.HasPrefix(line, "| package | owns | imports |"):
			inTable = true
		case inTable && strings.HasPrefix(line, "|---"):
		case inTable && strings.HasPrefix(line, "| "):
			cells := strings.Split(strings.Trim(line, "| "), " | ")
			if len(cells) != 3 {
				t.Fatalf("docs/architecture.md:%d: a row of %d cells, want 3 (package, owns, imports)", i+1, len(cells))
			}
			rows = append(rows, archRow{i + 1, cells[0], cells[1], cells[2]})
		default:
			inTable = false
		}
	}
	if len(rows) == 0 {
		t.Fatal("docs/architecture.md: no package table found")
	}
	return rows
}

var backticked = regexp.MustCompile("`([^`]+)`")

// ticked returns the backticked words of s.
func ticked(s string) []string {
	var out []string
	for _, m := range backticked.FindAllStringSubmatch(s, -1) {
		out = append(out, m[1])
	}
	return out
}

// archPackages lists the module's packages with go list.
func archPackages(t *testing.T) map[string]*archPackage {
	t.Helper()
	cmd := exec.Command("go", "list", "-json=ImportPath,Dir,GoFiles,IgnoredGoFiles,TestGoFiles,XTestGoFiles,Imports", "./...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v: %s", err, stderr.Bytes())
	}
	pkgs := map[string]*archPackage{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		p := new(archPackage)
		if err := dec.Decode(p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs[p.ImportPath] = p
	}
	return pkgs
}

// rowPackages returns the packages a row's first cell names: each
// backticked path ("thv" for the module root), or, for a pattern such as
// `stages/<kind>`, every package below its prefix whose last element the
// row names (backticked) in its owns cell. It reports the names that are
// no package.
func rowPackages(r archRow, pkgs map[string]*archPackage) (found []*archPackage, missing []string) {
	owned := ticked(r.owns)
	for _, name := range ticked(r.names) {
		path := "thv/" + name
		if name == "thv" {
			path = "thv"
		}
		if base := pathpkg.Base(path); strings.HasPrefix(base, "<") && strings.HasSuffix(base, ">") {
			prefix := pathpkg.Dir(path)
			n := 0
			for _, p := range pkgs {
				rest, ok := strings.CutPrefix(p.ImportPath, prefix+"/")
				if ok && !strings.Contains(rest, "/") && slices.Contains(owned, rest) {
					found = append(found, p)
					n++
				}
			}
			if n == 0 {
				missing = append(missing, name)
			}
			continue
		}
		if p, ok := pkgs[path]; ok {
			found = append(found, p)
		} else {
			missing = append(missing, name)
		}
	}
	return found, missing
}

// TestArchitectureNamesEveryPackage checks docs/architecture.md's package
// table against go list: every package of the module has a row, every
// package a row names exists, every Go file a row names is a file of one
// of its packages, every module package its imports cell names is
// imported by one of them, and a row that says "std only" imports nothing
// outside the standard library.
func TestArchitectureNamesEveryPackage(t *testing.T) {
	pkgs := archPackages(t)
	rows := archRows(t)
	named := map[string]bool{}
	goFile := regexp.MustCompile(`^[A-Za-z0-9_*]+\.go$`)
	for _, r := range rows {
		found, missing := rowPackages(r, pkgs)
		for _, m := range missing {
			t.Errorf("docs/architecture.md:%d: %s is no package of the module (go list ./...)", r.line, m)
		}
		imported := map[string]bool{}
		var files []string
		for _, p := range found {
			named[p.ImportPath] = true
			files = append(files, slices.Concat(p.GoFiles, p.IgnoredGoFiles, p.TestGoFiles, p.XTestGoFiles)...)
			for _, imp := range p.Imports {
				imported[imp] = true
			}
		}
		for _, w := range ticked(r.owns) {
			if !goFile.MatchString(w) {
				continue
			}
			if !slices.ContainsFunc(files, func(f string) bool { ok, _ := filepath.Match(w, f); return ok }) {
				t.Errorf("docs/architecture.md:%d: %s is no file of %s", r.line, w, r.names)
			}
		}
		for _, w := range ticked(r.imports) {
			path := "thv/" + w
			if _, ok := pkgs[path]; ok && !imported[path] {
				t.Errorf("docs/architecture.md:%d: %s does not import %s", r.line, r.names, w)
			}
		}
		if strings.HasPrefix(r.imports, "std only") {
			for imp := range imported {
				if first, _, _ := strings.Cut(imp, "/"); first == "thv" || strings.Contains(first, ".") {
					t.Errorf("docs/architecture.md:%d: %s imports %s, not \"std only\"", r.line, r.names, imp)
				}
			}
		}
	}
	for path := range pkgs {
		if !named[path] {
			t.Errorf("docs/architecture.md: no row names package %s", path)
		}
	}
}
