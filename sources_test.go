package thv

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"go/format"
	"io"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"reflect"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"testing"

	"thv/pipeline/codeid"
)

var update = flag.Bool("update", false, "rewrite thirdparty.go from go list")

// fingerprinted are the package patterns whose code the pipeline fingerprints:
// the directories embedded in Sources.
var fingerprinted = []string{"./hv/...", "./envs/...", "./algos/...", "./stages/...", "./artifacts/..."}

// listPlatforms are the GOOS/GOARCH pairs (each with cgo off and on) whose
// package graphs the third-party table and TestIdentityMatchesGoList take the
// union of, so that the table does not depend on the machine that generates
// it. The host platform is added if missing.
var listPlatforms = []string{"darwin/amd64", "darwin/arm64", "linux/amd64", "linux/arm64", "windows/amd64"}

func platforms() []string {
	ps := slices.Clone(listPlatforms)
	if host := runtime.GOOS + "/" + runtime.GOARCH; !slices.Contains(ps, host) {
		ps = append(ps, host)
	}
	return ps
}

type listedModule struct {
	Path, Version, Sum string
	Main               bool
	Replace            *listedModule
}

// unit is the codeid unit of a listed module.
func (m *listedModule) unit() codeid.Unit {
	if r := m.Replace; r != nil {
		return codeid.Unit{Name: m.Path + "=>" + r.Path + "@" + r.Version, Hash: r.Sum}
	}
	return codeid.Unit{Name: m.Path + "@" + m.Version, Hash: m.Sum}
}

type listedPackage struct {
	ImportPath     string
	Name           string
	Standard       bool
	Module         *listedModule
	Deps           []string
	GoFiles        []string
	CgoFiles       []string
	IgnoredGoFiles []string
	SFiles         []string
	HFiles         []string
	SysoFiles      []string
	EmbedPatterns  []string
	EmbedFiles     []string
	Error          *struct{ Err string }
}

// goList runs "go list -e -deps" on args for one platform ("GOOS/GOARCH
// cgo=0|1") and indexes the packages by import path.
func goList(platform string, args []string) (map[string]*listedPackage, error) {
	goos, rest, _ := strings.Cut(platform, "/")
	goarch, cgo, _ := strings.Cut(rest, " cgo=")
	cmd := exec.Command("go", append([]string{"list", "-e", "-deps",
		"-json=ImportPath,Name,Standard,Module,Deps,GoFiles,CgoFiles,IgnoredGoFiles,SFiles,HFiles,SysoFiles,EmbedPatterns,EmbedFiles,Error"}, args...)...)
	cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH="+goarch, "CGO_ENABLED="+cgo)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%s: go list: %v: %s", platform, err, stderr.Bytes())
	}
	idx := map[string]*listedPackage{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		p := new(listedPackage)
		if err := dec.Decode(p); err == io.EOF {
			break
		} else if err != nil {
			return nil, fmt.Errorf("%s: go list: %w", platform, err)
		}
		idx[p.ImportPath] = p
	}
	return idx, nil
}

// goListAll runs goList for every platform, with cgo off and on, in parallel.
func goListAll(t *testing.T, args []string) map[string]map[string]*listedPackage {
	t.Helper()
	var (
		mu   sync.Mutex
		wg   sync.WaitGroup
		out  = map[string]map[string]*listedPackage{}
		errs []error
	)
	for _, p := range platforms() {
		for _, cgo := range []string{"0", "1"} {
			platform := p + " cgo=" + cgo
			wg.Go(func() {
				idx, err := goList(platform, args)
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					errs = append(errs, err)
				}
				out[platform] = idx
			})
		}
	}
	wg.Wait()
	for _, err := range errs {
		t.Fatal(err)
	}
	return out
}

// constraintsExcludeAll reports whether a go list error only says that a
// package has no files on this platform.
func constraintsExcludeAll(p *listedPackage) bool {
	return p.Error != nil && strings.Contains(p.Error.Err, "build constraints exclude all Go files")
}

