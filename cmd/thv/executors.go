package main

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"thv/artifacts"
	"thv/pipeline"
	"thv/pipeline/container"
	"thv/stages/protocol"
)

// executorFlags choose where tasks run (repro, verify).
type executorFlags struct {
	name    string
	runtime string
}

func (f *executorFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.name, "executor", "local", "where tasks run: local (in process), process (thv exec-task workers) or container (workers in the OCI image of this thv)")
	cmd.Flags().StringVar(&f.runtime, "runtime", "", "container runtime for --executor container: runc, podman or docker (default: the first found)")
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
		ex, err := container.New(container.Options{Runtime: f.runtime, Image: img, Store: proj.Store})
		if err != nil {
			return nil, "", err
		}
		return ex, img.Digest.String(), nil
	}
	return nil, "", nil
}

// verifier returns how thv verify makes its executor, which reads the
// project store and writes to a scratch store; nil means in process.
func (f *executorFlags) verifier(proj *protocol.Project) (func(*artifacts.Store) (pipeline.Executor, error), error) {
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
			return &pipeline.Process{Command: cmd}, nil
		}, nil
	case "container":
		img, err := projectImage(proj.Store)
		if err != nil {
			return nil, err
		}
		return func(scratch *artifacts.Store) (pipeline.Executor, error) {
			return container.New(container.Options{Runtime: f.runtime, Image: img, Store: proj.Store, Out: scratch})
		}, nil
	}
	return nil, nil
}

func (f *executorFlags) check() error {
	switch f.name {
	case "", "local", "process":
		if f.runtime != "" {
			return fmt.Errorf("--runtime %s: only with --executor container", f.runtime)
		}
		return nil
	case "container":
		return nil
	}
	return fmt.Errorf("--executor %q: want local, process or container", f.name)
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
