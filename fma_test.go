package thv

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"thv/internal/testenv"
)

// hashedDirs are the trees whose code decides the artifacts (sources.go):
// every floating-point result computed there must have the same bits on
// every architecture (docs/reproducibility.md).
var hashedDirs = []string{"hv", "envs", "algos", "stages", "artifacts"}

// fusedAllowed lists the fused multiply-add sites tolerated in the hashed
// packages, as the compiler prints them ("file:line:col", inlining chains
// joined by "; "). It is empty: every x*y + z there is written
// float64(x*y) + z, or math.FMA where a fused result is wanted.
var fusedAllowed = []string{}

// fmaTargets are builds whose compiler fuses x*y + z (arm64, ppc64le,
// s390x and riscv64 always, amd64 from GOAMD64=v3 on). riscv64 and ppc64le
// also fuse a product into a float-to-unsigned conversion, which arm64
// does not; s390x finds nothing the others miss.
var fmaTargets = [][]string{
	{"GOARCH=arm64"},
	{"GOARCH=amd64", "GOAMD64=v3"},
	{"GOARCH=riscv64"},
	{"GOARCH=ppc64le"},
}

// TestNoFusedMultiplyAdd compiles the hashed packages for every target that
// fuses, with the compiler reporting each fused site (-d=fmahash=vy, which
// fuses as usual and prints where), and fails on any site not in
// fusedAllowed: a new a*b + c cannot slip in unseen.
func TestNoFusedMultiplyAdd(t *testing.T) {
	goCmd := requireGo(t)
	var pkgs []string
	for _, d := range hashedDirs {
		pkgs = append(pkgs, "./"+d+"/...")
	}
	for _, env := range fmaTargets {
		t.Run(strings.Join(env, ","), func(t *testing.T) {
			// The go command replays a cached package's compiler output, so
			// the shared build cache serves.
			cmd := exec.Command(goCmd, append([]string{"build", "-gcflags=-d=fmahash=vy"}, pkgs...)...)
			cmd.Env = append(os.Environ(), append(env, "CGO_ENABLED=0")...)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("go build %s: %v\n%s", strings.Join(env, " "), err, out)
			}
			var sites []string
			for _, line := range strings.Split(string(out), "\n") {
				site, ok := strings.CutPrefix(line, "fmahash triggered ")
				if !ok {
					continue
				}
				if i := strings.LastIndexByte(site, ' '); i >= 0 {
					site = site[:i] // drop the hash bits
				}
				if !slices.Contains(fusedAllowed, site) && !slices.Contains(sites, site) {
					sites = append(sites, site)
				}
			}
			if len(sites) > 0 {
				t.Errorf("%d fused multiply-add sites in hashed packages (%s); write float64(x*y) + z (or math.FMA) so that every CPU rounds alike:\n%s",
					len(sites), strings.Join(env, " "), strings.Join(sites, "\n"))
			}
		})
	}
}

// forbiddenMath are the math functions whose bits differ between
// architectures (assembly on some, fused polynomials on others); hashed code
// calls thv/envs/fmath instead. Sqrt, Abs, Floor, Ldexp, Frexp, … are exact
// or correctly rounded everywhere and stay.
var forbiddenMath = []string{
	"Sin", "Cos", "Tan", "Sincos", "Asin", "Acos", "Atan", "Atan2", "Sinh", "Cosh", "Tanh", "Asinh", "Acosh", "Atanh",
	"Exp", "Exp2", "Expm1", "Log", "Log2", "Log10", "Log1p", "Pow", "Cbrt", "Hypot",
	"Erf", "Erfc", "Erfinv", "Erfcinv", "Gamma", "Lgamma", "J0", "J1", "Jn", "Y0", "Y1", "Yn",
}

// forbiddenCalls are other calls of hashed code whose results differ
// between architectures.
var forbiddenCalls = map[string]string{
	"NormFloat64": "fmath.NormFloat64 (rand's tail calls math.Log and math.Exp and fuses)",
	"ExpFloat64":  "fmath.ExpFloat64 (rand's tail calls math.Log and math.Exp and fuses)",
}

// forbiddenStats are the functions of github.com/montanaflynn/stats that
// hashed code must not call (matched only on that package's name: a field
// or method called Percentile elsewhere is not one of them).
var forbiddenStats = map[string]string{
	"StandardDeviationSample": "the owned sampleSD of stages/stats (montanaflynn/stats fuses variance += d*d)",
	"StandardDeviation":       "an owned function (montanaflynn/stats fuses variance += d*d)",
	"Variance":                "an owned function (montanaflynn/stats fuses variance += d*d)",
	"Percentile":              "the owned percentile of stages/stats (montanaflynn/stats fuses its interpolation)",
}

// TestHashedCodeCallsPortableMath fails when hashed code calls a function
// whose bits depend on the architecture. The fused-site test cannot see
// these: the fusing happens in the standard library or a dependency.
func TestHashedCodeCallsPortableMath(t *testing.T) {
	fset := token.NewFileSet()
	for _, dir := range hashedDirs {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && d.Name() == "testdata" {
				return filepath.SkipDir
			}
			if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			f, err := parser.ParseFile(fset, path, nil, 0)
			if err != nil {
				return err
			}
			mathName, fmathName, statsName := "", "fmath", ""
			for _, imp := range f.Imports {
				if imp.Path.Value == `"thv/envs/fmath"` && imp.Name != nil {
					fmathName = imp.Name.Name
				}
				if imp.Path.Value == `"github.com/montanaflynn/stats"` {
					statsName = "stats"
					if imp.Name != nil {
						statsName = imp.Name.Name
					}
				}
				if imp.Path.Value == `"math"` {
					mathName = "math"
					if imp.Name != nil {
						mathName = imp.Name.Name
					}
				}
				if p := strings.Trim(imp.Path.Value, `"`); strings.HasPrefix(p, "gonum.org/v1/gonum/stat") || strings.HasPrefix(p, "gonum.org/v1/gonum/mathext") {
					t.Errorf("%s imports %s, whose numerics are fused differently per CPU", path, p)
				}
			}
			ast.Inspect(f, func(n ast.Node) bool {
				sel, ok := n.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				if x, ok := sel.X.(*ast.Ident); ok && x.Name == mathName && slices.Contains(forbiddenMath, sel.Sel.Name) {
					t.Errorf("%s: math.%s: its bits differ between CPUs; use thv/envs/fmath", fset.Position(sel.Pos()), sel.Sel.Name)
				}
				if x, ok := sel.X.(*ast.Ident); ok && x.Name == fmathName {
					return true
				}
				if x, ok := sel.X.(*ast.Ident); ok && statsName != "" && x.Name == statsName {
					if use, ok := forbiddenStats[sel.Sel.Name]; ok {
						t.Errorf("%s: stats.%s: its bits differ between CPUs; use %s", fset.Position(sel.Pos()), sel.Sel.Name, use)
					}
				}
				if use, ok := forbiddenCalls[sel.Sel.Name]; ok {
					t.Errorf("%s: %s: its bits differ between CPUs; use %s", fset.Position(sel.Pos()), sel.Sel.Name, use)
				}
				return true
			})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// requireGo returns the go command, skipping the test without it (failing
// with CI=true, where a missing tool is an error).
func requireGo(t *testing.T) string {
	t.Helper()
	return testenv.LookPath(t, "go", filepath.Join(os.Getenv("GOROOT"), "bin", "go"), "/usr/local/go/bin/go")
}
