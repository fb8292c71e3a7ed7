package bundle

import (
	"bytes"
	"context"
	"fmt"
	"go/build"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// The platforms a bundle's source/ builds on offline: vendor/ keeps the
// files any of them compiles, with cgo and without.
var vendorPlatforms = []struct{ goos, goarch string }{
	{"linux", "amd64"}, {"linux", "arm64"},
	{"darwin", "amd64"}, {"darwin", "arm64"},
	{"windows", "amd64"}, {"windows", "arm64"},
}

// Vendor writes into dir (which must not exist) the vendor/ directory that
// lets module's source build mains (import paths of main packages, e.g.
// "thv/cmd/thv") offline, with go build -mod=vendor: the go command's own
// go mod vendor, run on a copy of the source, then pruned to the packages
// mains import on the platforms above and to the files those platforms
// compile, modules.txt listing exactly the packages kept. go mod vendor
// takes each module from the module cache (or the proxy) after checking it
// against go.sum; the go command is found on PATH and run with the
// caller's environment (GOPROXY, GOMODCACHE, GOFLAGS but -mod).
func Vendor(ctx context.Context, module fs.FS, modulePath string, mains []string, dir string) error {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		return fmt.Errorf("vendoring the modules of source/ (so that it builds offline) needs the go command: %w", err)
	}
	work, err := os.MkdirTemp("", "thv-vendor-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	src := filepath.Join(work, "module")
	if err := os.CopyFS(src, module); err != nil {
		return fmt.Errorf("vendoring: copying the module's source: %w", err)
	}
	cmd := exec.CommandContext(ctx, goCmd, "mod", "vendor", "-o", dir)
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		os.RemoveAll(dir)
		return fmt.Errorf("go mod vendor (so that source/ builds offline): %v: %s", err, bytes.TrimSpace(stderr.Bytes()))
	}
	if err := pruneVendor(src, modulePath, mains, dir); err != nil {
		os.RemoveAll(dir)
		return fmt.Errorf("vendoring: %w", err)
	}
	return nil
}

// vendorContexts are the build contexts of vendorPlatforms, cgo on and off.
func vendorContexts() []build.Context {
	var out []build.Context
	for _, p := range vendorPlatforms {
		for _, cgo := range []bool{false, true} {
			c := build.Default
			c.GOOS, c.GOARCH, c.CgoEnabled = p.goos, p.goarch, cgo
			c.BuildTags, c.ToolTags = nil, nil
			out = append(out, c)
		}
	}
	return out
}

