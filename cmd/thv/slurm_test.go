//go:build linux

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"thv/internal/testenv"
	"thv/pipeline/slurm/slurmtest"
)

// TestSlurm runs thv repro --executor slurm against a real single-node
// Slurm (pipeline/slurm/slurmtest), brought up for this test and down at
// its end. Where Slurm is missing it skips, except in CI (CI set), which
// installs Slurm and runs as root: there it fails.
func TestSlurm(t *testing.T) {
	if why := slurmtest.Missing(); why != "" {
		testenv.Missing(t, "%s (CI installs Slurm and runs as root)", why)
	}
	// Its own base and ports: the pipeline/slurm tests may have their
	// cluster up at the same time.
	c, err := slurmtest.Up(filepath.Join(os.TempDir(), fmt.Sprintf("thv-slurm-cli-%d", os.Getpid())), 16827)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Down(); err != nil {
			t.Error(err)
		}
	})
	bin := buildThv(t, moduleRoot(t))
	t.Run("QuickSameLock", func(t *testing.T) { slurmQuickSameLock(t, c, bin) })
	t.Run("FailedTask", func(t *testing.T) { slurmFailedTask(t, c, bin) })
	t.Run("SlurmdKilled", func(t *testing.T) { slurmdKilled(t, c, bin) })
	t.Run("Interrupt", func(t *testing.T) { slurmInterrupt(t, c, bin) })
}

// slurmQuickSameLock: the quick profile (2,601 tasks) on the cluster gives
// the local executor's lock byte for byte.
func slurmQuickSameLock(t *testing.T, c *slurmtest.Cluster, bin string) {
	local, remote := t.TempDir(), t.TempDir()
	thvOK(t, bin, local, "repro", "--profile", "quick", "-j", "2")
	out, err := slurmThv(c, remote, bin, "repro", "--profile", "quick", "--executor", "slurm", "--slurm-time", "10")
	if err != nil {
		t.Fatalf("thv repro --executor slurm: %v\n%s", err, out)
	}
	want, _ := os.ReadFile(filepath.Join(local, "thv.quick.lock"))
	got, _ := os.ReadFile(filepath.Join(remote, "thv.quick.lock"))
	if len(want) == 0 || !bytes.Equal(got, want) {
		t.Fatalf("--executor slurm wrote another lock than --executor local\n%s", out)
	}
	if ents, _ := os.ReadDir(filepath.Join(remote, ".thv", "slurm")); len(ents) != 0 {
		t.Fatalf("a clean run left %d run directories in the store", len(ents))
	}
}

// failTask is the tiny protocol's task the wrapper below fails: it has
// dependents (a benchmark, runs, and all of d3's statistics).
const failTask = "instance/d3/linear/seed=1"

// slurmFailedTask: the nodes run a wrapper that fails the element holding
// one task. That task is reported by ID with the element's stderr, its
// dependents are blocked, the rest completes; once the wrapper is fixed a
// rerun executes only what was left, and the lock is a clean run's.
func slurmFailedTask(t *testing.T, c *slurmtest.Cluster, bin string) {
	clean, dir := t.TempDir(), t.TempDir()
	thvRepro(t, bin, clean)
	wrapper := filepath.Join(t.TempDir(), "thv-wrapper")
	writeWrapper(t, wrapper, fmt.Sprintf(`grep -q '"task":"%s"' "$4" && { echo "injected failure on this node" >&2; exit 1; }`, failTask), bin)
	args := []string{"repro", "--params", tinyParams(t), "--json", "--executor", "slurm", "--slurm-thv", wrapper, "--slurm-tasks-per-element", "1", "--slurm-time", "5"}
	out, err := slurmThv(c, dir, bin, args...)
	if err == nil {
		t.Fatalf("a repro with a failing task succeeded:\n%s", out)
	}
	first := lastJSON(t, out)
	if first.Failed != 1 || first.Blocked == 0 || first.Executed == 0 {
		t.Fatalf("want 1 failed, some blocked, the rest executed; got %+v\n%s", first, out)
	}
	if !strings.Contains(out, "FAILED "+failTask+": slurm element") || !strings.Contains(out, "injected failure on this node") {
		t.Fatalf("the failure does not name the task and the element's stderr:\n%s", out)
	}
	writeWrapper(t, wrapper, "", bin)
	out, err = slurmThv(c, dir, bin, args...)
	if err != nil {
		t.Fatalf("rerun after the fix: %v\n%s", err, out)
	}
	second := lastJSON(t, out)
	// The final runs that keep a trajectory (for the figures) join the
	// plan once η* is selected: the rerun executes them too, beyond the
	// failed and blocked tasks, and nothing the first pass executed.
	if second.Cached != first.Executed || second.Executed != second.Tasks-first.Executed || second.Executed < first.Failed+first.Blocked {
		t.Fatalf("the rerun executed %d of %d tasks and found %d cached; want every task but the first pass's %d executed (its %d failed and blocked among them)\n%s",
			second.Executed, second.Tasks, second.Cached, first.Executed, first.Failed+first.Blocked, out)
	}
	requireSameLock(t, clean, dir, "after a failed task and a rerun on Slurm")
}

