package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"thv/artifacts"
	"thv/pipeline"
	"thv/pipeline/container"
	"thv/stages/protocol"
)

// executorFlags choose where tasks run (repro, verify), and the ceilings
// of each task's worker.
type executorFlags struct {
	name       string
	runtime    string
	taskMemory byteSize // --task-memory; 0: the executor's default
	outLimit   byteSize // --out-limit, container only; 0: its default
	verifying  bool     // verify, verify-bundle: process workers by default, with a memory ceiling
	slurm      slurmFlags
}

// Memory ceilings: a worker process's address space under verify (the Go
// runtime alone reserves about 0.9 GiB of it at start, so less cannot
// work), and a container's memory (container.DefaultMemory).
const (
	defaultProcessMemory = 4 << 30
	minProcessMemory     = 1 << 30
)

func (f *executorFlags) register(cmd *cobra.Command) {
	def := "local"
	if strings.HasPrefix(cmd.Name(), "verify") {
		// Re-executed tasks run in worker processes of this thv, each
		// under the memory ceiling (--task-memory) and killed at the
		// time ceiling: a bundle's protocol decides what they compute.
		def, f.verifying = "process", true
	}
	cmd.Flags().StringVar(&f.name, "executor", def, "where tasks run: local (in process), process (thv exec-task workers), container (workers in the OCI image of this thv) or slurm (job arrays on a Slurm cluster, docs/cluster.md)")
	cmd.Flags().StringVar(&f.runtime, "runtime", "", "container runtime for --executor container: runc, podman or docker (default: the first found)")
	processDefault := "none"
	if f.verifying {
		processDefault = byteSize(defaultProcessMemory).String()
	}
	cmd.Flags().Var(&f.taskMemory, "task-memory", fmt.Sprintf("memory ceiling of each task's worker, e.g. 4GiB: its container's memory without swap (--executor container, default %s) or its process's address space (--executor process, default %s, at least %s); a task over it fails",
		byteSize(container.DefaultMemory), processDefault, byteSize(minProcessMemory)))
	cmd.Flags().Var(&f.outLimit, "out-limit", fmt.Sprintf("size of the containers' scratch store /out for --executor container, e.g. 8GiB (default %s); a task that fills it fails", byteSize(container.DefaultOutLimit)))
	if cmd.Name() == "repro" { // verify's scratch store is not shared: no slurm there
		f.slurm.register(cmd)
	}
}

// executor returns the executor a repro runs tasks with (nil is the
// runner's default, in process) and the image digest to record in the
// lock ("" outside containers).
func (f *executorFlags) executor(proj *protocol.Project) (pipeline.Executor, string, error) {
	if err := f.check(); err != nil {
		return nil, "", err
	}
	switch f.name {
	case "process":
		cmd, err := pipeline.WorkerCommand(proj.Store.Root(), "")
		if err != nil {
			return nil, "", err
		}
		return f.process(cmd), "", nil
	case "container":
		img, err := projectImage(proj.Store)
		if err != nil {
			return nil, "", err
		}
		ex, err := container.New(f.containerOptions(img, proj.Store, ""))
		if err != nil {
			return nil, "", err
		}
		return ex, img.Digest.String(), nil
	case "slurm":
		ex, err := f.slurm.executor(proj, logger(os.Stderr))
		return ex, "", err
	}
	return nil, "", nil
}

// process is the process executor of the worker command cmd, each worker
// under the memory ceiling, if any.
func (f *executorFlags) process(cmd []string) *pipeline.Process {
	mem := int64(f.taskMemory)
	if mem == 0 && f.verifying {
		mem = defaultProcessMemory
	}
	if mem == 0 {
		return &pipeline.Process{Command: cmd}
	}
	return &pipeline.Process{Command: append(cmd, "--max-memory", strconv.FormatInt(mem, 10)), MemoryLimit: mem}
}

// verifier returns how thv verify makes its executor, which reads the
// project store and writes to a scratch store; nil means in process (where
// no memory ceiling can be applied to one task).
func (f *executorFlags) verifier(proj *protocol.Project) (func(scratchDir string) (pipeline.Executor, error), error) {
	if err := f.check(); err != nil {
		return nil, err
	}
	switch f.name {
	case "process":
		return func(scratchDir string) (pipeline.Executor, error) {
			cmd, err := pipeline.WorkerCommand(proj.Store.Root(), scratchDir)
			if err != nil {
				return nil, err
			}
			return f.process(cmd), nil
		}, nil
	case "container":
		img, err := projectImage(proj.Store)
		if err != nil {
			return nil, err
		}
		return func(scratchDir string) (pipeline.Executor, error) {
			return container.New(f.containerOptions(img, proj.Store, scratchDir))
		}, nil
	case "slurm":
		return nil, fmt.Errorf("thv verify --executor slurm: not supported (its scratch store is not on the shared filesystem); use --executor local, process or container")
	}
	return nil, nil
}

// containerOptions are the container executor's options from the flags
// (checked by check).
func (f *executorFlags) containerOptions(img *container.Image, st *artifacts.Store, scratchDir string) container.Options {
	return container.Options{Runtime: f.runtime, Image: img, Store: st, OutDir: scratchDir, Memory: int64(f.taskMemory), OutLimit: int64(f.outLimit)}
}

func (f *executorFlags) check() error {
	if fl := f.slurm.changed(); fl != "" && f.name != "slurm" {
		return fmt.Errorf("%s: only with --executor slurm", fl)
	}
	if f.outLimit != 0 && f.name != "container" {
		return fmt.Errorf("--out-limit %s: only with --executor container", f.outLimit)
	}
	if f.taskMemory != 0 {
		switch {
		case f.name != "container" && f.name != "process":
			return fmt.Errorf("--task-memory %s: only with --executor process or container (a task in this process cannot be given a ceiling of its own)", f.taskMemory)
		case f.name == "process" && f.taskMemory < minProcessMemory:
			return fmt.Errorf("--task-memory %s: give at least %s: a worker process cannot start below about 0.9 GiB of address space (the Go runtime reserves it at start)", f.taskMemory, byteSize(minProcessMemory))
		}
	}
	switch f.name {
	case "", "local", "process":
		if f.runtime != "" {
			return fmt.Errorf("--runtime %s: only with --executor container", f.runtime)
		}
		return nil
	case "container", "slurm":
		if f.name == "slurm" && f.runtime != "" {
			return fmt.Errorf("--runtime %s: only with --executor container", f.runtime)
		}
		return nil
	}
	return fmt.Errorf("--executor %q: want local, process, container or slurm", f.name)
}

// defaultJobs is the -j a repro uses when none is given (0: the runner's
// default, all cores): with slurm, enough tasks to fill every element.
func (f *executorFlags) defaultJobs(proj *protocol.Project) int {
	if f.name == "slurm" {
		return f.slurm.jobs(proj)
	}
	return 0
}

// projectImage builds the image of this thv and keeps it in the store's
// OCI layout (<store>/oci), where thv image -o and bundles find it.
func projectImage(st *artifacts.Store) (*container.Image, error) {
	bin, err := container.StaticBinary()
	if err != nil {
		return nil, err
	}
	img, err := container.BuildImage(bin)
	if err != nil {
		return nil, err
	}
	if err := container.WriteLayout(filepath.Join(st.Root(), "oci"), img); err != nil {
		return nil, err
	}
	return img, nil
}
