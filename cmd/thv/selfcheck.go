package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"thv/internal/mountinfo"
)

// The worker's self-check (`thv exec-task --self-check`, hidden): what a
// worker sees of its confinement, from inside. The container tests run it
// in every runtime, check each property and hold the runtimes to the same
// probe field by field (cmd/thv/container_test.go); docs/containers.md
// lists what is enforced.

// sandboxProbe is what a worker sees of its confinement.
type sandboxProbe struct {
	UID, GID int
	Groups   []int
	PID      int // 1 in a PID namespace of its own
	Hostname string
	// Status holds the lines of /proc/self/status that describe the
	// confinement: NoNewPrivs, Seccomp (2: a filter), Seccomp_filters and
	// the capability sets CapInh, CapPrm, CapEff, CapBnd, CapAmb (hex).
	Status map[string]string
	// Syscalls maps syscalls a worker never needs, attempted harmlessly,
	// to the errno they failed with ("EPERM"), or "allowed".
	Syscalls map[string]string
	Mounts   []probeMount      // /proc/self/mountinfo, in its order
	Sizes    map[string]uint64 // mount point → size in bytes (statfs), for every tmpfs and /out
	Limits   map[string]string // /proc/self/limits: resource → "soft hard unit"
	// Cgroup holds the memory and pids limits of the worker's cgroup as
	// files that show them, where the container can see them.
	Cgroup map[string]string
	// Writable maps a path to "" if a file could be created in it, else
	// the error; Exec maps each writable path to "" if a file written
	// there could be executed, else the error (noexec: permission denied).
	Writable   map[string]string
	Exec       map[string]string
	Interfaces []string // network interfaces of its namespace (/proc/net/dev)
	Dev        []string // the entries of /dev
}

// probeMount is one line of /proc/self/mountinfo, without what names the
// host (IDs, device numbers, sources).
type probeMount struct {
	Point   string
	Type    string
	Options []string // per-mount options: ro, nosuid, nodev, noexec, ...
	Super   []string // the file system's options: size=, mode=, ...
}

// probePaths are the paths whose writability the probe tries, besides the
// store and the scratch store.
var probePaths = []string{"/", "/tmp", "/dev", "/dev/shm", "/dev/mqueue", "/dev/pts", "/proc", "/sys", "/sys/fs/cgroup", "/etc", "/run"}

func probeSandbox(store, out string) sandboxProbe {
	p := sandboxProbe{UID: os.Getuid(), GID: os.Getgid(), PID: os.Getpid(),
		Status: map[string]string{}, Sizes: map[string]uint64{}, Limits: map[string]string{},
		Cgroup: map[string]string{}, Writable: map[string]string{}, Exec: map[string]string{}}
	p.Groups, _ = os.Getgroups()
	p.Hostname, _ = os.Hostname()
	keep := map[string]bool{"NoNewPrivs": true, "Seccomp": true, "Seccomp_filters": true,
		"CapInh": true, "CapPrm": true, "CapEff": true, "CapBnd": true, "CapAmb": true}
	eachLine("/proc/self/status", func(line string) {
		if k, v, ok := strings.Cut(line, ":"); ok && keep[k] {
			p.Status[k] = strings.TrimSpace(v)
		}
	})
	p.Syscalls = probeSyscalls()
	p.probeMounts(out)
	eachLine("/proc/self/limits", func(line string) {
		// Fixed columns: the resource's name takes the first 26.
		if len(line) > 26 && !strings.HasPrefix(line, "Limit ") {
			p.Limits[strings.TrimSpace(line[:26])] = strings.Join(strings.Fields(line[26:]), " ")
		}
	})
	for _, f := range []string{
		"/sys/fs/cgroup/memory/memory.limit_in_bytes", "/sys/fs/cgroup/memory/memory.memsw.limit_in_bytes", "/sys/fs/cgroup/pids/pids.max", // v1
		"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.swap.max", "/sys/fs/cgroup/pids.max", // v2
	} {
		if b, err := os.ReadFile(f); err == nil {
			p.Cgroup[f] = strings.TrimSpace(string(b))
		}
	}
	for _, dir := range append(probePaths, store, out) {
		if dir == "" {
			continue
		}
		p.Writable[dir] = errString(tryWrite(dir))
		if p.Writable[dir] == "" {
			p.Exec[dir] = errString(tryExec(dir))
		}
	}
	eachLine("/proc/net/dev", func(line string) {
		if name, _, ok := strings.Cut(line, ":"); ok && !strings.Contains(name, "|") {
			p.Interfaces = append(p.Interfaces, strings.TrimSpace(name))
		}
	})
	if ents, err := os.ReadDir("/dev"); err == nil {
		for _, e := range ents {
			p.Dev = append(p.Dev, e.Name())
		}
	}
	return p
}

