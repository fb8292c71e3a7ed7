package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"thv/artifacts"
	"thv/artifacts/damage"
)

// thvFails runs the binary on the tiny protocol, expects it to fail, and
// returns its combined output.
func thvFails(t *testing.T, bin, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, append(args, "--params", tinyParams(t))...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("thv %s succeeded:\n%s", strings.Join(args, " "), out)
	}
	return string(out)
}

// TestVerify: thv verify passes on a fresh store (in process and with
// worker processes), and fails naming the task when an object in the
// store or an output digest in the lock is altered, or when the lock is not
// current.
func TestVerify(t *testing.T) {
	bin := buildThv(t, moduleRoot(t))
	dir := t.TempDir()
	thvRepro(t, bin, dir)
	plan := tinyPlan(t)
	for _, args := range [][]string{{"verify", "--all"}, {"verify", "--all", "--executor", "process"}, {"verify", "--sample", "3"}} {
		code := exitVerified
		if args[1] == "--sample" {
			code = exitSample // a partial check
		}
		out := thvExit(t, bin, dir, code, append(args, "--params", tinyParams(t))...)
		if !strings.Contains(out, "every output identical to the lock") || !strings.Contains(out, "0 problems") {
			t.Fatalf("thv %s on a fresh store:\n%s", strings.Join(args, " "), out)
		}
	}
	// --all re-executes every task of the lock (the plan's and the ones
	// expansion added), each identically.
	out := thv(t, bin, dir, "verify", "--all", "--skip-store")
	total := regexp.MustCompile(`(?m)^\s*all\s+(\d+)\s+(\d+)\s+(\d+)\s+0\s+0\s*$`).FindStringSubmatch(out)
	lockBytes, _ := os.ReadFile(filepath.Join(dir, tinyLock))
	records := strings.Count(string(lockBytes), "\n"+`{"id":`) // one task per line
	if total == nil || total[1] != strconv.Itoa(records) || total[2] != total[1] || total[3] != total[1] || records < len(plan.Tasks) {
		t.Fatalf("verify --all did not re-execute the lock's %d tasks identically:\n%s", records, out)
	}

	// An output digest edited in the lock: the lock and the index
	// disagree; only that task is re-executed, and it sides with the index.
	lockPath := filepath.Join(dir, tinyLock)
	orig, _ := os.ReadFile(lockPath)
	const task = "run/d2/concave/RandomK/eta=0/seed=1"
	edited := editOutputDigest(t, orig, task)
	os.WriteFile(lockPath, edited, 0o644)
	out = thvFails(t, bin, dir, "verify")
	if !strings.Contains(out, "1 tasks: the lock and the store's index disagree") || !strings.Contains(out, "DISPUTE "+task+": the lock records") ||
		!strings.Contains(out, "the lock's record was wrong") {
		t.Fatalf("verify with an edited lock:\n%s", out)
	}
	os.WriteFile(lockPath, orig, 0o644)

	// A flipped byte in one object: the store check names the task.
	d := lockOutput(t, orig, task, "summary")
	st, err := artifacts.Open(filepath.Join(dir, ".thv"), artifacts.Existing)
	if err != nil {
		t.Fatal(err)
	}
	dig, _ := artifacts.ParseDigest(d)
	damage.Flip(t, st, dig)
	out = thvFails(t, bin, dir, "verify", "--sample", "1")
	if !strings.Contains(out, "DAMAGED "+task+": output summary") || !strings.Contains(out, "the store failed its check") {
		t.Fatalf("verify with a flipped byte:\n%s", out)
	}
	// The damage was moved aside: the lock is no longer current until a
	// repro recomputes it, and verify says so.
	out = thvFails(t, bin, dir, "verify", "--sample", "1", "--skip-store")
	if !strings.Contains(out, "is not up to date") || !strings.Contains(out, "run thv repro first") {
		t.Fatalf("verify on a store missing an output:\n%s", out)
	}
	thvRepro(t, bin, dir)
	thvExit(t, bin, dir, exitSample, "verify", "--sample", "1", "--params", tinyParams(t))
}

// thvExit runs bin in dir and expects the exit status code.
func thvExit(t *testing.T, bin, dir string, code int, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if exitCode(err) != code {
		t.Fatalf("thv %s: exit %d, want %d\n%s", strings.Join(args, " "), exitCode(err), code, out)
	}
	return string(out)
}

// lockOutputs returns the output digests of a task's line in lock bytes.
func lockOutputs(t *testing.T, lock []byte, task string) map[string]string {
	t.Helper()
	for _, line := range strings.Split(string(lock), "\n") {
		if strings.Contains(line, `{"id":"`+task+`"`) {
			var rec struct {
				Outputs map[string]string `json:"outputs"`
			}
			if err := json.Unmarshal([]byte(strings.TrimSuffix(line, ",")), &rec); err != nil {
				t.Fatal(err)
			}
			return rec.Outputs
		}
	}
	t.Fatalf("task %s not in the lock", task)
	return nil
}

// lockOutput returns one output digest ("sha256:…") of a task in the lock.
func lockOutput(t *testing.T, lock []byte, task, output string) string {
	t.Helper()
	d, ok := lockOutputs(t, lock, task)[output]
	if !ok {
		t.Fatalf("task %s has no output %s", task, output)
	}
	return d
}

// editOutputDigest changes the last hex digit of one output digest of task.
func editOutputDigest(t *testing.T, lock []byte, task string) []byte {
	t.Helper()
	for _, d := range lockOutputs(t, lock, task) {
		last := d[len(d)-1]
		repl := "0"
		if last == '0' {
			repl = "1"
		}
		return []byte(strings.Replace(string(lock), d, d[:len(d)-1]+repl, 1))
	}
	t.Fatalf("task %s has no outputs", task)
	return nil
}

// flipByte flips one bit in the middle of a (read-only) store file.
func flipByte(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 1
	os.Chmod(path, 0o644)
	if err := os.WriteFile(path, b, 0o444); err != nil {
		t.Fatal(err)
	}
}

// TestByteSize: the sizes --task-memory, --out-limit and --max-unpacked
// take, and how they print.
func TestByteSize(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
	}{{"2GiB", 2 << 30}, {"512MiB", 512 << 20}, {"64KiB", 64 << 10}, {"3G", 3 << 30}, {"100", 100}, {" 1 GiB ", 1 << 30}} {
		var b byteSize
		if err := b.Set(c.in); err != nil || int64(b) != c.want {
			t.Errorf("Set(%q) = %d, %v; want %d", c.in, b, err, c.want)
		}
	}
	for _, bad := range []string{"", "0", "-1GiB", "1.5GiB", "2TB", "GiB", "99999999999G"} {
		var b byteSize
		if err := b.Set(bad); err == nil {
			t.Errorf("Set(%q) = %d, want an error", bad, b)
		}
	}
	if byteSize(4<<30).String() != "4GiB" || byteSize(512<<20).String() != "512MiB" || byteSize(1000).String() != "1000" {
		t.Error("String")
	}
}
