package thv

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
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

// pngDigest matches the digest of a PNG output in a lock line: the one
// output allowed to differ between architectures (docs/reproducibility.md).
var pngDigest = regexp.MustCompile(`("[^"]*\.png":)"sha256:[0-9a-f]{64}"`)

// TestCrossArchLock runs the quick profile (THV_CROSSARCH_PROFILE, or a
// params file in THV_CROSSARCH_PARAMS) with thv built for amd64 (GOAMD64=v1,
// the reference), arm64 and riscv64 under qemu-user, and amd64 GOAMD64=v3,
// each from a plain go build and a fresh store, and fails with the first
// task whose lock line differs from the reference's. Only PNG digests may
// differ (the rasteriser's float32 code is fused differently per CPU); the
// figures' keys, which cover the data they draw, and their PDFs may not.
// It runs with THV_CROSSARCH=1 (make crossarch, in CI); without qemu it is
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
				argv = append([]string{requireTool(t, a.emulator...)}, argv...)
			} else if !hostHasV3() {
				argv = append([]string{requireTool(t, "qemu-x86_64", "qemu-x86_64-static"), "-cpu", "max"}, argv...)
			}
			got := run(a.name, argv)
			if bytes.Equal(got, ref) {
				return
			}
			pngOnly, task := compareLocks(ref, got)
			if task != "" {
				t.Fatalf("%s: lock differs from amd64's first at task %s", a.name, task)
			}
			t.Logf("%s: the same lock as amd64 except the PNG digests of %s", a.name, strings.Join(pngOnly, ", "))
		})
	}
}

// compareLocks compares two locks line by line: it returns the tasks whose
// lines differ only in PNG digests, and the first task whose line differs
// otherwise ("" if none; "(lock header)" for a line without a task ID).
func compareLocks(a, b []byte) (pngOnly []string, first string) {
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
		id := taskID(x)
		if id == "" {
			id = taskID(y)
		}
		if bytes.Equal(pngDigest.ReplaceAll(x, []byte(`$1"png"`)), pngDigest.ReplaceAll(y, []byte(`$1"png"`))) {
			pngOnly = append(pngOnly, id)
			continue
		}
		if id == "" {
			id = "(lock header)"
		}
		return pngOnly, id
	}
	return pngOnly, ""
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

// TestCompareLocks checks the comparison the cross-architecture test relies
// on: identical locks, a PNG-only difference, and a real one named by task.
func TestCompareLocks(t *testing.T) {
	d := func(c byte) string { return "sha256:" + strings.Repeat(string(c), 64) }
	line := func(id, pdf, png string) string {
		return `{"id":"` + id + `","kind":"figures","outputs":{"d2.pdf":"` + pdf + `","d2.png":"` + png + `"}},`
	}
	head := "{\"version\": 2,\n\"tasks\": [\n"
	a := head + line("run/x", d('1'), d('2')) + "\n" + line("figures/d2", d('3'), d('4')) + "\n]}\n"
	if png, first := compareLocks([]byte(a), []byte(a)); png != nil || first != "" {
		t.Errorf("same locks: %v, %q", png, first)
	}
	b := strings.Replace(a, d('4'), d('5'), 1)
	if png, first := compareLocks([]byte(a), []byte(b)); len(png) != 1 || png[0] != "figures/d2" || first != "" {
		t.Errorf("PNG-only difference: %v, %q", png, first)
	}
	c := strings.Replace(b, d('3'), d('6'), 1)
	if _, first := compareLocks([]byte(a), []byte(c)); first != "figures/d2" {
		t.Errorf("PDF difference: first = %q, want figures/d2", first)
	}
	e := strings.Replace(a, d('1'), d('7'), 1)
	if _, first := compareLocks([]byte(a), []byte(e)); first != "run/x" {
		t.Errorf("run difference: first = %q, want run/x", first)
	}
	if _, first := compareLocks([]byte(a), []byte(strings.Replace(a, "2,", "3,", 1))); first != "(lock header)" {
		t.Errorf("header difference: first = %q", first)
	}
}
