package container

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"sync"
)

// cliRuntime drives podman or docker through their command lines: the
// image is loaded from its oci-archive and run by its ID (the config
// digest), so no name or registry is involved.
type cliRuntime struct {
	name, bin  string
	store, out string
	img        *Image
	args       []string
	mu         sync.Mutex
	n          int
	names      []string
}

func (c *cliRuntime) Name() string { return c.name }

// Prepare loads the image unless the runtime has it already.
func (c *cliRuntime) Prepare(img *Image) error {
	c.img = img
	if exec.Command(c.bin, "image", "inspect", img.ID.String()).Run() == nil {
		return nil
	}
	f, err := os.CreateTemp("", "thv-image-*.tar")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if err := WriteArchive(f, img); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	out, err := exec.Command(c.bin, "load", "-i", f.Name()).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s load: %v: %s", c.name, err, bytes.TrimSpace(out))
	}
	if err := exec.Command(c.bin, "image", "inspect", img.ID.String()).Run(); err != nil {
		return fmt.Errorf("%s load did not give image %s: %s", c.name, img.ID, bytes.TrimSpace(out))
	}
	return nil
}

// Command returns `run` of a new container serving exec-task on its
// standard input and output, with the same confinement as the runc spec.
func (c *cliRuntime) Command() (*exec.Cmd, error) {
	c.mu.Lock()
	c.n++
	name := fmt.Sprintf("thv-%d-%d", os.Getpid(), c.n)
	c.names = append(c.names, name)
	c.mu.Unlock()
	args := []string{"run", "--rm", "-i", "--name", name,
		"--network", "none", "--read-only", "--cap-drop", "all",
		"--security-opt", "no-new-privileges",
		"--user", fmt.Sprintf("%d:%d", UID, GID),
		// Rootful podman raises nproc to a default above the hard limit
		// of a confined host (a sandbox, a CI runner), and runc then
		// refuses to start ("error setting rlimit type 6"): fixed values
		// under any hard limit are safe. The worker needs a few threads
		// and files.
		"--ulimit", "nofile=1024:1024", "--ulimit", "nproc=4096:4096",
		"--mount", "type=bind,source=" + c.store + ",destination=" + StoreMount + ",readonly",
		"--mount", "type=bind,source=" + c.out + ",destination=" + OutMount,
	}
	if c.name == "podman" {
		// crun, podman's default runtime here, refuses the hybrid cgroup
		// setup of our machines; runc works. Nothing writable but /out.
		args = append(args, "--runtime", "runc", "--read-only-tmpfs=false", "--log-driver", "none")
	}
	args = append(args, "--entrypoint", c.args[0], c.img.ID.String())
	args = append(args, c.args[1:]...)
	return exec.Command(c.bin, args...), nil
}

// Close force-removes the containers this runtime named that are left
// (a worker killed on cancel).
func (c *cliRuntime) Close() error {
	c.mu.Lock()
	names := c.names
	c.names = nil
	c.mu.Unlock()
	if len(names) == 0 {
		return nil
	}
	exec.Command(c.bin, append([]string{"rm", "-f"}, names...)...).Run()
	return nil
}
