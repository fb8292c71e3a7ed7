//go:build linux

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"thv/artifacts"
	"thv/internal/testenv"
	"thv/pipeline"
	"thv/pipeline/container"
	"thv/stages/protocol"
)

// requireRuntime skips a test whose container runtime is missing or
// unusable here (not root), except in CI, which installs runc and podman
// and runs as root: there it fails.
func requireRuntime(t *testing.T, name string) {
	t.Helper()
	_, err := exec.LookPath(name)
	if err == nil && os.Geteuid() != 0 {
		err = os.ErrPermission
	}
	if err != nil {
		testenv.Missing(t, "container runtime %s not usable here: %v (it needs root; apt-get install runc podman)", name, err)
	}
}

var imageLine = regexp.MustCompile(`(?m)^"image": "(sha256:[0-9a-f]{64})",\n`)

// TestContainerExecutorSameLock: the quick profile run in containers, by
// runc and by podman, gives the local executor's lock byte for byte, but
// for the provenance line naming the image, which is the image thv image
// builds. The image digest is the same from two builds in two places.
func TestContainerExecutorSameLock(t *testing.T) {
	bin, local := quickLocal(t)
	want, err := os.ReadFile(filepath.Join(local, "thv.quick.lock"))
	if err != nil || len(want) == 0 {
		t.Fatalf("local lock: %v", err)
	}
	digest := imageDigest(t, bin, t.TempDir())
	if again := imageDigest(t, bin, t.TempDir()); again != digest {
		t.Fatalf("two builds of the image: %s, then %s", digest, again)
	}
	for _, rt := range []string{"runc", "podman"} {
		t.Run(rt, func(t *testing.T) {
			requireRuntime(t, rt)
			dir := t.TempDir()
			thvOK(t, bin, dir, "repro", "--profile", "quick", "-j", "2", "--executor", "container", "--runtime", rt)
			got, _ := os.ReadFile(filepath.Join(dir, "thv.quick.lock"))
			m := imageLine.FindSubmatch(got)
			if m == nil || string(m[1]) != digest {
				t.Fatalf("the lock does not record image %s as provenance:\n%.300s", digest, got)
			}
			if !bytes.Equal(imageLine.ReplaceAll(got, nil), want) {
				t.Fatal("--executor container wrote another lock than --executor local (beyond the image line)")
			}
			// And a container verify re-executes tasks identically.
			// With limits of its own: the flags reach the containers.
			if out := thvExit(t, bin, dir, exitSample, "verify", "--profile", "quick", "--sample", "20", "--skip-store", "--executor", "container", "--runtime", rt, "--task-memory", "1GiB", "--out-limit", "512MiB"); !strings.Contains(out, "every output identical") {
				t.Fatalf("verify in %s:\n%s", rt, out)
			}
		})
	}
}

