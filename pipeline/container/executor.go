package container

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"thv/artifacts"
	"thv/pipeline"
	"thv/pipeline/tempdir"
)

// WorkerArgs is the command line of the worker inside a container: the
// image's binary on the read-only project store, writing to the bounded
// scratch store (its memory ceiling is the container's, not the
// worker's).
func WorkerArgs() []string {
	return pipeline.WorkerArgs{Store: StoreMount, Out: OutMount}.Command(BinaryPath)
}

// containerRuntime starts containers of one image.
type containerRuntime interface {
	Name() string
	Prepare(img *Image) error
	// Command returns the command that runs container c, which serves
	// the worker on its standard input and output until it closes.
	Command(c *workerContainer) (*exec.Cmd, error)
	// Remove force-removes the containers named that are left (killing
	// what runs in them).
	Remove(names ...string)
	// Close removes what Prepare made.
	Close() error
}

// workerContainer is one container: its name for the runtime and the
// parent cgroup the runtime makes its cgroup under (cgroup_linux.go).
type workerContainer struct {
	name   string // thv-<random>-<n>
	cgroup string // /thv-<random>-<n>, in every hierarchy; "" with docker
}

// Runtimes lists the runtimes --runtime accepts, in the order the default
// picks the first one found.
var Runtimes = []string{"runc", "podman", "docker"}

// FindRuntime returns the name and path of the runtime to use: want if
// given, else the first of Runtimes on PATH.
func FindRuntime(want string) (name, path string, err error) {
	if want != "" {
		known := false
		for _, r := range Runtimes {
			known = known || r == want
		}
		if !known {
			return "", "", fmt.Errorf("--runtime %q: want one of %v", want, Runtimes)
		}
		p, err := exec.LookPath(want)
		if err != nil {
			return "", "", fmt.Errorf("container runtime %s not found on PATH: install it (Debian: apt-get install %s) or choose another with --runtime", want, want)
		}
		return want, p, nil
	}
	for _, r := range Runtimes {
		if p, err := exec.LookPath(r); err == nil {
			return r, p, nil
		}
	}
	return "", "", fmt.Errorf("no container runtime found on PATH (looked for %v): install runc or podman (Debian: apt-get install runc podman), or use --executor local", Runtimes)
}

// The default limits of every container (Options).
const (
	// DefaultMemory is the memory ceiling of a container: its worker's
	// memory and the outputs it wrote to /out (a tmpfs charges them to
	// the writer). Measured with -j 2, a container peaks at 60 MB on
	// the quick profile, 219 MB on the paper profile and 639 MB on the
	// scale profile (70,826 tasks), outputs included.
	DefaultMemory = 2 << 30
	// DefaultPids bounds the processes and threads of a container: a
	// worker is one Go process, with about GOMAXPROCS threads and one per
	// blocking system call (8 or 9 on 2 cores, measured).
	DefaultPids = 1024
	// DefaultOutLimit is the size of the scratch store /out, shared by
	// all of an executor's containers: the outputs are 193 MB on the
	// paper profile, 599 MB on the scale profile.
	DefaultOutLimit = 4 << 30
)

// Options configure an Executor.
type Options struct {
	Runtime string           // runc, podman or docker; "" picks the first found
	Image   *Image           // the image to run
	Store   *artifacts.Store // the project store, mounted read-only
	// Args replace the worker's command line in the image (diagnostics
	// and tests: thv exec-task --self-check); nil: WorkerArgs().
	Args []string
	// OutDir is the directory of the scratch store the workers write to:
	// an empty one, over which New mounts the bounded /out (making the
	// store's layout inside) and which Close unmounts, so its contents are
	// gone after Close. "": a temporary one, imported from into Store
	// after every task (a repro). Given: read by the caller before Close
	// (a verify compares it), through a store opened after New returns,
	// since only then is /out mounted there.
	OutDir string
	// Memory is each container's memory ceiling in bytes, without swap;
	// its outputs in /out count toward it. 0: DefaultMemory.
	Memory int64
	// Pids bounds each container's processes and threads. 0: DefaultPids.
	Pids int64
	// OutLimit is the size of /out in bytes. 0: DefaultOutLimit.
	OutLimit int64
}

// limits are the resolved limits of every container.
type limits struct {
	memory, pids, out int64
}

// Executor runs task specs in containers: each worker is one container
// serving `thv exec-task` for as many tasks as it is given, so a
// container's start-up is paid once per job slot, not per task.
type Executor struct {
	rt      containerRuntime
	store   *artifacts.Store
	out     *artifacts.Store
	lim     limits
	cg      cgroupMounts
	tempOut *tempdir.Dir // the scratch directory this executor made, if any
	mounted string       // the directory /out's tmpfs is mounted on
	prefix  string       // of container names: thv-<random>-
	Image   *Image

	mu         sync.Mutex
	n          int
	containers []*workerContainer
	idle       []*slot
	slots      []*slot
}

