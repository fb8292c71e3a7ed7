package container

import (
	"archive/tar"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"thv/pipeline/tempdir"

	"github.com/google/go-containerregistry/pkg/v1/mutate"
	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// runc drives runc directly: the image is unpacked once into a root
// filesystem shared read-only by every container, and each container gets
// a runtime bundle whose config.json is built from runtime-spec types.
type runc struct {
	bin      string
	tmp      *tempdir.Dir // holds dir; swept if this process dies
	dir      string       // temp: rootfs/, state/, one bundle per container
	cfg      runConfig
	unpacked bool
}

func newRunc(bin string, cfg runConfig) (*runc, error) {
	tmp, err := tempdir.New("thv-runc-")
	if err != nil {
		return nil, err
	}
	return &runc{bin: bin, tmp: tmp, dir: tmp.Path(), cfg: cfg}, nil
}

func (r *runc) Name() string { return "runc" }

// Prepare unpacks the image's file system.
func (r *runc) Prepare(img *Image) error {
	rc := mutate.Extract(img.Img)
	defer rc.Close()
	if err := unpack(rc, filepath.Join(r.dir, "rootfs")); err != nil {
		return fmt.Errorf("runc: unpacking image %s: %w", img.Digest, err)
	}
	r.unpacked = true
	return nil
}

// unpack extracts the directories and regular files of an image's file
// system into dir; anything else, or a name leaving dir, is refused.
func unpack(r io.Reader, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		name := path.Clean(strings.TrimPrefix(h.Name, "/"))
		if name == "." {
			continue
		}
		if !filepath.IsLocal(name) {
			return fmt.Errorf("image entry %q leaves the root filesystem", h.Name)
		}
		dst := filepath.Join(dir, filepath.FromSlash(name))
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(dst, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			f, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o555)
			if err != nil {
				return err
			}
			_, err = io.Copy(f, tr)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
		default:
			return fmt.Errorf("image entry %q: type %q is not a file or directory", h.Name, h.Typeflag)
		}
	}
}

// Command returns `runc run` of container c.
func (r *runc) Command(c *workerContainer) (*exec.Cmd, error) {
	if !r.unpacked {
		return nil, errors.New("runc: image not prepared")
	}
	bundle := filepath.Join(r.dir, c.name)
	if err := os.Mkdir(bundle, 0o700); err != nil {
		return nil, err
	}
	b, err := json.MarshalIndent(r.spec(c), "", "  ")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(bundle, "config.json"), b, 0o600); err != nil {
		return nil, err
	}
	return exec.Command(r.bin, "--root", filepath.Join(r.dir, "state"), "run", "--bundle", bundle, c.name), nil
}

// spec is the runtime configuration of container c: the confinement of
// docs/containers.md, which podman's and docker's flags (cli.go) repeat.
func (r *runc) spec(c *workerContainer) *specs.Spec {
	noCaps := &specs.LinuxCapabilities{Bounding: []string{}, Effective: []string{}, Inheritable: []string{}, Permitted: []string{}, Ambient: []string{}}
	mem, pids := r.cfg.lim.memory, r.cfg.lim.pids
	return &specs.Spec{
		Version: specs.Version,
		Process: &specs.Process{
			User:            specs.User{UID: UID, GID: GID, AdditionalGids: []uint32{GID}},
			Args:            r.cfg.args,
			Env:             []string{"PATH=/"},
			Cwd:             "/",
			Capabilities:    noCaps,
			NoNewPrivileges: true,
			Rlimits:         rlimits(),
		},
		Root:     &specs.Root{Path: filepath.Join(r.dir, "rootfs"), Readonly: true},
		Hostname: Hostname,
		Mounts: []specs.Mount{
			// What podman mounts (with --ipc none, --passwd=false,
			// --no-hosts and the empty /dev/mqueue), so that both
			// runtimes give the same: the cgroup hierarchies, read-only,
			// show the worker its limits.
			{Destination: "/proc", Type: "proc", Source: "proc", Options: []string{"nosuid", "noexec", "nodev"}},
			{Destination: "/dev", Type: "tmpfs", Source: "tmpfs", Options: []string{"nosuid", "noexec", "strictatime", "mode=755", "size=65536k"}},
			{Destination: "/dev/pts", Type: "devpts", Source: "devpts", Options: []string{"nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620", "gid=5"}},
			{Destination: "/dev/mqueue", Type: "tmpfs", Source: "tmpfs", Options: emptyMountOptions},
			{Destination: "/sys", Type: "sysfs", Source: "sysfs", Options: []string{"nosuid", "noexec", "nodev", "ro"}},
			{Destination: "/sys/fs/cgroup", Type: "cgroup", Source: "cgroup", Options: []string{"nosuid", "noexec", "nodev", "relatime", "ro"}},
			{Destination: StoreMount, Type: "bind", Source: r.cfg.store, Options: []string{"rbind", "ro", "nosuid", "nodev", "noexec"}},
			{Destination: OutMount, Type: "bind", Source: r.cfg.out, Options: []string{"rbind", "rw", "nosuid", "nodev", "noexec"}},
		},
		Linux: &specs.Linux{
			Namespaces: []specs.LinuxNamespace{
				{Type: specs.PIDNamespace}, {Type: specs.NetworkNamespace}, {Type: specs.IPCNamespace},
				{Type: specs.UTSNamespace}, {Type: specs.MountNamespace},
			},
			// Under a parent of our own (cgroup_linux.go); runc makes
			// and removes the container's cgroup itself.
			CgroupsPath: c.cgroup + "/worker",
			Resources: &specs.LinuxResources{
				Devices: []specs.LinuxDeviceCgroup{{Allow: false, Access: "rwm"}},
				// Swap equal to the limit: memory and swap together
				// may not exceed it, so no swap.
				Memory: &specs.LinuxMemory{Limit: &mem, Swap: &mem},
				Pids:   &specs.LinuxPids{Limit: &pids},
			},
			Seccomp:       Seccomp(),
			MaskedPaths:   maskedPaths,
			ReadonlyPaths: readonlyPaths,
		},
	}
}

// Remove force-removes the containers named whose state runc still has
// (a worker killed on cancel leaves its container behind).
func (r *runc) Remove(names ...string) {
	state := filepath.Join(r.dir, "state")
	for _, n := range names {
		if _, err := os.Stat(filepath.Join(state, n)); err == nil {
			exec.Command(r.bin, "--root", state, "delete", "--force", n).Run()
		}
	}
}

// Close removes the temp directory: root filesystem, bundles, state.
func (r *runc) Close() error { return r.tmp.Remove() }
