// Command run is the mutation test of code identities (make mutants,
// docs/pipeline.md): it proves on mutants of the module that a task whose
// key does not change gives the outputs it gave.
//
// In a copy of the module it builds thv and runs the mutation protocol
// (internal/mutants/testdata/mutants.yaml: every kind, all fourteen
// algorithms, every d), then builds the probe (internal/mutants/probe) and
// has it re-execute every task of that lock: the base. Then, for random
// sites (internal/mutants: an operator flipped, a constant changed, two
// arguments swapped, a statement deleted) in the non-test declarations of
// the packages the protocol's tasks import, until -n mutants compile: it
// applies the site to the copy, builds the probe from it, and has the
// mutant re-execute every task from the lock's recorded inputs. A task
// whose code identity is the base's (its key then is too: its parameters
// and inputs are the lock's) and whose outputs differ is unsound; a run
// with one fails. Every mutant's result is a line of -report; the summary
// gives the precision of the identities — the share of mutants that
// changed some task's key yet no output of a task whose key changed —
// beside that of the package-level identities they replaced (every task
// whose import closure holds the mutated package), which rerun whatever
// imports the mutated package.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"thv/internal/mutants"
)

// Outcome is what a mutant did, a line of the report.
type Outcome struct {
	N        int           `json:"n"`
	Site     mutants.Site  `json:"site"`
	Compiles bool          `json:"compiles"`
	Starts   bool          `json:"starts"` // its probe starts (no package's initialisation panics)
	Tasks    int           `json:"tasks,omitempty"`
	Keys     int           `json:"keys_changed,omitempty"`         // tasks whose code identity changed
	Outputs  int           `json:"outputs_changed,omitempty"`      // tasks whose outputs changed
	Wasted   int           `json:"keys_changed_same_outputs"`      // tasks whose key changed and outputs did not
	PkgKeys  int           `json:"package_keys_changed,omitempty"` // tasks whose import closure holds the mutated package
	PkgWaste int           `json:"package_keys_changed_same_outputs"`
	Unsound  []string      `json:"unsound,omitempty"` // tasks whose key did not change and whose outputs did
	Skipped  int           `json:"skipped,omitempty"` // tasks not run: after a mutant hung twice in tasks whose key changed (or three times in others)
	Took     time.Duration `json:"took_ns"`
}

// result is a probe's line.
type result struct {
	Start    string            `json:"start"`
	ID       string            `json:"id"`
	Code     string            `json:"code"`
	Roots    []string          `json:"roots"`
	Packages []string          `json:"packages"`
	Outputs  map[string]string `json:"outputs"`
	Error    string            `json:"error"`
	Timeout  bool              `json:"timeout"`
	Skipped  bool              `json:"skipped"`
}

func (r result) same(o result) bool {
	return r.Error == o.Error && !r.Timeout && !o.Timeout && maps.Equal(r.Outputs, o.Outputs)
}

func main() {
	n := flag.Int("n", 200, "how many compiling mutants to test")
	seed := flag.Uint64("seed", 1, "the seed of the choice of sites")
	work := flag.String("work", "", "work directory (default: a new temporary one, removed at the end)")
	report := flag.String("report", "", "write every mutant's outcome there, one JSON line each")
	timeout := flag.Duration("timeout", 30*time.Second, "the longest a mutant's task may run (the protocol's take well under a second)")
	flag.Parse()
	if err := run(*n, *seed, *work, *report, *timeout); err != nil {
		fmt.Fprintln(os.Stderr, "mutants:", err)
		os.Exit(1)
	}
}

