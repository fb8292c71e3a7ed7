package thv

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"thv/internal/testenv"
)

// crossArch is one build of thv that must give the host's lock: GOARCH and
// GOAMD64 for the build, and the emulator that runs it (none: natively).
type crossArch struct {
	name     string
	env      []string
	emulator []string // first found is used
}

var crossArches = []crossArch{
	{"arm64", []string{"GOARCH=arm64"}, []string{"qemu-aarch64", "qemu-aarch64-static"}},
	{"riscv64", []string{"GOARCH=riscv64"}, []string{"qemu-riscv64", "qemu-riscv64-static"}},
	{"amd64-v3", []string{"GOARCH=amd64", "GOAMD64=v3"}, nil},
}

// TestCrossArchLock runs the quick profile (THV_CROSSARCH_PROFILE, or a
// params file in THV_CROSSARCH_PARAMS) with thv built for amd64 (GOAMD64=v1,
// the reference), arm64 and riscv64 under qemu-user, and amd64 GOAMD64=v3,
// each from a plain go build and a fresh store, and fails with the first
// task whose lock line differs from the reference's: the whole lock must be
// byte-identical. (No task outputs a PNG, whose pixels the rasteriser's
// float32 code makes CPU-dependent: the figures tasks output the curves
// they draw and the PDF, and the PNGs of results/ are drawn from those
// curves at export, outside the lock; docs/reproducibility.md.) It runs
// with THV_CROSSARCH=1 (make crossarch, in CI); without qemu it is
// skipped, or fails with CI=true.
func TestCrossArchLock(t *testing.T) {
	if os.Getenv("THV_CROSSARCH") != "1" {
		t.Skip("set THV_CROSSARCH=1 (make crossarch)")
	}
	goCmd := requireGo(t)
	args := []string{"repro", "-j", "2"}
	if p := os.Getenv("THV_CROSSARCH_PARAMS"); p != "" {
		abs, err := filepath.Abs(p)
		if err != nil {
			t.Fatal(err)
		}
		args = append(args, "--params", abs)
	} else {
		profile := os.Getenv("THV_CROSSARCH_PROFILE")
		if profile == "" {
			profile = "quick"
		}
		args = append(args, "--profile", profile)
	}
	dir := t.TempDir()
	build := func(name string, env []string) string {
		bin := filepath.Join(dir, "thv-"+name)
		cmd := exec.Command(goCmd, "build", "-o", bin, "./cmd/thv")
		cmd.Env = append(os.Environ(), append([]string{"CGO_ENABLED=0"}, env...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("build thv for %s: %v\n%s", name, err, out)
		}
		return bin
	}
	run := func(name string, argv []string) []byte {
		work := filepath.Join(dir, "run-"+name)
		if err := os.MkdirAll(work, 0o755); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		cmd := exec.Command(argv[0], append(argv[1:], args...)...)
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "THV_STORE=")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: thv %s: %v\n%s", name, strings.Join(args, " "), err, tail(out))
		}
		t.Logf("%s: %s in %v", name, strings.Join(args, " "), time.Since(start).Round(time.Second))
		locks, _ := filepath.Glob(filepath.Join(work, "thv*.lock"))
		if len(locks) != 1 {
			t.Fatalf("%s: %d lock files in %s", name, len(locks), work)
		}
		b, err := os.ReadFile(locks[0])
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	ref := run("amd64", []string{build("amd64", []string{"GOARCH=amd64", "GOAMD64=v1"})})
	for _, a := range crossArches {
		t.Run(a.name, func(t *testing.T) {
			argv := []string{build(a.name, a.env)}
			if a.emulator != nil {
				argv = append([]string{testenv.LookPath(t, a.emulator...)}, argv...)
			} else if !hostHasV3() {
				argv = append([]string{testenv.LookPath(t, "qemu-x86_64", "qemu-x86_64-static"), "-cpu", "max"}, argv...)
			}
			got := run(a.name, argv)
			if !bytes.Equal(got, ref) {
				t.Fatalf("%s: lock differs from amd64's first at task %s", a.name, firstDifference(ref, got))
			}
			t.Logf("%s: the same lock as amd64, byte for byte (%d bytes)", a.name, len(got))
		})
	}
}

// firstDifference compares two locks line by line and returns the task of
// the first line that differs: "" if none, "(lock header)" for a line
// without a task ID.
func firstDifference(a, b []byte) string {
	la, lb := bytes.Split(a, []byte("\n")), bytes.Split(b, []byte("\n"))
	for i := range max(len(la), len(lb)) {
		var x, y []byte
		if i < len(la) {
			x = la[i]
		}
		if i < len(lb) {
			y = lb[i]
		}
		if bytes.Equal(x, y) {
			continue
		}
		if id := taskID(x); id != "" {
			return id
		}
		if id := taskID(y); id != "" {
			return id
		}
		return "(lock header)"
	}
	return ""
}

// taskID is the "id" of a lock line, or "".
func taskID(line []byte) string {
	var r struct {
		ID string `json:"id"`
	}
	if json.Unmarshal(bytes.TrimSuffix(bytes.TrimSpace(line), []byte(",")), &r) != nil {
		return ""
	}
	return r.ID
}

// hostHasV3 reports whether this CPU runs GOAMD64=v3 code (AVX2, FMA, BMI2).
func hostHasV3() bool {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "flags") {
			f := " " + line + " "
			return strings.Contains(f, " avx2 ") && strings.Contains(f, " fma ") && strings.Contains(f, " bmi2 ")
		}
	}
	return false
}

func tail(b []byte) []byte {
	if len(b) > 4000 {
		return b[len(b)-4000:]
	}
	return b
}

// TestFirstDifference checks the comparison the cross-architecture test
// relies on: identical locks, and a difference named by its task, whatever
// the output (a PDF or the curves of a figure as much as a run's).
func TestFirstDifference(t *testing.T) {
	d := func(c byte) string { return "sha256:" + strings.Repeat(string(c), 64) }
	line := func(id, pdf, curves string) string {
		return `{"id":"` + id + `","kind":"figures","outputs":{"d2.curves.parquet":"` + curves + `","d2.pdf":"` + pdf + `"}},`
	}
	head := "{\"version\": 2,\n\"tasks\": [\n"
	a := head + line("run/x", d('1'), d('2')) + "\n" + line("figures/d2", d('3'), d('4')) + "\n]}\n"
	if first := firstDifference([]byte(a), []byte(a)); first != "" {
		t.Errorf("same locks: %q", first)
	}
	for what, c := range map[string]struct{ old, new, task string }{
		"curves": {d('4'), d('5'), "figures/d2"},
		"PDF":    {d('3'), d('6'), "figures/d2"},
		"run":    {d('1'), d('7'), "run/x"},
		"header": {"2,", "3,", "(lock header)"},
	} {
		if first := firstDifference([]byte(a), []byte(strings.Replace(a, c.old, c.new, 1))); first != c.task {
			t.Errorf("%s difference: first = %q, want %q", what, first, c.task)
		}
	}
	if first := firstDifference([]byte(a), []byte(a+"x")); first != "(lock header)" {
		t.Errorf("a longer lock: first = %q", first)
	}
}