// slot is one job slot: a process pool of one worker at a time, and the
// container that worker runs in, so that a failure is explained by its
// own container's counters.
type slot struct {
	proc *pipeline.Process
	cur  *workerContainer
	cmd  *exec.Cmd // cur's runtime command
}

// New prepares the runtime (unpacks or loads the image) and the bounded
// scratch store; nothing runs until Execute.
func New(opt Options) (*Executor, error) {
	name, bin, err := FindRuntime(opt.Runtime)
	if err != nil {
		return nil, err
	}
	lim := limits{memory: opt.Memory, pids: opt.Pids, out: opt.OutLimit}
	for _, l := range []struct {
		v   *int64
		def int64
		min int64
		opt string
	}{{&lim.memory, DefaultMemory, 16 << 20, "Memory"}, {&lim.pids, DefaultPids, 16, "Pids"}, {&lim.out, DefaultOutLimit, 64 << 10, "OutLimit"}} {
		if *l.v == 0 {
			*l.v = l.def
		}
		if *l.v < l.min {
			return nil, fmt.Errorf("container executor: %s %d is below the least that a worker can run with, %d", l.opt, *l.v, l.min)
		}
	}
	var rnd [4]byte
	rand.Read(rnd[:])
	e := &Executor{store: opt.Store, Image: opt.Image, lim: lim, cg: findCgroupMounts(),
		prefix: fmt.Sprintf("thv-%x-", rnd)}
	if err := e.cg.needMemory(); err != nil {
		return nil, err
	}
	dir := opt.OutDir
	if dir == "" {
		if e.tempOut, err = tempdir.New("thv-out-"); err != nil {
			return nil, err
		}
		dir = e.tempOut.Path()
	} else if ents, err := os.ReadDir(dir); err != nil || len(ents) > 0 {
		if err == nil {
			err = fmt.Errorf("it holds %s, which the bounded /out mounted over it would hide: give an empty one", ents[0].Name())
		}
		return nil, fmt.Errorf("container executor: the scratch directory %s: %w", dir, err)
	}
	if err := e.mountOut(dir); err != nil {
		e.Close()
		return nil, err
	}
	args := opt.Args
	if args == nil {
		args = WorkerArgs()
	}
	storeDir, err := filepath.Abs(opt.Store.Root())
	if err != nil {
		e.Close()
		return nil, err
	}
	cfg := runConfig{store: storeDir, out: e.out.Root(), args: args, lim: lim}
	switch name {
	case "runc":
		e.rt, err = newRunc(bin, cfg)
	default:
		e.rt, err = newCLIRuntime(name, bin, cfg)
	}
	if err == nil {
		err = e.rt.Prepare(opt.Image)
	}
	if err != nil {
		e.Close()
		return nil, err
	}
	return e, nil
}

// mountOut mounts the bounded tmpfs over the scratch directory, opens the
// scratch store inside it (a store opened before the mount would hold the
// directory underneath) and gives it to the containers' user, who must
// own it (and nothing else).
func (e *Executor) mountOut(dir string) error {
	if err := mountOut(dir, e.lim.out); err != nil {
		return err
	}
	e.mounted = dir
	var err error
	if e.out, err = artifacts.Open(dir, artifacts.Scratch); err != nil {
		return err
	}
	if err := chownTree(dir, UID, GID); err != nil {
		return fmt.Errorf("container executor: giving the scratch store to uid %d: %w (the runc and podman runtimes need root)", UID, err)
	}
	return nil
}

// runConfig is what every container of an executor is given.
type runConfig struct {
	store, out string // host paths of the project store and the scratch store
	args       []string
	lim        limits
}

// newContainer names a new container and makes its parent cgroup.
func (e *Executor) newContainer() (*workerContainer, error) {
	e.mu.Lock()
	e.n++
	c := &workerContainer{name: fmt.Sprintf("%s%d", e.prefix, e.n)}
	if e.rt.Name() != "docker" { // docker's systemd driver wants a slice
		c.cgroup = "/" + c.name
	}
	e.containers = append(e.containers, c)
	e.mu.Unlock()
	if c.cgroup == "" {
		return c, nil
	}
	if err := e.cg.prepare(c.cgroup); err != nil {
		return nil, fmt.Errorf("container executor: making the parent cgroup %s: %w", c.cgroup, err)
	}
	return c, nil
}

// Start starts one container worker with its standard input and output
// connected to the caller, for diagnostics (Options.Args); Execute starts
// its own.
func (e *Executor) Start() (*exec.Cmd, error) {
	c, err := e.newContainer()
	if err != nil {
		return nil, err
	}
	return e.rt.Command(c)
}

// Runtime names the runtime in use.
func (e *Executor) Runtime() string { return e.rt.Name() }