func run(n int, seed uint64, work, reportPath string, timeout time.Duration) error {
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	if work == "" {
		if work, err = os.MkdirTemp("", "thv-mutants"); err != nil {
			return err
		}
		defer os.RemoveAll(work)
	}
	src := filepath.Join(work, "src")
	fmt.Printf("copying the module to %s\n", src)
	if err := copyModule(root, src); err != nil {
		return err
	}
	params := filepath.Join(src, "internal", "mutants", "testdata", "mutants.yaml")
	runDir := filepath.Join(work, "base")
	os.MkdirAll(runDir, 0o755)
	thv := filepath.Join(work, "thv")
	if err := build(src, thv, "./cmd/thv"); err != nil {
		return fmt.Errorf("building thv: %w", err)
	}
	fmt.Println("running the mutation protocol")
	if out, err := command(runDir, thv, "repro", "--params", params, "-j", "2").CombinedOutput(); err != nil {
		return fmt.Errorf("thv repro: %v\n%s", err, out)
	}
	lock := filepath.Join(runDir, "thv-mutants.lock")
	store := filepath.Join(runDir, ".thv")
	probeBin := filepath.Join(work, "probe")
	if err := build(src, probeBin, "./internal/mutants/probe"); err != nil {
		return fmt.Errorf("building the probe: %w", err)
	}
	base, err := probe(probeBin, lock, store, params, "", nil, timeout)
	if err != nil {
		return fmt.Errorf("the base probe: %w", err)
	}
	if err := checkBase(base, lock); err != nil {
		return err
	}
	// The mutants take the tasks' roots from the base (unfolding the plan
	// runs code a mutant may break), and its identities, to run first the
	// tasks whose identity they keep.
	baseFile := filepath.Join(work, "base.json")
	if b, err := json.Marshal(base); err != nil {
		return err
	} else if err := os.WriteFile(baseFile, b, 0o644); err != nil {
		return err
	}
	ids := slices.Sorted(maps.Keys(base))
	closure := map[string]bool{}
	for _, r := range base {
		for _, p := range r.Packages {
			closure[p] = true
		}
	}
	sites, err := findSites(src, closure)
	if err != nil {
		return err
	}
	var total int
	for _, op := range mutants.Operators {
		total += len(sites[op])
		fmt.Printf("%d sites to %s\n", len(sites[op]), op)
	}
	fmt.Printf("%d tasks, %d packages, %d sites\n", len(base), len(closure), total)

	var reportFile *os.File
	if reportPath != "" {
		if reportFile, err = os.Create(reportPath); err != nil {
			return err
		}
		defer reportFile.Close()
	}
	fmt.Printf("seed %d\n", seed)
	rng := rand.New(rand.NewPCG(seed, 0x6d7574616e7473))
	var outcomes []Outcome
	compiled := 0
	for i := 1; compiled < n; i++ {
		ops := slices.DeleteFunc(slices.Clone(mutants.Operators), func(op mutants.Operator) bool { return len(sites[op]) == 0 })
		if len(ops) == 0 {
			return fmt.Errorf("sites exhausted after %d compiling mutants", compiled)
		}
		op := ops[rng.IntN(len(ops))]
		k := rng.IntN(len(sites[op]))
		site := sites[op][k]
		sites[op] = slices.Delete(sites[op], k, k+1)
		o, err := mutant(src, probeBin+"-mutant", lock, store, params, baseFile, site, base, ids, timeout)
		if err != nil {
			return err
		}
		o.N = i
		outcomes = append(outcomes, o)
		if o.Compiles && o.Starts {
			compiled++
		}
		if reportFile != nil {
			b, _ := json.Marshal(o)
			reportFile.Write(append(b, '\n'))
		}
		state := "does not compile"
		if o.Compiles && !o.Starts {
			state = "compiles, but a package's initialisation panics"
		}
		if o.Starts {
			state = fmt.Sprintf("keys %d (package-level %d), outputs %d, unsound %d", o.Keys, o.PkgKeys, o.Outputs, len(o.Unsound))
		}
		fmt.Printf("[%d/%d] %s: %s (%s)\n", compiled, n, site, state, o.Took.Round(time.Second))
	}
	return summarise(outcomes)
}

// mutant builds and probes one mutant, and restores the file.
func mutant(src, bin, lock, store, params, baseFile string, site mutants.Site, base map[string]result, ids []string, timeout time.Duration) (Outcome, error) {
	start := time.Now()
	o := Outcome{Site: site}
	file := filepath.Join(src, site.File)
	orig, err := os.ReadFile(file)
	if err != nil {
		return o, err
	}
	mutated, err := site.Apply(orig)
	if err != nil {
		return o, err
	}
	if err := os.WriteFile(file, mutated, 0o644); err != nil {
		return o, err
	}
	defer os.WriteFile(file, orig, 0o644)
	if err := build(src, bin, "./internal/mutants/probe"); err != nil {
		o.Took = time.Since(start)
		return o, nil
	}
	o.Compiles = true
	got, err := probe(bin, lock, store, params, baseFile, base, timeout)
	if errors.Is(err, errNoStart) {
		// A program linking the package cannot start: every pass fails,
		// loudly. Counted apart, as a mutant that does not compile.
		o.Took = time.Since(start)
		return o, nil
	}
	if err != nil {
		return o, fmt.Errorf("%s: %w", site, err)
	}
	o.Starts = true
	judge(&o, "thv/"+filepath.ToSlash(filepath.Dir(site.File)), base, got, ids)
	o.Took = time.Since(start)
	return o, nil
}

