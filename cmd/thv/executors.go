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

// executorFlags choose where tasks run (repro, verify).
type executorFlags struct {
	name     string
	runtime  string
	memory   string // --memory, container only
	outLimit string // --out-limit, container only
	slurm    slurmFlags
}

func (f *executorFlags) register(cmd *cobra.Command) {
	def := "local"
	if strings.HasPrefix(cmd.Name(), "verify") {
		// Re-executed tasks run in worker processes of this thv, each
		// under the memory ceiling (--task-memory) and killed at the
		// time ceiling: a bundle's protocol decides what they compute.
		def = "process"
	}
	cmd.Flags().StringVar(&f.name, "executor", def, "where tasks run: local (in process), process (thv exec-task workers), container (workers in the OCI image of this thv) or slurm (job arrays on a Slurm cluster, docs/cluster.md)")
	cmd.Flags().StringVar(&f.runtime, "runtime", "", "container runtime for --executor container: runc, podman or docker (default: the first found)")
	cmd.Flags().StringVar(&f.memory, "memory", "", "memory ceiling of each container for --executor container, without swap, e.g. 4GiB (default 2GiB); a task over it fails")
	cmd.Flags().StringVar(&f.outLimit, "out-limit", "", "size of the containers' scratch store /out for --executor container, e.g. 8GiB (default 4GiB); a task that fills it fails")
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
		return &pipeline.Process{Command: cmd}, "", nil
	case "container":
		img, err := projectImage(proj.Store)
		if err != nil {
			return nil, "", err
		}
		ex, err := container.New(f.containerOptions(img, proj.Store, nil))
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

// verifier returns how thv verify makes its executor, which reads the
// project store and writes to a scratch store; nil means in process (where
// no memory ceiling can be applied to one task). memory is the ceiling of
// each worker, which runs one task at a time.
func (f *executorFlags) verifier(proj *protocol.Project, memory int64) (func(*artifacts.Store) (pipeline.Executor, error), error) {
	if err := f.check(); err != nil {
		return nil, err
	}
	switch f.name {
	case "process":
		return func(scratch *artifacts.Store) (pipeline.Executor, error) {
			cmd, err := pipeline.WorkerCommand(proj.Store.Root(), scratch.Root())
			if err != nil {
				return nil, err
			}
			cmd = append(cmd, "--max-memory", strconv.FormatInt(memory, 10))
			return &pipeline.Process{Command: cmd, MemoryLimit: memory}, nil
		}, nil
	case "container":
		img, err := projectImage(proj.Store)
		if err != nil {
			return nil, err
		}
		return func(scratch *artifacts.Store) (pipeline.Executor, error) {
			return container.New(f.containerOptions(img, proj.Store, scratch))
		}, nil
	case "slurm":
		return nil, fmt.Errorf("thv verify --executor slurm: not supported (its scratch store is not on the shared filesystem); use --executor local, process or container")
	}
	return nil, nil
}

// containerOptions are the container executor's options from the flags
// (checked by check).
func (f *executorFlags) containerOptions(img *container.Image, st, scratch *artifacts.Store) container.Options {
	opt := container.Options{Runtime: f.runtime, Image: img, Store: st, Out: scratch}
	opt.Memory, _ = parseSizeFlag(f.memory)
	opt.OutLimit, _ = parseSizeFlag(f.outLimit)
	return opt
}

func parseSizeFlag(s string) (int64, error) {
	if s == "" {
		return 0, nil // the default
	}
	return container.ParseSize(s)
}

func (f *executorFlags) check() error {
	if fl := f.slurm.changed(); fl != "" && f.name != "slurm" {
		return fmt.Errorf("%s: only with --executor slurm", fl)
	}
	for _, fl := range []struct{ name, v string }{{"--memory", f.memory}, {"--out-limit", f.outLimit}} {
		if fl.v == "" {
			continue
		}
		if f.name != "container" {
			return fmt.Errorf("%s %s: only with --executor container", fl.name, fl.v)
		}
		if _, err := parseSizeFlag(fl.v); err != nil {
			return fmt.Errorf("%s: %w", fl.name, err)
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