// slurmdKilled: slurmd is killed while elements run and restarted a few
// seconds later. The run completes, every output in the store verifies
// (nothing partial), and the lock is a clean run's.
func slurmdKilled(t *testing.T, c *slurmtest.Cluster, bin string) {
	clean, dir := t.TempDir(), t.TempDir()
	thvRepro(t, bin, clean)
	// Elements that last a second or more, so that some are running when
	// slurmd goes.
	wrapper := filepath.Join(t.TempDir(), "thv-wrapper")
	writeWrapper(t, wrapper, "sleep 1", bin)
	cmd, out := startSlurmRepro(c, dir, bin, "--slurm-thv", wrapper, "--slurm-tasks-per-element", "4", "--slurm-max-elements", "4", "--slurm-time", "5")
	name := runJobName(t, dir)
	waitJobs(t, c, name, "RUNNING", 1)
	pid, err := c.SlurmdPID()
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	time.Sleep(4 * time.Second)
	if o, err := c.Script("slurmd-start"); err != nil {
		t.Fatalf("restarting slurmd: %v\n%s", err, o)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("the run failed after slurmd was restarted: %v\n%s", err, out)
		}
	case <-time.After(4 * time.Minute):
		cmd.Process.Signal(os.Interrupt)
		<-done
		t.Fatalf("the run did not end within 4 minutes of slurmd's restart\n%s", out)
	}
	if o := thv(t, bin, dir, "status", "--verify"); !strings.Contains(o, "every output of the up-to-date tasks verified") {
		t.Fatalf("status --verify after the run:\n%s", o)
	}
	requireSameLock(t, clean, dir, "after slurmd was killed mid-run")
}

// slurmInterrupt: SIGINT to thv repro cancels exactly the jobs it
// submitted; a job submitted before by someone else keeps running.
func slurmInterrupt(t *testing.T, c *slurmtest.Cluster, bin string) {
	other, err := c.Command("sbatch", "--parsable", "--time=5", "--job-name=not-thv", "--output=/dev/null", "--wrap=sleep 300")
	if err != nil {
		t.Fatal(err)
	}
	other = strings.TrimSpace(other)
	defer c.Command("scancel", other)
	dir := t.TempDir()
	wrapper := filepath.Join(t.TempDir(), "thv-wrapper")
	writeWrapper(t, wrapper, "sleep 120", bin)
	cmd, out := startSlurmRepro(c, dir, bin, "--slurm-thv", wrapper, "--slurm-tasks-per-element", "2", "--slurm-max-elements", "3", "--slurm-time", "5")
	name := runJobName(t, dir)
	waitJobs(t, c, name, "RUNNING", 3)
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err == nil {
		t.Fatalf("an interrupted repro exited 0:\n%s", out)
	}
	ours := waitJobs(t, c, name, "CANCELLED", 3)
	// scancel returns before slurmd has killed an element's processes: an
	// element may show CANCELLED beside one still COMPLETING, so wait for
	// the last to end rather than look once.
	if left := waitNoJobs(t, c, name, "RUNNING", "PENDING", "COMPLETING"); len(left) != 0 {
		t.Fatalf("a minute after the interrupt, thv's elements %v are still live", left)
	}
	st, err := c.Command("squeue", "-h", "-t", "all", "-j", other, "-O", "State")
	if s := strings.TrimSpace(st); err != nil || s != "RUNNING" && s != "PENDING" {
		t.Fatalf("the unrelated job %s is %q (%v) after thv's interrupt cancelled %v", other, s, err, ours)
	}
}

// slurmThv runs thv with the cluster's environment.
func slurmThv(c *slurmtest.Cluster, dir, bin string, args ...string) (string, error) {
	cmd := exec.Command(bin, args...)
	cmd.Dir, cmd.Env = dir, c.Env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// startSlurmRepro starts a tiny repro on the cluster.
func startSlurmRepro(c *slurmtest.Cluster, dir, bin string, extra ...string) (*exec.Cmd, *bytes.Buffer) {
	cmd := exec.Command(bin, append([]string{"repro", "--params", tinyParamsPath(), "--executor", "slurm"}, extra...)...)
	cmd.Dir, cmd.Env = dir, c.Env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		panic(err)
	}
	return cmd, &out
}

func tinyParamsPath() string {
	p, _ := filepath.Abs("../../protocol/testdata/tiny.yaml")
	return p
}

// writeWrapper writes a thv for the nodes: a shell script that runs pre,
// then the real thv.
func writeWrapper(t *testing.T, path, pre, bin string) {
	t.Helper()
	script := fmt.Sprintf("#!/bin/sh\n%s\nexec %s \"$@\"\n", pre, bin)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// slurmReproOut is repro --json's last line.
type slurmReproOut struct {
	Tasks, Executed, Cached, Failed, Blocked int
}

func lastJSON(t *testing.T, out string) slurmReproOut {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		var r slurmReproOut
		if json.Unmarshal([]byte(lines[i]), &r) == nil && strings.HasPrefix(lines[i], "{") {
			return r
		}
	}
	t.Fatalf("no JSON line in:\n%s", out)
	return slurmReproOut{}
}