// thvOK runs the binary in dir with args, fails the test on an error, and
// returns its output.
func thvOK(t *testing.T, bin, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("thv %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// imageDigest runs thv image -o in dir and returns the digest it prints,
// after checking the archive is written.
func imageDigest(t *testing.T, bin, dir string) string {
	t.Helper()
	out := thvOK(t, bin, dir, "image", "-o", "img.tar")
	m := regexp.MustCompile(`image (sha256:[0-9a-f]{64})`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("thv image printed:\n%s", out)
	}
	if fi, err := os.Stat(filepath.Join(dir, "img.tar")); err != nil || fi.Size() == 0 {
		t.Fatalf("thv image -o: %v", err)
	}
	return m[1]
}

// testImage builds the image of the test's static thv binary.
func testImage(t *testing.T) *container.Image {
	t.Helper()
	b, err := os.ReadFile(buildThv(t, moduleRoot(t)))
	if err != nil {
		t.Fatal(err)
	}
	img, err := container.BuildImage(b)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// probeIn runs the worker's self-check in a container of runtime rt and
// returns what it printed.
func probeIn(t *testing.T, rt string, img *container.Image, opt container.Options) sandboxProbe {
	t.Helper()
	st, err := artifacts.Open(t.TempDir(), artifacts.Create)
	if err != nil {
		t.Fatal(err)
	}
	opt.Runtime, opt.Image, opt.Store = rt, img, st
	opt.Args = []string{container.BinaryPath, "exec-task", "--self-check", "--store", container.StoreMount, "--out", container.OutMount}
	ex, err := container.New(opt)
	if err != nil {
		t.Fatal(err)
	}
	defer ex.Close()
	cmd, err := ex.Start()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("self-check in %s: %v\n%s%s", rt, err, out, stderr.Bytes())
	}
	var p sandboxProbe
	if err := json.Unmarshal(lastLine(out), &p); err != nil {
		t.Fatalf("self-check printed %q: %v", out, err)
	}
	if d := os.Getenv("THV_PROBE_DUMP"); d != "" {
		b, _ := json.MarshalIndent(p, "", "  ")
		os.WriteFile(filepath.Join(d, rt+".json"), b, 0o644)
	}
	return p
}

// The limits the confinement tests give their containers: not the
// defaults, so that the probe shows the options reach the runtime.
const (
	probeMemory   = 512 << 20
	probePids     = 300
	probeOutLimit = 256 << 20
)

// TestContainerConfinement asks the worker, from inside the container,
// what it may do, in each runtime: it is uid 65534 with no capabilities
// and no way to gain any, under a seccomp filter that refuses the syscalls
// it never needs, with the memory, pids and output limits it was given,
// no network but loopback, and nothing writable but /out, which is a
// bounded tmpfs where nothing can be executed. Then the two runtimes'
// answers must be the same, field by field, but for what the runtimes
// cannot make equal (see sameConfinement).
func TestContainerConfinement(t *testing.T) {
	img := testImage(t)
	probes := map[string]sandboxProbe{}
	for _, rt := range []string{"runc", "podman"} {
		t.Run(rt, func(t *testing.T) {
			requireRuntime(t, rt)
			p := probeIn(t, rt, img, container.Options{Memory: probeMemory, Pids: probePids, OutLimit: probeOutLimit})
			checkConfinement(t, p)
			probes[rt] = p
		})
	}
	if len(probes) == 2 {
		sameConfinement(t, probes["runc"], probes["podman"])
	}
}

// checkConfinement checks one runtime's probe.
func checkConfinement(t *testing.T, p sandboxProbe) {
	t.Helper()
	if p.UID != container.UID || p.GID != container.GID || !slices.Equal(p.Groups, []int{container.GID}) {
		t.Errorf("runs as %d:%d, groups %v; want %d:%d, groups [%d]", p.UID, p.GID, p.Groups, container.UID, container.GID, container.GID)
	}
	if p.PID != 1 || p.Hostname != container.Hostname {
		t.Errorf("PID %d, host name %q: want 1 (a PID namespace of its own) and %q", p.PID, p.Hostname, container.Hostname)
	}
	for k, want := range map[string]string{"NoNewPrivs": "1", "Seccomp": "2", "Seccomp_filters": "1",
		"CapInh": "0000000000000000", "CapPrm": "0000000000000000", "CapEff": "0000000000000000",
		"CapBnd": "0000000000000000", "CapAmb": "0000000000000000"} {
		if p.Status[k] != want {
			t.Errorf("/proc/self/status %s: %q, want %q", k, p.Status[k], want)
		}
	}
	// Every forbidden syscall is refused by the filter (several would
	// succeed, or fail otherwise, without it: selfcheck_linux.go).
	for _, sc := range []string{"unshare", "mount", "keyctl", "personality", "socket", "memfd_create", "bpf", "perf_event_open", "ptrace", "clone(CLONE_NEWUSER)"} {
		if p.Syscalls[sc] != "EPERM" {
			t.Errorf("syscall %s: %q, want EPERM (refused by the seccomp filter)", sc, p.Syscalls[sc])
		}
	}
	mounts := map[string]probeMount{}
	for _, m := range p.Mounts {
		mounts[m.Point] = m // the last mount at a point is the one seen
	}
	for point, want := range map[string][]string{
		"/":                  {"ro"},
		container.StoreMount: {"ro", "nosuid", "nodev", "noexec"},
		container.OutMount:   {"rw", "nosuid", "nodev", "noexec"},
		"/dev":               {"nosuid", "noexec"},
		"/proc":              {"nosuid", "nodev", "noexec"},
		"/sys":               {"ro", "nosuid", "nodev", "noexec"},
		"/dev/mqueue":        {"ro", "nosuid", "nodev", "noexec"},
	} {
		m, ok := mounts[point]
		if !ok {
			t.Errorf("no mount at %s", point)
			continue
		}
		for _, o := range want {
			if !slices.Contains(m.Options, o) {
				t.Errorf("mount %s: options %v, want %s among them", point, m.Options, o)
			}
		}
	}
	for _, point := range []string{"/dev/shm", "/tmp"} {
		if m, ok := mounts[point]; ok {
			t.Errorf("%s is mounted (%+v): a worker gets no scratch space but /out", point, m)
		}
	}
	if m := mounts[container.OutMount]; m.Type != "tmpfs" || p.Sizes[container.OutMount] != probeOutLimit {
		t.Errorf("/out is a %s of %d bytes, want a tmpfs of %d", m.Type, p.Sizes[container.OutMount], probeOutLimit)
	}
	// The cgroup limits, as the worker sees them (v1 files here; v2
	// names them otherwise).
	limits := map[string]string{
		"/sys/fs/cgroup/memory/memory.limit_in_bytes":       fmt.Sprint(probeMemory),
		"/sys/fs/cgroup/memory/memory.memsw.limit_in_bytes": fmt.Sprint(probeMemory), // memory and swap together: no swap
		"/sys/fs/cgroup/pids/pids.max":                      fmt.Sprint(probePids),
	}
	if _, v2 := p.Cgroup["/sys/fs/cgroup/memory.max"]; v2 {
		limits = map[string]string{"/sys/fs/cgroup/memory.max": fmt.Sprint(probeMemory), "/sys/fs/cgroup/memory.swap.max": "0", "/sys/fs/cgroup/pids.max": fmt.Sprint(probePids)}
	}
	for f, want := range limits {
		if p.Cgroup[f] != want {
			t.Errorf("%s: %q, want %s", f, p.Cgroup[f], want)
		}
	}
	if p.Limits["Max open files"] != "1024 1024 files" {
		t.Errorf("open files limit %q, want 1024 1024", p.Limits["Max open files"])
	}
	for dir, msg := range p.Writable {
		if wantWritable := dir == container.OutMount; (msg == "") != wantWritable {
			t.Errorf("%s writable = %v (%q), want %v", dir, msg == "", msg, wantWritable)
		}
	}
	if len(p.Writable) < len(probePaths)+2 {
		t.Errorf("the probe tried %d paths, want %d", len(p.Writable), len(probePaths)+2)
	}
	for dir, msg := range p.Exec {
		if !strings.Contains(msg, "permission denied") {
			t.Errorf("executing a file written to %s: %q, want permission denied (noexec)", dir, msg)
		}
	}
	if _, ok := p.Exec[container.OutMount]; !ok {
		t.Error("the probe did not try to execute a file in /out")
	}
	if strings.Join(p.Interfaces, ",") != "lo" {
		t.Errorf("network interfaces %v, want only lo", p.Interfaces)
	}
	if slices.Contains(p.Dev, "shm") {
		t.Errorf("/dev holds %v: want no shm", p.Dev)
	}
}

// sameConfinement holds two runtimes' probes to each other, field by
// field, after removing what legitimately differs.
func sameConfinement(t *testing.T, a, b sandboxProbe) {
	t.Helper()
	norm := func(p sandboxProbe) sandboxProbe {
		var ms []probeMount
		for _, m := range p.Mounts {
			switch m.Point {
			case "/":
				// The root file system is read-only in both, but runc's
				// is a directory the executor unpacked (a bind mount of
				// the host's file system) and podman's an overlay of its
				// image store, whose options name host paths.
				m.Type, m.Super = "", nil
			case "/etc/hostname", "/run/.containerenv":
				// podman bind-mounts these two files read-only into every
				// container (the host name; its own description of the
				// container), and no flag of podman 4 turns them off.
				continue
			}
			ms = append(ms, m)
		}
		// The order of mounting is the runtime's own.
		slices.SortStableFunc(ms, func(x, y probeMount) int { return strings.Compare(x.Point, y.Point) })
		p.Mounts = ms
		// Whether each path is writable must agree; the error texts
		// differ where podman made /etc and /run for the files above.
		w := map[string]string{}
		for k, v := range p.Writable {
			w[k] = fmt.Sprint(v == "")
		}
		p.Writable = w
		return p
	}
	na, nb := norm(a), norm(b)
	va, vb := reflect.ValueOf(na), reflect.ValueOf(nb)
	for i := range va.NumField() {
		if !reflect.DeepEqual(va.Field(i).Interface(), vb.Field(i).Interface()) {
			t.Errorf("%s differs between runc and podman:\nrunc:   %+v\npodman: %+v", va.Type().Field(i).Name, va.Field(i).Interface(), vb.Field(i).Interface())
		}
	}
}

// TestContainerLimits: a worker that breaks its container's memory
// ceiling or process limit, or fills /out, fails its task with an error
// that names the task and the limit, in each runtime; and the executor
// leaves no cgroup or mount behind.
func TestContainerLimits(t *testing.T) {
	img := testImage(t)
	for _, rt := range []string{"runc", "podman"} {
		t.Run(rt, func(t *testing.T) {
			requireRuntime(t, rt)
			before := thvCgroups(t)
			cwd := dirNames(t, ".")
			exceed := func(t *testing.T, opt container.Options, what, task, want string) {
				t.Helper()
				st, err := artifacts.Open(t.TempDir(), artifacts.Create)
				if err != nil {
					t.Fatal(err)
				}
				// A scratch directory of the test's own, to see it unmounted.
				outDir := t.TempDir()
				opt.Runtime, opt.Image, opt.Store, opt.OutDir = rt, img, st, outDir
				opt.Args = []string{container.BinaryPath, "exec-task", "--self-check-exceed", what}
				ex, err := container.New(opt)
				if err != nil {
					t.Fatal(err)
				}
				if !isMountPoint(t, outDir) {
					t.Errorf("%s is not a mount point while the executor runs", outDir)
				}
				_, err = ex.Execute(context.Background(), &pipeline.Spec{Task: task})
				if cerr := ex.Close(); cerr != nil {
					t.Errorf("Close: %v", cerr)
				}
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Fatalf("a worker breaking %s: %v\nwant an error with %q", what, err, want)
				}
				t.Logf("%.300s", err)
				if isMountPoint(t, outDir) {
					t.Errorf("%s is still mounted after Close", outDir)
				}
			}
			t.Run("memory", func(t *testing.T) {
				exceed(t, container.Options{Memory: 64 << 20}, fmt.Sprintf("memory=%d", 512<<20), "hog/memory",
					rt+" container: task hog/memory exceeded the memory ceiling of 64 MiB")
			})
			t.Run("threads", func(t *testing.T) {
				exceed(t, container.Options{Pids: 64}, "threads=500", "hog/threads",
					rt+" container: task hog/threads reached the limit of 64 processes and threads")
			})
			t.Run("time", func(t *testing.T) {
				// A task stopped by its caller (cancelled, or over its
				// time): its container goes at once, not at Close.
				st, err := artifacts.Open(t.TempDir(), artifacts.Create)
				if err != nil {
					t.Fatal(err)
				}
				ex, err := container.New(container.Options{Runtime: rt, Image: img, Store: st,
					Args: []string{container.BinaryPath, "exec-task", "--self-check-exceed", "sleep=600"}})
				if err != nil {
					t.Fatal(err)
				}
				defer ex.Close()
				ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
				defer cancel()
				start := time.Now()
				_, err = ex.Execute(ctx, &pipeline.Spec{Task: "hog/time"})
				returned := time.Since(start)
				if !errors.Is(err, context.DeadlineExceeded) || returned > 30*time.Second {
					t.Fatalf("a task over its time: %v after %v, want the deadline's error at once", err, returned)
				}
				for deadline := time.Now().Add(20 * time.Second); len(busyCgroups(t)) > 0; time.Sleep(100 * time.Millisecond) {
					if time.Now().After(deadline) {
						t.Fatalf("the stopped task's container still runs: %v", busyCgroups(t))
					}
				}
				t.Logf("Execute returned after %v, the container was gone after %v: %v", returned.Round(time.Millisecond), time.Since(start).Round(time.Millisecond), err)
			})
			t.Run("out", func(t *testing.T) {
				// Real tasks, whose outputs do not fit in 64 KiB.
				dir := t.TempDir()
				proj, err := protocol.Open(protocol.Options{LoadOptions: protocol.LoadOptions{ParamsFile: tinyParams(t)}, Dir: dir, StoreDir: filepath.Join(dir, ".thv")})
				if err != nil {
					t.Fatal(err)
				}
				ex, err := container.New(container.Options{Runtime: rt, Image: img, Store: proj.Store, OutLimit: 64 << 10})
				if err != nil {
					t.Fatal(err)
				}
				rep, err := proj.Repro(context.Background(), pipeline.Options{Jobs: 2, Executor: ex, Image: img.Digest.String()})
				if cerr := ex.Close(); cerr != nil {
					t.Errorf("Close: %v", cerr)
				}
				if err != nil || rep.Failed == 0 {
					t.Fatalf("repro with a 64 KiB /out: err %v, %d failed", err, rep.Failed)
				}
				re := regexp.MustCompile(regexp.QuoteMeta(rt+" container: task ") + `(\S+)` + regexp.QuoteMeta(" filled the scratch store /out, which the output limit bounds to 64 KiB"))
				var named bool
				for _, r := range rep.Results {
					if r.Err != nil {
						if m := re.FindStringSubmatch(r.Err.Error()); m != nil && m[1] == r.Task.ID {
							named = true
						}
					}
				}
				if !named {
					t.Fatalf("no failure names its task and the output limit: %v", firstErr(rep))
				}
				t.Logf("%d of %d tasks failed, e.g. %.300s", rep.Failed, len(rep.Results), firstErr(rep))
				// What was imported is whole: the store checks clean.
				sr, err := proj.Store.Check(context.Background(), 2, nil)
				if err != nil || len(sr.Problems) != 0 {
					t.Fatalf("store after the failed repro: %v, %v", err, sr.Problems)
				}
			})
			if after := thvCgroups(t); len(after) > len(before) {
				t.Errorf("cgroups left behind: %v (before: %v)", after, before)
			}
			// (conmon leaves a file named oom in its working directory.)
			if after := dirNames(t, "."); !slices.Equal(after, cwd) {
				t.Errorf("the working directory changed: %v, then %v", cwd, after)
			}
		})
	}
}

// thvCgroups lists the executor's parent cgroups in the memory hierarchy.
func thvCgroups(t *testing.T) []string {
	t.Helper()
	var dirs []string
	for _, d := range []string{"/sys/fs/cgroup/memory", "/sys/fs/cgroup"} {
		m, _ := filepath.Glob(filepath.Join(d, "thv-*"))
		dirs = append(dirs, m...)
	}
	return dirs
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

// busyCgroups lists the executor's parent cgroups that hold processes.
func busyCgroups(t *testing.T) []string {
	t.Helper()
	var busy []string
	for _, d := range []string{"/sys/fs/cgroup/pids", "/sys/fs/cgroup"} {
		m, _ := filepath.Glob(filepath.Join(d, "thv-*", "pids.current"))
		for _, f := range m {
			if b, err := os.ReadFile(f); err == nil && strings.TrimSpace(string(b)) != "0" {
				busy = append(busy, f+": "+strings.TrimSpace(string(b)))
			}
		}
	}
	return busy
}

// isMountPoint says whether dir is on another file system than its parent.
func isMountPoint(t *testing.T, dir string) bool {
	t.Helper()
	var a, b syscall.Stat_t
	if err := syscall.Stat(dir, &a); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Stat(filepath.Dir(dir), &b); err != nil {
		t.Fatal(err)
	}
	return a.Dev != b.Dev
}

func firstErr(rep *pipeline.Report) error {
	for _, r := range rep.Results {
		if r.Err != nil {
			return r.Err
		}
	}
	return nil
}

func lastLine(b []byte) []byte {
	lines := bytes.Split(bytes.TrimSpace(b), []byte("\n"))
	return lines[len(lines)-1]
}

// TestContainerFailures: a worker that writes outside its output (here,
// into the read-only project store) fails every task with a clear error
// and leaves nothing in the store; a missing runtime is a clear error
// before anything runs.
func TestContainerFailures(t *testing.T) {
	img := testImage(t)
	for _, rt := range []string{"runc", "podman"} {
		t.Run(rt, func(t *testing.T) {
			requireRuntime(t, rt)
			dir := t.TempDir()
			proj, err := protocol.Open(protocol.Options{LoadOptions: protocol.LoadOptions{ParamsFile: tinyParams(t)}, Dir: dir, StoreDir: filepath.Join(dir, ".thv")})
			if err != nil {
				t.Fatal(err)
			}
			ex, err := container.New(container.Options{Runtime: rt, Image: img, Store: proj.Store,
				Args: []string{container.BinaryPath, "exec-task", "--store", container.StoreMount}}) // no --out
			if err != nil {
				t.Fatal(err)
			}
			defer ex.Close()
			rep, err := proj.Repro(context.Background(), pipeline.Options{Jobs: 2, Executor: ex, Image: img.Digest.String()})
			if err != nil || rep.Failed == 0 || rep.Executed != 0 {
				t.Fatalf("repro with workers writing to the store: err %v, %+v", err, rep)
			}
			var msg string
			for _, r := range rep.Results {
				if r.Err != nil {
					msg = r.Err.Error()
					break
				}
			}
			if !strings.Contains(msg, "read-only file system") || !strings.Contains(msg, rt+" container") {
				t.Fatalf("failure message: %s", msg)
			}
			objs, err := proj.Store.Objects()
			if err != nil || len(objs) != 0 {
				t.Fatalf("%d objects in the store after failed containers (%v)", len(objs), err)
			}
			if tmp, _ := os.ReadDir(filepath.Join(proj.Store.Root(), "tmp")); len(tmp) != 0 {
				t.Fatalf("%d files left in the store's tmp/", len(tmp))
			}
		})
	}
	t.Run("limit flags", func(t *testing.T) {
		bin := buildThv(t, moduleRoot(t))
		for _, c := range []struct {
			args []string
			want string
		}{
			{[]string{"--task-memory", "1GiB"}, "--task-memory 1GiB: only with --executor process or container"},
			{[]string{"--executor", "process", "--task-memory", "512MiB"}, "--task-memory 512MiB: give at least 1GiB"},
			{[]string{"--executor", "process", "--out-limit", "1GiB"}, "--out-limit 1GiB: only with --executor container"},
			{[]string{"--executor", "container", "--task-memory", "2TB"}, `invalid argument "2TB" for "--task-memory" flag: want a positive whole number`},
			{[]string{"--executor", "container", "--out-limit", "0"}, `invalid argument "0" for "--out-limit" flag`},
		} {
			dir := t.TempDir()
			cmd := exec.Command(bin, append([]string{"repro", "--params", tinyParams(t)}, c.args...)...)
			cmd.Dir = dir
			out, err := cmd.CombinedOutput()
			if err == nil || !strings.Contains(string(out), c.want) {
				t.Errorf("repro %v: %v\n%s\nwant %q", c.args, err, out, c.want)
			}
			if _, err := os.Stat(filepath.Join(dir, tinyLock)); err == nil {
				t.Errorf("repro %v wrote a lock", c.args)
			}
		}
	})
	t.Run("missing runtime", func(t *testing.T) {
		bin := buildThv(t, moduleRoot(t))
		dir := t.TempDir()
		cmd := exec.Command(bin, "repro", "--params", tinyParams(t), "--executor", "container", "--runtime", "runc")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "PATH="+t.TempDir())
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), "container runtime runc not found on PATH") {
			t.Fatalf("repro without runc: %v\n%s", err, out)
		}
		if _, err := os.Stat(filepath.Join(dir, tinyLock)); err == nil {
			t.Fatal("a lock was written although nothing could run")
		}
	})
}