// judge compares a mutant's probe with the base's, task by task: its key
// changed if its code identity did (its parameters and inputs are the
// lock's); under package-level identities, if its import closure holds the
// mutated package pkg (a mutant changes its package's tokens); its outputs
// changed if they, or the error, differ, or it hung or crashed. A task
// whose outputs changed while its key did not is unsound.
func judge(o *Outcome, pkg string, base, got map[string]result, ids []string) {
	for _, id := range ids {
		b, m := base[id], got[id]
		if m.ID == "" || m.Skipped { // not run: the mutant hung too often
			o.Skipped++
			continue
		}
		keyChanged := m.Code != b.Code
		outChanged := !m.same(b)
		pkgChanged := slices.Contains(b.Packages, pkg)
		o.Tasks++
		if keyChanged {
			o.Keys++
			if !outChanged {
				o.Wasted++
			}
		}
		if pkgChanged {
			o.PkgKeys++
			if !outChanged {
				o.PkgWaste++
			}
		}
		if outChanged {
			o.Outputs++
			if !keyChanged {
				o.Unsound = append(o.Unsound, id)
			}
		}
	}
}

// probe runs the probe on every task of the lock, resuming after a task
// that hangs or crashes it (recorded as such). With a base's results
// (baseFile), the tasks that keep their identity come first: after two of
// the others hang, the rest of them is skipped (their outputs judge only
// the precision); after three of the first hang, the mutant is proven
// unsound and the rest is skipped.
func probe(bin, lock, store, params, baseFile string, base map[string]result, timeout time.Duration) (map[string]result, error) {
	out := map[string]result{}
	after := ""
	hungSame, hungChanged := 0, 0
	for {
		args := []string{"-lock", lock, "-store", store, "-params", params, "-timeout", timeout.String()}
		if baseFile != "" {
			args = append(args, "-base", baseFile)
		}
		if hungChanged >= 2 {
			args = append(args, "-skip-changed")
		}
		if after != "" {
			args = append(args, "-after", after)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
		cmd := exec.CommandContext(ctx, bin, args...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		stdout, err := cmd.Output()
		cancel()
		last, lastCode := "", ""
		sc := bufio.NewScanner(bytes.NewReader(stdout))
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			var r result
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				return nil, fmt.Errorf("probe output %q: %w", sc.Text(), err)
			}
			if r.Start != "" {
				last, lastCode = r.Start, r.Code
				continue
			}
			out[r.ID] = r
			last = ""
			after = r.ID
			if r.Timeout {
				if r.Code == base[r.ID].Code {
					hungSame++
				} else {
					hungChanged++
				}
			}
		}
		if err == nil {
			return out, nil
		}
		var exit *exec.ExitError
		switch {
		case errors.As(err, &exit) && exit.ExitCode() == 3: // a task hung: recorded
			if hungSame >= 3 {
				return out, nil
			}
		case last != "": // a task crashed the probe
			out[last] = result{ID: last, Code: lastCode, Error: "crashed: " + firstLine(stderr.String())}
			after = last
		case len(out) == 0 && strings.Contains(stderr.String(), "panic"):
			return nil, fmt.Errorf("%w: %s", errNoStart, firstLine(stderr.String()))
		default:
			return nil, fmt.Errorf("%v: %s", err, stderr.String())
		}
	}
}

// errNoStart is a probe that panics before its first task: a package's
// initialisation panics.
var errNoStart = errors.New("the probe does not start")

func firstLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[0]
}

// checkBase checks that the base probe re-executed every task of the lock
// with the outputs the lock records: re-execution decides, and a task that
// does not give its outputs again proves nothing about mutants.
func checkBase(base map[string]result, lockPath string) error {
	b, err := os.ReadFile(lockPath)
	if err != nil {
		return err
	}
	var lock struct {
		Tasks []struct {
			ID      string            `json:"id"`
			Outputs map[string]string `json:"outputs"` // name → "sha256:<hex>"
		} `json:"tasks"`
	}
	if err := json.Unmarshal(b, &lock); err != nil {
		return err
	}
	for _, t := range lock.Tasks {
		r, ok := base[t.ID]
		if !ok || r.Error != "" || r.Timeout || len(r.Outputs) != len(t.Outputs) {
			return fmt.Errorf("the base probe did not re-execute %s as the lock records it: %+v", t.ID, r)
		}
		for name, digest := range t.Outputs {
			if "sha256:"+r.Outputs[name] != digest {
				return fmt.Errorf("the base probe gave %s's output %s other bytes than the lock records", t.ID, name)
			}
		}
	}
	if len(base) != len(lock.Tasks) {
		return fmt.Errorf("the base probe re-executed %d tasks, the lock has %d", len(base), len(lock.Tasks))
	}
	return nil
}