// probeMounts records the mounts and the sizes of the scratch store out
// and of the tmpfs mounts.
func (p *sandboxProbe) probeMounts(out string) {
	eachLine("/proc/self/mountinfo", func(line string) {
		if m, ok := parseMountinfo(line); ok {
			p.Mounts = append(p.Mounts, m)
		}
	})
	sized := []string{out}
	for _, m := range p.Mounts {
		if m.Type == "tmpfs" {
			sized = append(sized, m.Point)
		}
	}
	for _, dir := range sized {
		if n, err := fsSize(dir); err == nil && dir != "" {
			p.Sizes[dir] = n
		}
	}
}

// parseMountinfo reads one line of /proc/self/mountinfo (proc(5)): ID,
// parent ID, major:minor, root, mount point, options, optional fields
// up to "-", then type, source and super options.
func parseMountinfo(line string) (probeMount, bool) {
	f := strings.Fields(line)
	sep := -1
	for i := 6; i < len(f); i++ {
		if f[i] == "-" {
			sep = i
			break
		}
	}
	if sep < 0 || sep+3 >= len(f) {
		return probeMount{}, false
	}
	m := probeMount{Point: mountinfo.Unescape(f[4]), Type: f[sep+1], Options: strings.Split(f[5], ",")}
	for _, o := range strings.Split(f[sep+3], ",") {
		// rw/ro of the super block repeats what the options say
		// about this mount, or says it of another mount of it.
		if o != "rw" && o != "ro" {
			m.Super = append(m.Super, o)
		}
	}
	sort.Strings(m.Options)
	sort.Strings(m.Super)
	return m, true
}

func eachLine(name string, f func(string)) {
	fh, err := os.Open(name)
	if err != nil {
		return
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		f(sc.Text())
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func tryWrite(dir string) error {
	f, err := os.CreateTemp(dir, ".probe-*")
	if err != nil {
		return err
	}
	f.Close()
	return os.Remove(f.Name())
}

// tryExec writes a script running this binary into dir and executes it:
// on a noexec mount, starting it fails with "permission denied". Any
// start counts as executed, whatever the script's exit status.
func tryExec(dir string) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	name := filepath.Join(dir, ".probe-exec")
	if err := os.WriteFile(name, []byte("#!"+exe+" --help\n"), 0o755); err != nil {
		return err
	}
	defer os.Remove(name)
	cmd := exec.Command(name)
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if err := cmd.Start(); err != nil {
		return err
	}
	cmd.Wait()
	return nil
}

// serveExceeding is a worker that breaks a limit of its container
// (hidden `exec-task --self-check-exceed KIND=N`, for the container
// tests): for every spec it reads, it allocates N bytes touching every
// page (memory=N), starts N threads each blocked in a system call
// (threads=N) or sleeps N seconds (sleep=N: a task over its time), and
// answers with an error if nothing stopped it.
func serveExceeding(ctx context.Context, in io.Reader, out io.Writer, what string) error {
	kind, nstr, _ := strings.Cut(what, "=")
	n, err := strconv.ParseInt(nstr, 10, 64)
	if err != nil || n <= 0 || (kind != "memory" && kind != "threads" && kind != "sleep") {
		return fmt.Errorf("--self-check-exceed %q: want memory=BYTES, threads=N or sleep=SECONDS", what)
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(nil, 64<<20)
	enc := json.NewEncoder(out)
	var hold [][]byte
	for sc.Scan() && ctx.Err() == nil {
		var spec struct{ Task string }
		json.Unmarshal(sc.Bytes(), &spec)
		switch kind {
		case "sleep":
			time.Sleep(time.Duration(n) * time.Second)
		case "memory":
			const chunk = 4 << 20
			for got := int64(0); got < n; got += chunk {
				b := make([]byte, chunk)
				for i := 0; i < len(b); i += 4096 {
					b[i] = 1
				}
				hold = append(hold, b)
			}
		case "threads":
			blockThreads(int(n))
		}
		if err := enc.Encode(map[string]string{"task": spec.Task, "error": fmt.Sprintf("%s: reached %d and was not stopped", kind, n)}); err != nil {
			return err
		}
	}
	return sc.Err()
}
