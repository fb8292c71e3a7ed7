package container

import (
	"fmt"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// What every container gets besides its mounts, whatever the runtime:
// runc takes these in its runtime spec (runc.go), podman and docker as
// flags (cli.go). TestContainerConfinement holds the runtimes to the same
// probe from inside.

// Hostname is every container's host name.
const Hostname = "thv"

// maskedPaths and readonlyPaths hide or freeze the parts of /proc that
// describe the host or could change it: podman's defaults, which podman
// applies itself and runc is given.
var (
	maskedPaths = []string{"/proc/acpi", "/proc/kcore", "/proc/keys", "/proc/latency_stats",
		"/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug", "/proc/scsi",
		"/sys/firmware", "/sys/fs/selinux", "/sys/dev/block"}
	readonlyPaths = []string{"/proc/asound", "/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"}
)

// emptyMountOptions make the empty, read-only tmpfs mounted over
// /dev/mqueue: podman mounts the IPC namespace's message queues there,
// which anyone may create, and a worker needs nothing writable but /out.
var emptyMountOptions = []string{"ro", "nosuid", "nodev", "noexec", "size=4k", "mode=0555"}

// nofile is the worker's limit on open files (soft and hard): it needs a
// handful.
const nofile = 1024

// maxNproc caps the worker's RLIMIT_NPROC: rootful podman runs its
// containers under 32768 (its own limit and conmon's), and without
// CAP_SYS_RESOURCE (a confined host) no runtime can raise a limit.
const maxNproc = 32768

// rlimits are the worker's resource limits: nofile, and nproc as this
// process has it, at most maxNproc. nproc counts the processes of the
// user on the whole host, every container's together, so it is left
// high; the pids cgroup limit bounds each container's processes.
func rlimits() []specs.POSIXRlimit {
	r := []specs.POSIXRlimit{{Type: "RLIMIT_NOFILE", Soft: nofile, Hard: nofile}}
	if cur, hard, ok := hostNproc(); ok {
		r = append(r, specs.POSIXRlimit{Type: "RLIMIT_NPROC", Soft: min(cur, maxNproc), Hard: min(hard, maxNproc)})
	}
	return r
}

// ulimitFlags are rlimits as podman's and docker's --ulimit flags.
func ulimitFlags() []string {
	var flags []string
	for _, r := range rlimits() {
		name := map[string]string{"RLIMIT_NOFILE": "nofile", "RLIMIT_NPROC": "nproc"}[r.Type]
		flags = append(flags, "--ulimit", fmt.Sprintf("%s=%s:%s", name, rlimitValue(r.Soft), rlimitValue(r.Hard)))
	}
	return flags
}

func rlimitValue(v uint64) string {
	if v == ^uint64(0) { // RLIM_INFINITY
		return "-1"
	}
	return fmt.Sprint(v)
}
