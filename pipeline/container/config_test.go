package container

import (
	"slices"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// TestRuntimeConfigs: runc's runtime spec and podman's command line carry
// the same limits, filter and mount options (TestContainerConfinement in
// cmd/thv checks them from inside the containers).
func TestRuntimeConfigs(t *testing.T) {
	cfg := runConfig{store: "/host/store", out: "/host/out", args: WorkerArgs(),
		lim: limits{memory: 300 << 20, pids: 77, out: 1 << 30}}
	c := &workerContainer{name: "thv-test-1", cgroup: "/thv-test-1"}

	r := &runc{dir: t.TempDir(), cfg: cfg}
	s := r.spec(c)
	res := s.Linux.Resources
	if *res.Memory.Limit != 300<<20 || *res.Memory.Swap != 300<<20 || *res.Pids.Limit != 77 {
		t.Errorf("runc resources: memory %d, memory+swap %d, pids %d", *res.Memory.Limit, *res.Memory.Swap, *res.Pids.Limit)
	}
	if s.Linux.CgroupsPath != "/thv-test-1/worker" {
		t.Errorf("runc cgroups path %q, want under the parent /thv-test-1", s.Linux.CgroupsPath)
	}
	if s.Linux.Seccomp == nil || s.Linux.Seccomp.DefaultAction != Seccomp().DefaultAction || !s.Process.NoNewPrivileges || !s.Root.Readonly {
		t.Errorf("runc: seccomp %v, no new privileges %v, read-only root %v", s.Linux.Seccomp != nil, s.Process.NoNewPrivileges, s.Root.Readonly)
	}
	mounts := map[string][]string{}
	for _, m := range s.Mounts {
		mounts[m.Destination] = m.Options
	}
	for dest, want := range map[string][]string{StoreMount: {"ro", "nosuid", "nodev", "noexec"}, OutMount: {"nosuid", "nodev", "noexec"}} {
		for _, o := range want {
			if !slices.Contains(mounts[dest], o) {
				t.Errorf("runc mount %s: %v, want %s", dest, mounts[dest], o)
			}
		}
	}

	p := &cliRuntime{name: "podman", bin: "podman", cfg: cfg, seccomp: "/tmp/profile.json",
		img: &Image{ID: v1.Hash{Algorithm: "sha256", Hex: strings.Repeat("0", 64)}}}
	cmd, err := p.Command(c)
	if err != nil {
		t.Fatal(err)
	}
	line := strings.Join(cmd.Args, " ")
	for _, want := range []string{
		"--memory 314572800b", "--memory-swap 314572800b", "--pids-limit 77",
		"--security-opt seccomp=/tmp/profile.json", "--security-opt no-new-privileges", "--read-only ",
		"destination=/store,readonly,nosuid,nodev,noexec", "destination=/out,nosuid,nodev,noexec",
		"--cgroup-parent /thv-test-1", "--ipc none", "--network none", "--cap-drop all",
	} {
		if !strings.Contains(line, want) {
			t.Errorf("podman command lacks %q:\n%s", want, line)
		}
	}
}

// TestSizeString: the sizes errors name.
func TestSizeString(t *testing.T) {
	if sizeString(64<<10) != "64 KiB" || sizeString(2<<30) != "2048 MiB" || sizeString(1000) != "1000 bytes" {
		t.Error("sizeString")
	}
}