// pruneVendor keeps in vendor (go mod vendor's output for the module at
// src) the packages that mains import, transitively, on any vendor
// context, and of theirs only the files some context compiles, and
// rewrites modules.txt to list the packages kept.
func pruneVendor(src, modulePath string, mains []string, vendor string) error {
	modules, err := os.ReadFile(filepath.Join(vendor, "modules.txt"))
	if err != nil {
		return err
	}
	listed := map[string]bool{}
	for _, line := range strings.Split(string(modules), "\n") {
		if line != "" && !strings.HasPrefix(line, "#") {
			listed[line] = true
		}
	}
	ctxs := vendorContexts()
	dirOf := func(pkg string) (string, bool) {
		if pkg == modulePath {
			return src, true
		}
		if rest, ok := strings.CutPrefix(pkg, modulePath+"/"); ok {
			return filepath.Join(src, filepath.FromSlash(rest)), true
		}
		return filepath.Join(vendor, filepath.FromSlash(pkg)), false
	}
	needed := map[string]bool{}   // third-party packages
	compiled := map[string]bool{} // their files some context compiles, vendor-relative
	seen := map[string]bool{}
	queue := slices.Clone(mains)
	for len(queue) > 0 {
		pkg := queue[0]
		queue = queue[1:]
		if seen[pkg] {
			continue
		}
		seen[pkg] = true
		dir, inModule := dirOf(pkg)
		if !inModule {
			if !listed[pkg] {
				return fmt.Errorf("package %s is imported but not vendored (vendor/modules.txt does not list it)", pkg)
			}
			needed[pkg] = true
		}
		ents, err := os.ReadDir(dir)
		if err != nil {
			return fmt.Errorf("package %s: %w", pkg, err)
		}
		for _, e := range ents {
			name := e.Name()
			if !e.Type().IsRegular() || strings.HasSuffix(name, "_test.go") {
				continue
			}
			matched := false
			for i := range ctxs {
				if ok, err := ctxs[i].MatchFile(dir, name); err == nil && ok {
					matched = true
					break
				}
			}
			if !matched {
				continue
			}
			if !inModule {
				compiled[pkg+"/"+name] = true
			}
			if !strings.HasSuffix(name, ".go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(dir, name), nil, parser.ImportsOnly)
			if err != nil {
				return fmt.Errorf("package %s: %w", pkg, err)
			}
			for _, imp := range f.Imports {
				p, err := strconv.Unquote(imp.Path.Value)
				if err != nil || p == "C" || isStandardImport(p, modulePath) {
					continue
				}
				queue = append(queue, p)
			}
		}
	}
	// Remove what no kept package compiles: the source files of packages
	// not needed and those no platform builds; licence files stay.
	err = filepath.WalkDir(vendor, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(vendor, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if rel == "modules.txt" || isLicence(d.Name()) {
			return nil
		}
		dir := path.Dir(rel)
		pkg := owner(dir, listed)
		switch {
		case !needed[pkg]:
		case dir != pkg:
			return nil // below a kept package: data it embeds
		case !isBuildFile(d.Name()) || compiled[rel]:
			return nil // a kept package's file that some platform compiles, or its data
		}
		return os.Remove(p)
	})
	if err != nil {
		return err
	}
	if err := removeEmptyDirs(vendor); err != nil {
		return err
	}
	var out strings.Builder
	for _, line := range strings.SplitAfter(string(modules), "\n") {
		if pkg := strings.TrimSuffix(line, "\n"); pkg != "" && !strings.HasPrefix(pkg, "#") && !needed[pkg] {
			continue
		}
		out.WriteString(line)
	}
	return os.WriteFile(filepath.Join(vendor, "modules.txt"), []byte(out.String()), 0o644)
}

// owner is the package of listed that dir (slash-separated, vendor-
// relative) belongs to: itself or its nearest listed parent; "" if none.
func owner(dir string, listed map[string]bool) string {
	for d := dir; d != "." && d != "/"; d = path.Dir(d) {
		if listed[d] {
			return d
		}
	}
	return ""
}

// isStandardImport reports whether an import path is the standard
// library's, by cmd/go's rule: its first element has no dot (and it is
// not the module's own, whose path may have none).
func isStandardImport(p, modulePath string) bool {
	if p == modulePath || strings.HasPrefix(p, modulePath+"/") {
		return false
	}
	first, _, _ := strings.Cut(p, "/")
	return !strings.Contains(first, ".")
}

// isBuildFile reports whether a file name is one the go command compiles
// or assembles (its extension), as opposed to data.
func isBuildFile(name string) bool {
	switch path.Ext(name) {
	case ".go", ".s", ".S", ".sx", ".c", ".cc", ".cpp", ".cxx", ".h", ".hh", ".hpp", ".hxx", ".m", ".f", ".F", ".for", ".f90", ".syso", ".swig", ".swigcxx":
		return true
	}
	return false
}

// isLicence reports whether a file is one of the licence files go mod
// vendor copies with every module.
func isLicence(name string) bool {
	up := strings.ToUpper(name)
	for _, p := range []string{"LICENSE", "LICENCE", "COPYING", "NOTICE", "PATENTS", "AUTHORS", "CONTRIBUTORS", "COPYRIGHT", "UNLICENSE"} {
		if strings.HasPrefix(up, p) {
			return true
		}
	}
	return false
}

// removeEmptyDirs removes the empty directories below root.
func removeEmptyDirs(root string) error {
	var dirs []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && p != root {
			dirs = append(dirs, p)
		}
		return err
	})
	if err != nil {
		return err
	}
	for i := len(dirs) - 1; i >= 0; i-- { // deepest first
		if ents, err := os.ReadDir(dirs[i]); err == nil && len(ents) == 0 {
			if err := os.Remove(dirs[i]); err != nil {
				return err
			}
		}
	}
	return nil
}