// runJobName waits for the run directory a slurm repro in dir makes in
// its store and returns the job name of its arrays.
func runJobName(t *testing.T, dir string) string {
	t.Helper()
	for range 600 {
		if ents, _ := os.ReadDir(filepath.Join(dir, ".thv", "slurm")); len(ents) == 1 {
			return "thv-" + ents[0].Name()
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatal("no slurm run directory in the store within a minute")
	return ""
}

// jobsIn lists the elements of the jobs named name in the given states.
func jobsIn(t *testing.T, c *slurmtest.Cluster, name string, states ...string) []string {
	t.Helper()
	out, err := c.Command("squeue", "-h", "-r", "-t", "all", "--name="+name, "-O", "JobArrayID:|,State")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		id, st, _ := strings.Cut(line, "|")
		for _, s := range states {
			if strings.TrimSpace(st) == s {
				ids = append(ids, strings.TrimSpace(id))
			}
		}
	}
	return ids
}

// waitJobs waits up to two minutes for n elements of the jobs named name
// in state.
func waitJobs(t *testing.T, c *slurmtest.Cluster, name, state string, n int) []string {
	t.Helper()
	for range 600 {
		if ids := jobsIn(t, c, name, state); len(ids) >= n {
			return ids
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("no %d elements of %s %s within two minutes", n, name, state)
	return nil
}

// waitNoJobs waits up to a minute until no element of the jobs named name
// is in any of states, and returns those still in one then.
func waitNoJobs(t *testing.T, c *slurmtest.Cluster, name string, states ...string) []string {
	t.Helper()
	var left []string
	for range 300 {
		if left = jobsIn(t, c, name, states...); len(left) == 0 {
			return nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return left
}

// TestSlurmParamsOutsideKeys: the executors.slurm section of params.yaml is
// checked strictly, whatever the executor, but enters no plan or key: a
// finished project stays up to date when it is added, whatever it says. A
// section under another name, or at the top level where it was before, is
// refused. --slurm-* flags need --executor slurm. No cluster is needed.
func TestSlurmParamsOutsideKeys(t *testing.T) {
	bin := buildThv(t, moduleRoot(t))
	dir := t.TempDir()
	thvRepro(t, bin, dir)
	before, _ := os.ReadFile(filepath.Join(dir, tinyLock))
	tiny, err := os.ReadFile(tinyParams(t))
	if err != nil {
		t.Fatal(err)
	}
	// Same file name, so the same lock file (thv-tiny.lock).
	withSlurm := filepath.Join(t.TempDir(), "tiny.yaml")
	section := "\nexecutors:\n  slurm:\n    partition: gpu\n    account: lab\n    time: \"2:00:00\"\n    mem: 4G\n    cpus_per_task: 2\n    sbatch_args: [--qos=short]\n    tasks_per_element: 8\n    max_elements: 50\n    thv: /shared/bin/thv\n"
	if err := os.WriteFile(withSlurm, append(tiny, section...), 0o644); err != nil {
		t.Fatal(err)
	}
	out := thvOK(t, bin, dir, "repro", "--params", withSlurm, "--json")
	if r := lastJSON(t, out); r.Executed != 0 {
		t.Fatalf("adding a slurm section made %d tasks stale:\n%s", r.Executed, out)
	}
	if after, _ := os.ReadFile(filepath.Join(dir, tinyLock)); !bytes.Equal(after, before) {
		t.Fatal("adding a slurm section changed the lock")
	}
	for _, c := range []struct{ section, want string }{
		{"\nexecutors:\n  slurm:\n    partion: gpu\n", "executors.slurm.partion: unknown key"},
		{"\nexecutors:\n  slurm:\n    time: 1h\n", `executors.slurm.time = "1h"`},
		{"\nexecutors:\n  slurm:\n    sbatch_args: [--array=0-9]\n", "thv sets --array itself"},
		{"\nexecutors:\n  slurm:\n    max_elements: many\n", "executors.slurm.max_elements"},
		{"\nexecutors:\n  slrum:\n    partition: gpu\n", "executors.slrum: no executor of that name takes settings (known: slurm)"},
		{"\nslurm:\n  partition: gpu\n", "slurm: the Slurm executor's settings moved to executors.slurm"},
	} {
		if err := os.WriteFile(withSlurm, append(tiny, c.section...), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := slurmThvPlain(dir, bin, "repro", "--params", withSlurm, "--dry-run")
		if err == nil || !strings.Contains(out, c.want) {
			t.Errorf("params with%s: %v\n%s\nwant an error containing %q", c.section, err, out, c.want)
		}
	}
	if out, err := slurmThvPlain(dir, bin, "repro", "--params", tinyParams(t), "--slurm-partition", "gpu"); err == nil || !strings.Contains(out, "--slurm-partition gpu: only with --executor slurm") {
		t.Errorf("--slurm-partition without --executor slurm: %v\n%s", err, out)
	}
}

func slurmThvPlain(dir, bin string, args ...string) (string, error) {
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	return string(out), err
}
