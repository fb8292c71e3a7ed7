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
	"sync"

	"github.com/google/go-containerregistry/pkg/v1/mutate"
	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// runc drives runc directly: the image is unpacked once into a root
// filesystem shared read-only by every container, and each container gets
// a runtime bundle whose config.json is built from runtime-spec types.
type runc struct {
	bin      string
	dir      string // temp: rootfs/, state/, one bundle per container
	store    string // host path of the project store
	out      string // host path of the scratch store
	args     []string
	mu       sync.Mutex
	n        int
	names    []string
	unpacked bool
}

func newRunc(bin, store, out string, args []string) (*runc, error) {
	dir, err := os.MkdirTemp("", "thv-runc-")
	if err != nil {
		return nil, err
	}
	return &runc{bin: bin, dir: dir, store: store, out: out, args: args}, nil
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

// Command returns `runc run` of a new container serving exec-task on its
// standard input and output.
func (r *runc) Command() (*exec.Cmd, error) {
	if !r.unpacked {
		return nil, errors.New("runc: image not prepared")
	}
	r.mu.Lock()
	r.n++
	name := fmt.Sprintf("thv-%d-%d", os.Getpid(), r.n)
	r.names = append(r.names, name)
	r.mu.Unlock()
	bundle := filepath.Join(r.dir, name)
	if err := os.Mkdir(bundle, 0o700); err != nil {
		return nil, err
	}
	b, err := json.MarshalIndent(r.spec(), "", "  ")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(bundle, "config.json"), b, 0o600); err != nil {
		return nil, err
	}
	return exec.Command(r.bin, "--root", filepath.Join(r.dir, "state"), "run", "--bundle", bundle, name), nil
}

// spec is the runtime configuration of every container: the worker as an
// unprivileged user with no capabilities, a read-only root, the store
// read-only, the scratch store writable, its own (empty) network namespace.
func (r *runc) spec() *specs.Spec {
	noCaps := &specs.LinuxCapabilities{Bounding: []string{}, Effective: []string{}, Inheritable: []string{}, Permitted: []string{}, Ambient: []string{}}
	return &specs.Spec{
		Version: "1.0.2",
		Process: &specs.Process{
			User:            specs.User{UID: UID, GID: GID},
			Args:            r.args,
			Env:             []string{"PATH=/"},
			Cwd:             "/",
			Capabilities:    noCaps,
			NoNewPrivileges: true,
			Rlimits:         []specs.POSIXRlimit{{Type: "RLIMIT_NOFILE", Hard: 1024, Soft: 1024}},
		},
		Root:     &specs.Root{Path: filepath.Join(r.dir, "rootfs"), Readonly: true},
		Hostname: "thv",
		Mounts: []specs.Mount{
			{Destination: "/proc", Type: "proc", Source: "proc", Options: []string{"nosuid", "noexec", "nodev"}},
			{Destination: "/dev", Type: "tmpfs", Source: "tmpfs", Options: []string{"nosuid", "strictatime", "mode=755", "size=65536k"}},
			{Destination: StoreMount, Type: "bind", Source: r.store, Options: []string{"rbind", "ro", "nosuid", "nodev", "noexec"}},
			{Destination: OutMount, Type: "bind", Source: r.out, Options: []string{"rbind", "rw", "nosuid", "nodev", "noexec"}},
		},
		Linux: &specs.Linux{
			Namespaces: []specs.LinuxNamespace{
				{Type: specs.PIDNamespace}, {Type: specs.NetworkNamespace}, {Type: specs.IPCNamespace},
				{Type: specs.UTSNamespace}, {Type: specs.MountNamespace},
			},
			Resources: &specs.LinuxResources{Devices: []specs.LinuxDeviceCgroup{{Allow: false, Access: "rwm"}}},
			MaskedPaths: []string{"/proc/acpi", "/proc/asound", "/proc/kcore", "/proc/keys", "/proc/latency_stats",
				"/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug", "/sys/firmware", "/proc/scsi"},
			ReadonlyPaths: []string{"/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"},
		},
	}
}

// Close force-removes every container this runtime named (a worker killed
// on cancel leaves its container behind) and the temp directory.
func (r *runc) Close() error {
	r.mu.Lock()
	names := r.names
	r.names = nil
	r.mu.Unlock()
	state := filepath.Join(r.dir, "state")
	for _, n := range names {
		if _, err := os.Stat(filepath.Join(state, n)); err == nil {
			exec.Command(r.bin, "--root", state, "delete", "--force", n).Run()
		}
	}
	return os.RemoveAll(r.dir)
}