// fingerprintedPackages lists the packages under the fingerprinted
// directories.
func fingerprintedPackages(t *testing.T) []string {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list"}, fingerprinted...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %s: %v: %s", strings.Join(fingerprinted, " "), err, stderr.Bytes())
	}
	return strings.Fields(string(out))
}

// thirdPartyTable derives the table: every import from outside the module of
// the fingerprinted packages' closure (all their non-test files, whatever the
// build constraints, as codeid reads them) that go list does not call
// standard, mapped to the modules of its package closure on any platform,
// and to its package name. It checks that the standard library's imports
// have the names codeid gives them (their paths' last elements).
func thirdPartyTable(t *testing.T) (map[string][]string, map[string]string) {
	t.Helper()
	m := codeid.New(codeid.Config{Path: "thv", Sources: Sources})
	ext, err := m.Imports(fingerprintedPackages(t)...)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]string{}
	sets := map[string]map[string]bool{}
	for platform, idx := range goListAll(t, ext) {
		for _, imp := range ext {
			p := idx[imp]
			switch {
			case p == nil:
				t.Fatalf("%s: go list does not list %s", platform, imp)
			case constraintsExcludeAll(p):
				continue
			case p.Error != nil:
				t.Fatalf("%s: %s: %s", platform, imp, p.Error.Err)
			case p.Standard:
				if want := stdName(imp); p.Name != want {
					t.Errorf("standard package %s is named %s, codeid takes it for %s: teach codeid's implicitName the exception", imp, p.Name, want)
				}
				continue
			}
			if prev, ok := names[imp]; ok && prev != p.Name {
				t.Fatalf("%s: package %s is named %s here, %s elsewhere", platform, imp, p.Name, prev)
			}
			names[imp] = p.Name
			if sets[imp] == nil {
				sets[imp] = map[string]bool{}
			}
			for _, dep := range append([]string{imp}, p.Deps...) {
				d := idx[dep]
				if d == nil {
					t.Fatalf("%s: go list does not list %s (a dependency of %s)", platform, dep, imp)
				}
				if d.Standard {
					continue
				}
				if d.Module == nil || d.Module.Main {
					t.Fatalf("%s: package %s (a dependency of %s) is in no third-party module", platform, dep, imp)
				}
				sets[imp][d.Module.Path] = true
			}
		}
	}
	table := map[string][]string{}
	for imp, set := range sets {
		for mp := range set {
			table[imp] = append(table[imp], mp)
		}
		slices.Sort(table[imp])
	}
	return table, names
}

// stdName is the name codeid gives a standard-library package it is not
// told: its path's last element, a major version element aside.
func stdName(importPath string) string {
	elems := strings.Split(importPath, "/")
	last := elems[len(elems)-1]
	if len(elems) > 1 && len(last) >= 2 && last[0] == 'v' && strings.Trim(last[1:], "0123456789") == "" {
		last = elems[len(elems)-2]
	}
	return last
}

func tableSource(t *testing.T, table map[string][]string, names map[string]string) []byte {
	var b bytes.Buffer
	b.WriteString(`// Code generated by "go test . -run TestThirdPartyTable -update"; DO NOT EDIT.

package thv

// ThirdParty maps each third-party package imported directly by a package of
// Sources (hv, envs, algos, stages, artifacts; all non-test files, whatever
// their build constraints) to the modules its package closure spans, from
// "go list -deps" on darwin, linux and windows (amd64, arm64; cgo off and on)
// and the generating host. A task's code identity (thv/pipeline/codeid)
// includes the version and go.sum hash of each module its packages reach.
var ThirdParty = map[string][]string{
`)
	imps := make([]string, 0, len(table))
	for imp := range table {
		imps = append(imps, imp)
	}
	slices.Sort(imps)
	for _, imp := range imps {
		fmt.Fprintf(&b, "\t%q: {", imp)
		for i, mp := range table[imp] {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%q", mp)
		}
		b.WriteString("},\n")
	}
	b.WriteString(`}

// ThirdPartyNames are the package names of the packages of ThirdParty: a
// file that imports one without naming it refers to it by that name, which
// codeid needs to tell which package a declaration names.
var ThirdPartyNames = map[string]string{
`)
	for _, imp := range imps {
		fmt.Fprintf(&b, "\t%q: %q,\n", imp, names[imp])
	}
	b.WriteString("}\n")
	src, err := format.Source(b.Bytes())
	if err != nil {
		t.Fatalf("gofmt of the generated table: %v", err)
	}
	return src
}

