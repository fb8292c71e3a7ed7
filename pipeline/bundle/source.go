package bundle

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"

	"thv/pipeline/codeid"
)

// SourceCode says how to identify the code of a bundle's source/, a
// module's source tree: as the lock's code units were computed.
type SourceCode struct {
	Module     string              // the module's path, e.g. "thv"
	ThirdParty map[string][]string // codeid.Config.ThirdParty: this thv's
	// Own is this thv's own source (the tree it was built from): a file
	// of source/ outside every code identity is checked if it is
	// identical to Own's.
	Own fs.FS
}

// ErrSourceDiffers is wrapped by CheckSource's error for a source/ that
// is not the code the lock records.
var ErrSourceDiffers = errors.New("the bundle's source/ is not the code its lock records")

// maxSourceDiffs is how many differences an error names.
const maxSourceDiffs = 8

// CheckSource checks the source/ of the bundle extracted in dir against
// code, the lock's code units: it computes the code identity of the
// lock's in-module packages from source/'s files (package codeid, with
// the module versions of source/go.mod and their go.sum hashes) and
// compares it unit by unit — every package's hash, every module's version
// and hash. A difference is an error wrapping ErrSourceDiffers that names
// each (a thv built from that source/ would not compute the lock's keys).
// Of the other files of source/, those identical to sc.Own are checked;
// the rest are named, not checked (the engine, the command line, tests,
// documentation: what a reviewer reads before building thv from source/).
// vendor/ is CheckVendor's.
func CheckSource(dir string, code map[string]string, sc SourceCode) ([]Check, error) {
	root := filepath.Join(dir, SourceDir)
	if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
		return []Check{{Item: SourceDir + "/", Status: NotChecked, Reason: "the bundle holds no source/"}}, nil
	}
	src := os.DirFS(root)
	var roots []string
	for unit := range code {
		if unit == sc.Module || strings.HasPrefix(unit, sc.Module+"/") {
			roots = append(roots, unit)
		}
	}
	slices.Sort(roots)
	if len(roots) == 0 {
		return nil, fmt.Errorf("%w: the lock records no package of module %s", ErrSourceDiffers, sc.Module)
	}
	mods, err := moduleVersions(src)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrSourceDiffers, err)
	}
	m := codeid.New(codeid.Config{Path: sc.Module, Sources: src, ThirdParty: sc.ThirdParty, Modules: mods, Toolchain: code[codeid.ToolchainUnit]})
	id, err := m.Identity(roots...)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrSourceDiffers, err)
	}
	var diffs []string
	seen := map[string]bool{}
	for _, u := range id.Units {
		seen[u.Name] = true
		switch want, ok := code[u.Name]; {
		case !ok:
			diffs = append(diffs, fmt.Sprintf("%s: in source/'s code, not in the lock's", u.Name))
		case want != u.Hash:
			diffs = append(diffs, fmt.Sprintf("%s: source/ gives %s, the lock records %s", u.Name, u.Hash, want))
		}
	}
	for _, unit := range sortedPaths(code) {
		if !seen[unit] {
			diffs = append(diffs, fmt.Sprintf("%s: in the lock's code, not in source/'s", unit))
		}
	}
	if len(diffs) > 0 {
		more := ""
		if len(diffs) > maxSourceDiffs {
			more = fmt.Sprintf("; and %d more", len(diffs)-maxSourceDiffs)
			diffs = diffs[:maxSourceDiffs]
		}
		return nil, fmt.Errorf("%w (%s%s)", ErrSourceDiffers, strings.Join(diffs, "; "), more)
	}

	// The files the identity hashed, and the others.
	identified := map[string]bool{}
	packages, files := 0, 0
	for _, u := range id.Units {
		if u.Name != sc.Module && !strings.HasPrefix(u.Name, sc.Module+"/") {
			continue
		}
		pkgFiles, err := m.Files(u.Name)
		if err != nil {
			return nil, err
		}
		packages++
		for _, f := range pkgFiles {
			identified[f] = true
			files++
		}
	}
	var same, other []string
	err = fs.WalkDir(src, ".", func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && p == VendorDir:
			return fs.SkipDir
		case d.IsDir() || identified[p]:
			return nil
		}
		if sameFile(src, sc.Own, p) {
			same = append(same, p)
		} else {
			other = append(other, SourceDir+"/"+p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	checks := []Check{{Item: fmt.Sprintf("source/: the %d files of the %d packages the lock's keys cover", files, packages), Status: Rederived,
		Reason: fmt.Sprintf("hashed as the lock's code identity: every package's code, and every module's version and go.sum hash (%d units), is the lock's", len(id.Units))}}
	if len(same) > 0 {
		checks = append(checks, Check{Item: fmt.Sprintf("source/: %d other files", len(same)), Status: Rederived,
			Reason: "byte for byte this thv's own source (the engine, the command line, tests, documentation as this thv was built from them)"})
	}
	if len(other) > 0 {
		checks = append(checks, Check{Item: fmt.Sprintf("source/: %d other files", len(other)), Status: NotChecked,
			Reason: "outside every task's code identity and not this thv's own source (the engine, the command line, tests, documentation): read them before building thv from source/", Files: other})
	}
	return checks, nil
}

// sameFile reports whether the file p of a has the bytes of p in b.
func sameFile(a, b fs.FS, p string) bool {
	if b == nil {
		return false
	}
	x, err := fs.ReadFile(a, p)
	if err != nil {
		return false
	}
	y, err := fs.ReadFile(b, p)
	return err == nil && bytes.Equal(x, y)
}

// moduleVersions lists the modules the go.mod of a module source tree
// requires, at their versions, with their go.sum hashes (the build info
// of a binary built from it would list the same). Replacements are not
// supported: this module has none.
func moduleVersions(src fs.FS) ([]*debug.Module, error) {
	mod, err := fs.ReadFile(src, "go.mod")
	if err != nil {
		return nil, fmt.Errorf("source/go.mod: %w", err)
	}
	sum, err := fs.ReadFile(src, "go.sum")
	if err != nil {
		return nil, fmt.Errorf("source/go.sum: %w", err)
	}
	required, err := parseRequires(mod)
	if err != nil {
		return nil, fmt.Errorf("source/go.mod: %w", err)
	}
	sums := codeid.GoSumHashes(sum)
	var mods []*debug.Module
	for _, r := range required {
		mods = append(mods, &debug.Module{Path: r[0], Version: r[1], Sum: sums[r[0]+" "+r[1]]})
	}
	return mods, nil
}

// parseRequires reads the require directives of a go.mod file: single
// lines and blocks, each "path version [// comment]". Any replace
// directive is an error.
func parseRequires(gomod []byte) ([][2]string, error) {
	var out [][2]string
	inBlock := false
	for i, line := range strings.Split(string(gomod), "\n") {
		line, _, _ = strings.Cut(line, "//")
		f := strings.Fields(line)
		switch {
		case len(f) == 0:
		case inBlock && f[0] == ")":
			inBlock = false
		case inBlock && len(f) == 2:
			out = append(out, [2]string{f[0], f[1]})
		case inBlock:
			return nil, fmt.Errorf("line %d: want \"path version\" in a require block", i+1)
		case f[0] == "require" && len(f) == 2 && f[1] == "(":
			inBlock = true
		case f[0] == "require" && len(f) == 3:
			out = append(out, [2]string{f[1], f[2]})
		case f[0] == "replace":
			return nil, fmt.Errorf("line %d: a replace directive (not supported: the lock names modules by version)", i+1)
		}
	}
	if inBlock {
		return nil, errors.New("a require block is not closed")
	}
	return out, nil
}

// VendorDir is the vendored modules' directory in a module's source.
const VendorDir = "vendor"

// CheckVendor checks the source/vendor/ of the bundle extracted in dir,
// the modules a build with -mod=vendor compiles: vendor/modules.txt must
// name each module at the version source/go.mod requires, every vendored
// file must lie in a module it names, and each file of a module that
// modcache (this machine's module cache, e.g. $GOMODCACHE) holds is
// compared byte for byte with the module's file there — which the go
// command extracted only after checking the module against its go.sum
// hash. A difference rejects the bundle; a module the cache lacks is
// named, not checked ("" checks none).
func CheckVendor(dir, modcache string) ([]Check, error) {
	root := filepath.Join(dir, SourceDir, VendorDir)
	if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
		return []Check{{Item: SourceDir + "/" + VendorDir + "/", Status: NotChecked, Reason: "the bundle holds no vendored modules: building thv from source/ needs the module proxy"}}, nil
	}
	mods, err := moduleVersions(os.DirFS(filepath.Join(dir, SourceDir)))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrSourceDiffers, err)
	}
	required := map[string]string{}
	for _, m := range mods {
		required[m.Path] = m.Version
	}
	txt, err := os.ReadFile(filepath.Join(root, "modules.txt"))
	if err != nil {
		return nil, fmt.Errorf("%w: vendor/modules.txt: %v", ErrSourceDiffers, err)
	}
	vendored := map[string]string{} // module path → version
	for i, line := range strings.Split(string(txt), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || f[0] != "#" {
			continue
		}
		if len(f) != 3 {
			return nil, fmt.Errorf("%w: vendor/modules.txt line %d: want \"# path version\" (replacements are not supported)", ErrSourceDiffers, i+1)
		}
		if required[f[1]] != f[2] {
			return nil, fmt.Errorf("%w: vendor/modules.txt vendors %s %s, source/go.mod requires %q", ErrSourceDiffers, f[1], f[2], required[f[1]])
		}
		vendored[f[1]] = f[2]
	}
	byModule := map[string][]string{} // module path → its files, module-relative
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if rel == "modules.txt" {
			return nil
		}
		mod := ""
		for dir := path.Dir(rel); dir != "."; dir = path.Dir(dir) {
			if _, ok := vendored[dir]; ok {
				mod = dir
				break
			}
		}
		if mod == "" {
			return fmt.Errorf("%w: vendor/%s lies in no module that vendor/modules.txt names", ErrSourceDiffers, rel)
		}
		byModule[mod] = append(byModule[mod], strings.TrimPrefix(rel, mod+"/"))
		return nil
	})
	if err != nil {
		return nil, err
	}
	var checkedFiles, checkedMods, uncheckedFiles int
	var missing []string
	for _, mod := range sortedPaths(byModule) {
		cached := ""
		if modcache != "" {
			cached = filepath.Join(modcache, filepath.FromSlash(escapeModule(mod)+"@"+escapeModule(vendored[mod])))
		}
		if fi, err := os.Stat(cached); cached == "" || err != nil || !fi.IsDir() {
			missing = append(missing, mod+"@"+vendored[mod])
			uncheckedFiles += len(byModule[mod])
			continue
		}
		for _, f := range byModule[mod] {
			a, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(mod+"/"+f)))
			if err != nil {
				return nil, err
			}
			b, err := os.ReadFile(filepath.Join(cached, filepath.FromSlash(f)))
			if err != nil || !bytes.Equal(a, b) {
				return nil, fmt.Errorf("%w: source/vendor/%s/%s is not the file of module %s@%s in this machine's module cache", ErrSourceDiffers, mod, f, mod, vendored[mod])
			}
		}
		checkedFiles += len(byModule[mod])
		checkedMods++
	}
	var checks []Check
	if checkedFiles > 0 {
		checks = append(checks, Check{Item: fmt.Sprintf("source/vendor/: %d files of %d modules", checkedFiles, checkedMods), Status: Rederived,
			Reason: "byte for byte the modules' files in this machine's module cache, which the go command checked against go.sum; vendor/modules.txt names the versions source/go.mod requires"})
	}
	if len(missing) > 0 {
		checks = append(checks, Check{Item: fmt.Sprintf("source/vendor/: %d files of %d modules", uncheckedFiles, len(missing)), Status: NotChecked,
			Reason: "this machine's module cache does not hold these modules (go mod download in source/ fetches them, checked against go.sum); a thv built from source/ compiles them", Files: missing})
	}
	return checks, nil
}

// escapeModule escapes a module path or version as the module cache
// names it: each upper-case letter as '!' and its lower case.
func escapeModule(s string) string {
	var b strings.Builder
	for _, r := range s {
		if 'A' <= r && r <= 'Z' {
			b.WriteByte('!')
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// ModuleCache is this machine's Go module cache, as the go command finds
// it without being run: $GOMODCACHE, else the first $GOPATH's pkg/mod,
// else ~/go/pkg/mod.
func ModuleCache() string {
	if d := os.Getenv("GOMODCACHE"); d != "" {
		return d
	}
	if gp := filepath.SplitList(os.Getenv("GOPATH")); len(gp) > 0 && gp[0] != "" {
		return filepath.Join(gp[0], "pkg", "mod")
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, "go", "pkg", "mod")
	}
	return ""
}
