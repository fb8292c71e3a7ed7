package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"thv/artifacts"
	"thv/pipeline"
	"thv/pipeline/container"
	"thv/protocol"
)

// executors names every executor thv runs tasks with, once, as gazelle's
// cmd/gazelle/langs.go names its languages: what --executor calls it, the
// flags it owns, how a repro and a verification make it, and its checks.
// Adding an executor is its package and one row here (executorRow); the
// commands (executorflags.go) know no executor by name.
var executors = []executorRow{
	{
		name:   "local",
		help:   "in process",
		repro:  func(*executorFlags, *protocol.Project) (pipeline.Executor, string, error) { return nil, "", nil },
		verify: func(*executorFlags, *protocol.Project) (newVerifyExecutor, error) { return nil, nil },
	},
	{
		name:  "process",
		help:  "thv exec-task workers",
		flags: []*executorFlag{taskMemoryFlag},
		check: func(f *executorFlags) error {
			if f.taskMemory != 0 && f.taskMemory < minProcessMemory {
				return fmt.Errorf("--task-memory %s: give at least %s: a worker process cannot start below about 0.9 GiB of address space (the Go runtime reserves it at start)", f.taskMemory, byteSize(minProcessMemory))
			}
			return nil
		},
		repro: func(f *executorFlags, proj *protocol.Project) (pipeline.Executor, string, error) {
			p, err := f.processExecutor(proj, "")
			if err != nil {
				return nil, "", err
			}
			return p, "", nil
		},
		verify: func(f *executorFlags, proj *protocol.Project) (newVerifyExecutor, error) {
			return func(scratchDir string) (pipeline.Executor, error) {
				p, err := f.processExecutor(proj, scratchDir)
				if err != nil {
					return nil, err
				}
				return p, nil
			}, nil
		},
	},
	{
		name:  "container",
		help:  "workers in the OCI image of this thv",
		flags: []*executorFlag{runtimeFlag, taskMemoryFlag, outLimitFlag},
		repro: func(f *executorFlags, proj *protocol.Project) (pipeline.Executor, string, error) {
			img, err := projectImage(proj.Store)
			if err != nil {
				return nil, "", err
			}
			ex, err := container.New(f.containerOptions(img, proj.Store, ""))
			if err != nil {
				return nil, "", err
			}
			return ex, img.Digest.String(), nil
		},
		verify: func(f *executorFlags, proj *protocol.Project) (newVerifyExecutor, error) {
			img, err := projectImage(proj.Store)
			if err != nil {
				return nil, err
			}
			return func(scratchDir string) (pipeline.Executor, error) {
				ex, err := container.New(f.containerOptions(img, proj.Store, scratchDir))
				if err != nil {
					return nil, err
				}
				return ex, nil
			}, nil
		},
	},
	{
		name:  "slurm",
		help:  "job arrays on a Slurm cluster, docs/cluster.md",
		flags: []*executorFlag{slurmFlag},
		repro: func(f *executorFlags, proj *protocol.Project) (pipeline.Executor, string, error) {
			ex, err := f.slurm.executor(proj, logger(os.Stderr))
			if err != nil {
				return nil, "", err
			}
			return ex, "", nil
		},
		noVerify: "its scratch store is not on the shared filesystem",
		jobs:     func(f *executorFlags, proj *protocol.Project) int { return f.slurm.jobs(proj) },
	},
}

// The flags the executors own (each listed by the rows of the executors
// it applies to).
var (
	runtimeFlag = &executorFlag{
		names: []string{"runtime"},
		register: func(cmd *cobra.Command, f *executorFlags) {
			cmd.Flags().StringVar(&f.runtime, "runtime", "", "container runtime for --executor container: runc, podman or docker (default: the first found)")
		},
	}
	taskMemoryFlag = &executorFlag{
		names: []string{"task-memory"},
		register: func(cmd *cobra.Command, f *executorFlags) {
			processDefault := "none"
			if f.verifying {
				processDefault = byteSize(defaultProcessMemory).String()
			}
			cmd.Flags().Var(&f.taskMemory, "task-memory", fmt.Sprintf("memory ceiling of each task's worker, e.g. 4GiB: its container's memory without swap (--executor container, default %s) or its process's address space (--executor process, default %s, at least %s); a task over it fails",
				byteSize(container.DefaultMemory), processDefault, byteSize(minProcessMemory)))
		},
		why: "a task in this process cannot be given a ceiling of its own",
	}
	outLimitFlag = &executorFlag{
		names: []string{"out-limit"},
		register: func(cmd *cobra.Command, f *executorFlags) {
			cmd.Flags().Var(&f.outLimit, "out-limit", fmt.Sprintf("size of the containers' scratch store /out for --executor container, e.g. 8GiB (default %s); a task that fills it fails", byteSize(container.DefaultOutLimit)))
		},
	}
	slurmFlag = &executorFlag{
		names:    slurmFlagNames,
		register: func(cmd *cobra.Command, f *executorFlags) { f.slurm.register(cmd) },
	}
)

// Memory ceilings: a worker process's address space under verify (the Go
// runtime alone reserves about 0.9 GiB of it at start, so less cannot
// work), and a container's memory (container.DefaultMemory).
const (
	defaultProcessMemory = 4 << 30
	minProcessMemory     = 1 << 30
)

// processExecutor is the process executor of workers of this thv on the
// project store, writing to the scratch store scratchDir if not "", each
// under the memory ceiling, if any.
func (f *executorFlags) processExecutor(proj *protocol.Project, scratchDir string) (*pipeline.Process, error) {
	mem := int64(f.taskMemory)
	if mem == 0 && f.verifying {
		mem = defaultProcessMemory
	}
	cmd, err := pipeline.WorkerArgs{Store: proj.Store.Root(), Out: scratchDir, MaxMemory: mem}.SelfCommand()
	if err != nil {
		return nil, err
	}
	return &pipeline.Process{Command: cmd, MemoryLimit: mem}, nil
}

// containerOptions are the container executor's options from the flags.
func (f *executorFlags) containerOptions(img *container.Image, st *artifacts.Store, scratchDir string) container.Options {
	return container.Options{Runtime: f.runtime, Image: img, Store: st, OutDir: scratchDir, Memory: int64(f.taskMemory), OutLimit: int64(f.outLimit)}
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