func TestThirdPartyTable(t *testing.T) {
	const file = "thirdparty.go"
	table, names := thirdPartyTable(t)
	src := tableSource(t, table, names)
	if *update {
		if err := os.WriteFile(file, src, 0o666); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s (%d packages)", file, len(table))
		return
	}
	old, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(old, src) || !reflect.DeepEqual(ThirdParty, table) || !reflect.DeepEqual(ThirdPartyNames, names) {
		for imp, mods := range table {
			if !slices.Equal(ThirdParty[imp], mods) {
				t.Errorf("%s: table has %q, go list says %q", imp, ThirdParty[imp], mods)
			}
		}
		for imp := range ThirdParty {
			if _, ok := table[imp]; !ok {
				t.Errorf("%s: in the table, but no fingerprinted package imports it", imp)
			}
		}
		t.Fatalf("%s is stale; run: go test . -run TestThirdPartyTable -update", file)
	}
}

// TestIdentityMatchesGoList fails if any fingerprinted package's reachable
// code lies outside its code identity: a package, a file, a data file or a
// third-party module that the go command builds into it.
func TestIdentityMatchesGoList(t *testing.T) {
	if bi, ok := debug.ReadBuildInfo(); ok {
		t.Logf("test binary build info: path %s, main %s, %d dependency modules (codeid.ForBinary falls back to go list -m when there are none)", bi.Path, bi.Main.Path, len(bi.Deps))
	}
	m, err := codeid.ForBinary(Sources, ThirdParty, ThirdPartyNames)
	if err != nil {
		t.Fatal(err)
	}
	pkgs := fingerprintedPackages(t)
	lists := goListAll(t, pkgs)
	inModule := func(p string) bool { return p == "thv" || strings.HasPrefix(p, "thv/") }
	fileProblems := map[string][]string{} // problem → platforms
	checked := map[string]bool{}          // platform + package

	for _, root := range pkgs {
		wantPkgs := map[string]bool{}
		wantMods := map[string]string{}
		for platform, idx := range lists {
			p := idx[root]
			if p == nil || p.Error != nil {
				if p != nil && constraintsExcludeAll(p) {
					continue
				}
				t.Fatalf("%s: go list %s: %+v", platform, root, p)
			}
			for _, dep := range append([]string{root}, p.Deps...) {
				d := idx[dep]
				if d == nil {
					t.Fatalf("%s: go list does not list %s (a dependency of %s)", platform, dep, root)
				}
				if d.Error != nil {
					t.Fatalf("%s: %s: %s", platform, dep, d.Error.Err)
				}
				switch {
				case d.Standard:
				case inModule(dep):
					wantPkgs[dep] = true
					if !checked[platform+" "+dep] {
						checked[platform+" "+dep] = true
						for _, problem := range fileProblems1(m, d) {
							fileProblems[problem] = append(fileProblems[problem], platform)
						}
					}
				case d.Module == nil || d.Module.Main:
					t.Fatalf("%s: package %s (a dependency of %s) is in no third-party module", platform, dep, root)
				default:
					u := d.Module.unit()
					wantMods[u.Name] = u.Hash
				}
			}
		}

		got, err := m.Packages(root)
		if err != nil {
			t.Errorf("Packages(%s): %v", root, err)
			continue
		}
		extra := false
		for p := range wantPkgs {
			if !slices.Contains(got, p) {
				t.Errorf("Packages(%s) lacks %s, which go list -deps %s reports: its code is outside the identity", root, p, root)
			}
		}
		for _, p := range got {
			if !wantPkgs[p] {
				extra = true
				t.Logf("Packages(%s) has %s, which go list -deps %s does not report on any listed platform (imported only by files excluded everywhere?)", root, p, root)
			}
		}

		id, err := m.Identity(root)
		if err != nil {
			t.Errorf("Identity(%s): %v", root, err)
			continue
		}
		gotMods := map[string]string{}
		for _, u := range id.Units {
			switch {
			case u.Name == codeid.ToolchainUnit:
				if u.Hash != runtime.Version() {
					t.Errorf("Identity(%s): toolchain unit %q, want %q", root, u.Hash, runtime.Version())
				}
			case inModule(u.Name):
			default:
				gotMods[u.Name] = u.Hash
			}
		}
		for name, hash := range wantMods {
			if gotMods[name] != hash {
				t.Errorf("Identity(%s): module %s has %q, go list -deps says %q: regenerate the table: go test . -run TestThirdPartyTable -update", root, name, gotMods[name], hash)
			}
		}
		for name := range gotMods {
			if _, ok := wantMods[name]; !ok {
				if extra {
					t.Logf("Identity(%s) has module %s, which go list -deps does not report (see the extra packages above)", root, name)
				} else {
					t.Errorf("Identity(%s) has module %s, which go list -deps %s does not report on any listed platform", root, name, root)
				}
			}
		}
	}
	for _, problem := range slices.Sorted(maps.Keys(fileProblems)) {
		platforms := fileProblems[problem]
		slices.Sort(platforms)
		t.Errorf("%s (%s)", problem, strings.Join(platforms, ", "))
	}
}