// findSites lists the sites of the non-test Go files of the packages.
func findSites(src string, packages map[string]bool) (map[mutants.Operator][]mutants.Site, error) {
	out := map[mutants.Operator][]mutants.Site{}
	for _, pkg := range slices.Sorted(maps.Keys(packages)) {
		dir := strings.TrimPrefix(pkg, "thv/")
		entries, err := os.ReadDir(filepath.Join(src, dir))
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			name := e.Name()
			if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") || strings.HasPrefix(name, "_") || strings.HasPrefix(name, ".") {
				continue
			}
			rel := filepath.ToSlash(filepath.Join(dir, name))
			b, err := os.ReadFile(filepath.Join(src, rel))
			if err != nil {
				return nil, err
			}
			sites, err := mutants.Sites(rel, b)
			if err != nil {
				return nil, err
			}
			for op, s := range sites {
				out[op] = append(out[op], s...)
			}
		}
	}
	return out, nil
}

// summarise prints the run's figures and fails it if a mutant was unsound.
func summarise(outcomes []Outcome) error {
	var compiles, changed, wasted, pkgChanged, pkgWasted, keys, waste, pkgKeys, pkgWaste, outputsChanged int
	var unsound []string
	noStart, skipped, skippedMutants := 0, 0, 0
	for _, o := range outcomes {
		if o.Skipped > 0 {
			skipped += o.Skipped
			skippedMutants++
		}
		if o.Compiles && !o.Starts {
			noStart++
		}
		if !o.Starts {
			continue
		}
		compiles++
		keys, waste, pkgKeys, pkgWaste = keys+o.Keys, waste+o.Wasted, pkgKeys+o.PkgKeys, pkgWaste+o.PkgWaste
		if o.Outputs > 0 {
			outputsChanged++
		}
		if o.Keys > 0 {
			changed++
			if o.Wasted == o.Keys {
				wasted++
			}
		}
		if o.PkgKeys > 0 {
			pkgChanged++
			if o.PkgWaste == o.PkgKeys {
				pkgWasted++
			}
		}
		for _, id := range o.Unsound {
			unsound = append(unsound, fmt.Sprintf("%s: %s", o.Site, id))
		}
	}
	share := func(a, b int) string {
		if b == 0 {
			return "-"
		}
		return fmt.Sprintf("%.1f%%", 100*float64(a)/float64(b))
	}
	fmt.Printf("\n%d mutants, %d compile and start (%d more compile but cannot start); %d change the outputs of some task\n", len(outcomes), compiles, noStart, outputsChanged)
	fmt.Println("of the compiling mutants, those that change keys but no output of a task whose key changed (lower is finer):")
	fmt.Printf("  declaration-level identities: %d (%s); %d change keys\n", wasted, share(wasted, compiles), changed)
	fmt.Printf("  package-level identities:     %d (%s); %d change keys\n", pkgWasted, share(pkgWasted, compiles), pkgChanged)
	fmt.Println("of the tasks whose key a mutant changes, those whose outputs stay the same (reruns that change nothing):")
	fmt.Printf("  declaration-level identities: %d of %d (%s)\n", waste, keys, share(waste, keys))
	fmt.Printf("  package-level identities:     %d of %d (%s)\n", pkgWaste, pkgKeys, share(pkgWaste, pkgKeys))
	fmt.Printf("tasks not run (their mutant hung in others): %d, of %d mutants\n", skipped, skippedMutants)
	fmt.Printf("unsound: %d\n", len(unsound))
	for _, u := range unsound {
		fmt.Println("  UNSOUND", u)
	}
	if len(unsound) > 0 {
		return fmt.Errorf("%d tasks kept their keys and changed their outputs", len(unsound))
	}
	return nil
}

func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("not inside the module (no go.mod above the working directory)")
		}
		dir = parent
	}
}

// copyModule copies the module's tree, without git, builds, stores,
// results and node_modules.
func copyModule(from, to string) error {
	return filepath.WalkDir(from, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, path)
		if d.IsDir() {
			switch d.Name() {
			case ".git", "bin", ".thv", "results", "node_modules":
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), b, 0o644)
	})
}

func build(dir, out, pkg string) error {
	cmd := command(dir, "go", "build", "-o", out, pkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%v: %s", err, b)
	}
	return nil
}

func command(dir, name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	return cmd
}
