package container

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"

	"thv/artifacts"
	"thv/pipeline"
)

// WorkerArgs is the command line of the worker inside a container.
func WorkerArgs() []string {
	return []string{BinaryPath, "exec-task", "--store", StoreMount, "--out", OutMount}
}

// containerRuntime starts containers of one image.
type containerRuntime interface {
	Name() string
	Prepare(img *Image) error
	Command() (*exec.Cmd, error)
	Close() error
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

// Options configure an Executor.
type Options struct {
	Runtime string           // runc, podman or docker; "" picks the first found
	Image   *Image           // the image to run
	Store   *artifacts.Store // the project store, mounted read-only
	// Args replace the worker's command line in the image (diagnostics
	// and tests: thv exec-task --self-check); nil: WorkerArgs().
	Args []string
	// Out is the scratch store the workers write to. nil: a temporary
	// one, imported from into Store after every task and removed on
	// Close (a repro). Given: left to the caller (a verify compares it).
	Out *artifacts.Store
}

// Executor runs task specs in containers: each worker is one container
// serving `thv exec-task` for as many tasks as it is given, so a
// container's start-up is paid once per job slot, not per task.
type Executor struct {
	proc    *pipeline.Process
	rt      containerRuntime
	store   *artifacts.Store
	out     *artifacts.Store
	tempOut string // the scratch directory this executor made, if any
	Image   *Image
}

// New prepares the runtime (unpacks or loads the image) and returns the
// executor; nothing runs until Execute.
func New(opt Options) (*Executor, error) {
	name, bin, err := FindRuntime(opt.Runtime)
	if err != nil {
		return nil, err
	}
	e := &Executor{store: opt.Store, out: opt.Out, Image: opt.Image}
	if e.out == nil {
		e.tempOut, err = os.MkdirTemp("", "thv-out-")
		if err != nil {
			return nil, err
		}
		if e.out, err = artifacts.OpenScratch(e.tempOut); err != nil {
			os.RemoveAll(e.tempOut)
			return nil, err
		}
	}
	// The worker runs as an unprivileged user: it must own its scratch
	// store (and nothing else).
	if err := chownTree(e.out.Root(), UID, GID); err != nil {
		e.Close()
		return nil, fmt.Errorf("container executor: giving the scratch store to uid %d: %w (the runc and podman runtimes need root)", UID, err)
	}
	args := opt.Args
	if args == nil {
		args = WorkerArgs()
	}
	storeDir, err := filepath.Abs(opt.Store.Root())
	if err != nil {
		return nil, err
	}
	switch name {
	case "runc":
		e.rt, err = newRunc(bin, storeDir, e.out.Root(), args)
	default:
		e.rt = &cliRuntime{name: name, bin: bin, store: storeDir, out: e.out.Root(), args: args}
	}
	if err == nil {
		err = e.rt.Prepare(opt.Image)
	}
	if err != nil {
		e.Close()
		return nil, err
	}
	e.proc = &pipeline.Process{NewCommand: e.rt.Command}
	return e, nil
}

// Start starts one container worker with its standard input and output
// connected to the caller, for diagnostics (Options.Args); Execute starts
// its own.
func (e *Executor) Start() (*exec.Cmd, error) { return e.rt.Command() }

// Runtime names the runtime in use.
func (e *Executor) Runtime() string { return e.rt.Name() }

// Execute runs spec in a container worker; in a repro, the outputs are
// then imported into the project store.
func (e *Executor) Execute(ctx context.Context, spec *pipeline.Spec) (map[string]artifacts.Digest, error) {
	outs, err := e.proc.Execute(ctx, spec)
	if err != nil {
		return nil, fmt.Errorf("in %s container: %w", e.rt.Name(), err)
	}
	if e.tempOut != "" {
		if err := pipeline.ImportOutputs(e.store, e.out, spec.Key, spec.Kind, outs); err != nil {
			return nil, err
		}
	}
	return outs, nil
}

// Close stops the workers, removes their containers and the temporary
// scratch store.
func (e *Executor) Close() error {
	var errs []error
	if e.proc != nil {
		errs = append(errs, e.proc.Close())
	}
	if e.rt != nil {
		errs = append(errs, e.rt.Close())
	}
	if e.tempOut != "" {
		errs = append(errs, os.RemoveAll(e.tempOut))
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