// fileProblems1 checks that every Go file go list reports for the in-module
// package d is hashed, and that d embeds no data file.
func fileProblems1(m *codeid.Module, d *listedPackage) []string {
	var problems []string
	if len(d.EmbedPatterns) > 0 || len(d.EmbedFiles) > 0 {
		problems = append(problems, fmt.Sprintf("package %s embeds %q (%q): data files are outside the code identity; make them task inputs instead", d.ImportPath, d.EmbedPatterns, d.EmbedFiles))
	}
	files, err := m.Files(d.ImportPath)
	if err != nil {
		return append(problems, fmt.Sprintf("Files(%s): %v", d.ImportPath, err))
	}
	dir := strings.TrimPrefix(strings.TrimPrefix(d.ImportPath, "thv"), "/")
	for _, f := range slices.Concat(d.GoFiles, d.CgoFiles, d.IgnoredGoFiles, d.SFiles, d.HFiles, d.SysoFiles) {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		if rel := strings.TrimPrefix(dir+"/"+f, "/"); !slices.Contains(files, rel) {
			problems = append(problems, fmt.Sprintf("%s of package %s is compiled (or may be) but not hashed", rel, d.ImportPath))
		}
	}
	return problems
}

// TestSourcesEmbedEveryGoFile checks that every .go file under the embedded
// directories is in Sources, except those that go:embed leaves out (a path
// element beginning with "_" or "."), which the go command ignores as well
// (TestIdentityMatchesGoList checks that no file go list reports is missing).
func TestSourcesEmbedEveryGoFile(t *testing.T) {
	disk := os.DirFS(".")
	for _, top := range []string{"hv", "envs", "algos", "stages", "artifacts"} {
		err := fs.WalkDir(disk, top, func(p string, e fs.DirEntry, err error) error {
			if err != nil || e.IsDir() || !strings.HasSuffix(p, ".go") {
				return err
			}
			if _, err := fs.Stat(Sources, p); err == nil {
				return nil
			}
			for _, el := range strings.Split(p, "/") {
				if strings.HasPrefix(el, "_") || strings.HasPrefix(el, ".") {
					t.Logf("%s is not embedded (nor compiled by the go command)", p)
					return nil
				}
			}
			t.Errorf("%s is on disk but not in Sources: rebuild the test binary, or check the //go:embed line", p)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}
