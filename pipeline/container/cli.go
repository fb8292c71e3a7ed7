package container

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"thv/pipeline/tempdir"
)

// cliRuntime drives podman or docker through their command lines: the
// image is loaded from its oci-archive and run by its ID (the config
// digest), so no name or registry is involved.
type cliRuntime struct {
	name, bin string
	cfg       runConfig
	img       *Image
	tmp       *tempdir.Dir // holds dir; swept if this process dies
	dir       string       // temp: the seccomp profile, podman's working directory
	seccomp   string       // its path
}

func newCLIRuntime(name, bin string, cfg runConfig) (*cliRuntime, error) {
	tmp, err := tempdir.New("thv-" + name + "-")
	if err != nil {
		return nil, err
	}
	dir := tmp.Path()
	c := &cliRuntime{name: name, bin: bin, cfg: cfg, tmp: tmp, dir: dir, seccomp: filepath.Join(dir, "seccomp.json")}
	b, err := seccompProfileJSON()
	if err == nil {
		err = os.WriteFile(c.seccomp, b, 0o644)
	}
	if err != nil {
		tmp.Remove()
		return nil, fmt.Errorf("%s: writing the seccomp profile: %w", name, err)
	}
	return c, nil
}

func (c *cliRuntime) Name() string { return c.name }

// Prepare loads the image unless the runtime has it already.
func (c *cliRuntime) Prepare(img *Image) error {
	c.img = img
	if exec.Command(c.bin, "image", "inspect", img.ID.String()).Run() == nil {
		return nil
	}
	f, err := os.CreateTemp(c.dir, "image-*.tar") // in the runtime's temp directory: swept if this process dies
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

// Command returns `run` of container c, with the confinement of the runc
// spec (runc.go) as flags.
func (c *cliRuntime) Command(wc *workerContainer) (*exec.Cmd, error) {
	var args []string
	if c.name == "podman" {
		// Its cgroups as runc's (cgroupfs, under the parent given
		// below) on a systemd host too.
		args = append(args, "--cgroup-manager", "cgroupfs")
	}
	args = append(args, "run", "--rm", "-i", "--name", wc.name,
		"--network", "none", "--read-only", "--cap-drop", "all",
		"--security-opt", "no-new-privileges",
		"--security-opt", "seccomp="+c.seccomp,
		"--user", fmt.Sprintf("%d:%d", UID, GID),
		"--hostname", Hostname,
		// A private IPC namespace without /dev/shm and with nothing
		// at /dev/mqueue, as runc's spec.
		"--ipc", "none",
		"--tmpfs", "/dev/mqueue:"+strings.Join(emptyMountOptions, ","),
		"--memory", fmt.Sprintf("%db", c.cfg.lim.memory),
		"--memory-swap", fmt.Sprintf("%db", c.cfg.lim.memory), // no swap
		"--pids-limit", fmt.Sprint(c.cfg.lim.pids),
	)
	// docker's --mount takes no nosuid, nodev or noexec: there /out has
	// them from its tmpfs (a bind mount keeps its source's flags) and
	// /store is only read-only.
	mountOpts := ",nosuid,nodev,noexec"
	if c.name != "podman" {
		mountOpts = ""
	}
	args = append(args,
		"--mount", "type=bind,source="+c.cfg.store+",destination="+StoreMount+",readonly"+mountOpts,
		"--mount", "type=bind,source="+c.cfg.out+",destination="+OutMount+mountOpts)
	args = append(args, ulimitFlags()...)
	if c.name == "podman" {
		// crun, podman's default runtime here, refuses the hybrid cgroup
		// setup of our machines; runc works. Nothing writable but /out;
		// no /etc/hosts, /etc/passwd or /etc/group; the parent cgroup
		// whose counters the executor reads (docker's systemd cgroup
		// driver would want a slice instead).
		args = append(args, "--runtime", "runc", "--read-only-tmpfs=false", "--log-driver", "none",
			"--no-hosts", "--passwd=false", "--cgroup-parent", wc.cgroup)
	}
	args = append(args, "--entrypoint", c.cfg.args[0], c.img.ID.String())
	args = append(args, c.cfg.args[1:]...)
	cmd := exec.Command(c.bin, args...)
	// conmon leaves a file named oom in its working directory when the
	// OOM killer stops a container: in ours, not the caller's.
	cmd.Dir = c.dir
	return cmd, nil
}

// Remove force-removes the containers named that are left (a worker
// killed on cancel leaves its container running).
func (c *cliRuntime) Remove(names ...string) {
	if len(names) == 0 {
		return
	}
	args := []string{"rm", "-f"}
	if c.name == "podman" {
		// SIGKILL at once: podman would first wait 10 s after a
		// SIGTERM, which a worker serving a task does not stop at.
		args = append(args, "--time", "0")
	}
	exec.Command(c.bin, append(args, names...)...).Run()
}

// Close removes the seccomp profile.
func (c *cliRuntime) Close() error { return c.tmp.Remove() }