// Execute runs spec in a container worker; in a repro, the outputs are
// then imported into the project store.
func (e *Executor) Execute(ctx context.Context, spec *pipeline.Spec) (map[string]artifacts.Digest, error) {
	s := e.takeSlot()
	outs, err := s.proc.Execute(ctx, spec)
	c, cmd := s.cur, s.cmd
	if ctxErr(err) != nil && c != nil {
		// The task was stopped (cancelled, or over its time): the
		// runtime's process is killed, but the container would run on,
		// serving its task, until Close.
		e.rt.Remove(c.name)
	}
	e.putSlot(s)
	if err != nil {
		return nil, e.explain(spec, c, cmd, err)
	}
	if e.tempOut != nil {
		if err := pipeline.ImportOutputs(e.store, e.out, spec.Key, spec.Kind, outs); err != nil {
			return nil, err
		}
	}
	return outs, nil
}

func (e *Executor) takeSlot() *slot {
	e.mu.Lock()
	defer e.mu.Unlock()
	if n := len(e.idle); n > 0 {
		s := e.idle[n-1]
		e.idle = e.idle[:n-1]
		return s
	}
	s := &slot{}
	s.proc = &pipeline.Process{NewCommand: func() (*exec.Cmd, error) {
		c, err := e.newContainer()
		if err != nil {
			return nil, err
		}
		cmd, err := e.rt.Command(c)
		s.cur, s.cmd = c, cmd
		return cmd, err
	}}
	e.slots = append(e.slots, s)
	return s
}

func (e *Executor) putSlot(s *slot) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.idle = append(e.idle, s)
}

// explain words a failed task's error: a worker lost at the memory
// ceiling or the process limit of its container, or one that filled
// /out, is said to have done so, with the limit and the option that
// raises it; anything else is the runtime's or the worker's error.
//
// The memory ceiling is told by two facts together: the runtime reports
// the worker killed by SIGKILL (exit status 137: what the OOM killer
// sends) and the container's memory came within 1/16 of the ceiling (or,
// on cgroup v2, the kernel counted an OOM kill). The process limit: the
// container's processes and threads reached it.
func (e *Executor) explain(spec *pipeline.Spec, c *workerContainer, cmd *exec.Cmd, err error) error {
	rt := e.rt.Name()
	if c != nil && c.cgroup != "" && cmd != nil && cmd.ProcessState != nil && ctxErr(err) == nil {
		u := e.cg.usage(c.cgroup)
		killed := cmd.ProcessState.ExitCode() == 128+int(syscall.SIGKILL)
		switch {
		case killed && (u.oomKills > 0 || u.memPeak >= e.lim.memory-e.lim.memory/16):
			return fmt.Errorf("in %s container: task %s exceeded the memory ceiling of %s (its worker's memory and its outputs in /out; --task-memory raises it) and the kernel stopped it (%w)", rt, spec.Task, sizeString(e.lim.memory), err)
		case u.pidsPeak >= e.lim.pids:
			return fmt.Errorf("in %s container: task %s reached the limit of %d processes and threads of its container (%w)", rt, spec.Task, e.lim.pids, err)
		case killed:
			return fmt.Errorf("in %s container: the worker running task %s was killed (SIGKILL) at %s of memory, under its ceiling of %s: %w", rt, spec.Task, sizeString(max(u.memPeak, 0)), sizeString(e.lim.memory), err)
		}
	}
	if strings.Contains(err.Error(), syscall.ENOSPC.Error()) {
		return fmt.Errorf("in %s container: task %s filled the scratch store /out, which the output limit bounds to %s (--out-limit raises it): %w", rt, spec.Task, sizeString(e.lim.out), err)
	}
	return fmt.Errorf("in %s container: %w", rt, err)
}

// ctxErr is err's cancellation, if it is one (the caller stopped the task:
// its worker is killed, and that is no limit's doing).
func ctxErr(err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}

// Close stops the workers, removes their containers and cgroups, unmounts
// /out and removes the temporary scratch store.
func (e *Executor) Close() error {
	var errs []error
	e.mu.Lock()
	slots, containers := e.slots, e.containers
	e.slots, e.idle, e.containers = nil, nil, nil
	e.mu.Unlock()
	for _, s := range slots {
		errs = append(errs, s.proc.Close())
	}
	if e.rt != nil {
		names := make([]string, len(containers))
		for i, c := range containers {
			names[i] = c.name
		}
		e.rt.Remove(names...)
		errs = append(errs, e.rt.Close())
	}
	for _, c := range containers {
		if c.cgroup != "" {
			errs = append(errs, e.cg.remove(c.cgroup))
		}
	}
	if e.mounted != "" {
		errs = append(errs, unmountOut(e.mounted))
		e.mounted = ""
	}
	if e.tempOut != nil {
		errs = append(errs, e.tempOut.Remove())
	}
	return errors.Join(errs...)
}

// chownTree gives dir and everything in it to uid:gid.
func chownTree(dir string, uid, gid int) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type()&fs.ModeSymlink != 0 {
			return nil
		}
		return os.Lchown(p, uid, gid)
	})
}
