package container

import (
	"encoding/json"
	"reflect"
	"syscall"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// TestSeccompProfile: the filter is an allowlist whose default refuses
// with EPERM; it allows none of the syscalls a worker never needs, each
// name once; clone only without namespace flags; clone3 gives ENOSYS; and
// the profile file podman reads is the very filter runc is given.
func TestSeccompProfile(t *testing.T) {
	s := Seccomp()
	if s.DefaultAction != specs.ActErrno || s.DefaultErrnoRet == nil || *s.DefaultErrnoRet != uint(syscall.EPERM) {
		t.Fatalf("default action %s (errno %v), want ERRNO(EPERM)", s.DefaultAction, s.DefaultErrnoRet)
	}
	allowed := map[string]specs.LinuxSyscall{}
	for _, r := range s.Syscalls {
		for _, n := range r.Names {
			if _, dup := allowed[n]; dup {
				t.Errorf("syscall %s named twice", n)
			}
			allowed[n] = r
		}
	}
	never := []string{
		"mount", "umount", "umount2", "pivot_root", "chroot", "unshare", "setns", "fsopen", "fsmount", "move_mount", "open_tree", "mount_setattr",
		"ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd",
		"keyctl", "add_key", "request_key", "bpf", "perf_event_open", "personality", "userfaultfd",
		"io_uring_setup", "io_uring_enter", "io_uring_register", "memfd_create", "memfd_secret",
		"socket", "socketpair", "connect", "bind", "listen", "accept", "accept4", "sendto", "recvfrom", "sendmsg", "recvmsg",
		"msgget", "semget", "shmget", "shmat", "mq_open",
		"setuid", "setgid", "setreuid", "setresuid", "setgroups", "setfsuid", "capset",
		"chown", "fchown", "fchownat", "lchown", "setxattr", "fsetxattr", "lsetxattr",
		"mknod", "mknodat", "link", "linkat", "symlink", "symlinkat", "ioctl",
		"sched_setaffinity", "sched_setscheduler", "sched_setattr", "setpriority", "mlock", "mlockall", "mbind", "set_mempolicy", "migrate_pages", "move_pages",
		"settimeofday", "clock_settime", "adjtimex", "clock_adjtime", "reboot", "kexec_load", "kexec_file_load",
		"init_module", "finit_module", "delete_module", "swapon", "swapoff", "acct", "quotactl", "syslog", "sethostname", "setdomainname",
		"iopl", "ioperm", "name_to_handle_at", "open_by_handle_at", "lookup_dcookie", "fanotify_init", "vhangup", "execveat", "vfork", "fork",
	}
	for _, n := range never {
		if r, ok := allowed[n]; ok && r.Action == specs.ActAllow {
			t.Errorf("%s is allowed: a worker never needs it", n)
		}
	}
	// What the workers of the quick profile called, measured with
	// strace -f (--executor process, 2 workers, 2,538 tasks).
	measured := []string{"arch_prctl", "close", "dup3", "epoll_create1", "epoll_ctl", "epoll_pwait", "eventfd2",
		"execve", "exit_group", "fchmod", "fcntl", "flock", "fstat", "fsync", "futex", "getdents64", "getpid",
		"getrandom", "gettid", "madvise", "mkdirat", "mmap", "nanosleep", "newfstatat", "openat", "prctl", "pread64",
		"prlimit64", "read", "readlinkat", "renameat", "rt_sigaction", "rt_sigprocmask", "rt_sigreturn",
		"sched_getaffinity", "sched_yield", "sigaltstack", "tgkill", "write"} // and clone, below
	for _, n := range measured {
		if r, ok := allowed[n]; !ok || r.Action != specs.ActAllow || len(r.Args) != 0 {
			t.Errorf("%s is not allowed unconditionally: a worker calls it", n)
		}
	}
	clone := allowed["clone"]
	if clone.Action != specs.ActAllow || len(clone.Args) != 1 || clone.Args[0].Op != specs.OpMaskedEqual ||
		clone.Args[0].Value != cloneNamespaceFlags || clone.Args[0].ValueTwo != 0 {
		t.Errorf("clone: %+v, want allowed only when (flags & %#x) == 0", clone, cloneNamespaceFlags)
	}
	if c3 := allowed["clone3"]; c3.Action != specs.ActErrno || c3.ErrnoRet == nil || *c3.ErrnoRet != uint(syscall.ENOSYS) {
		t.Errorf("clone3: %+v, want ERRNO(ENOSYS)", c3)
	}
	for _, g := range seccompAllow {
		if g.why == "" || len(g.names) == 0 {
			t.Errorf("group %+v: each group says why", g)
		}
	}

	// podman's profile file: the same filter, in runtime-spec's JSON,
	// which containers-common reads field for field.
	b, err := seccompProfileJSON()
	if err != nil {
		t.Fatal(err)
	}
	var back specs.LinuxSeccomp
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(&back, s) {
		t.Fatalf("the profile file is another filter:\n%s", b)
	}
	var keys map[string]json.RawMessage
	json.Unmarshal(b, &keys)
	for _, k := range []string{"defaultAction", "defaultErrnoRet", "syscalls"} {
		if _, ok := keys[k]; !ok {
			t.Errorf("the profile file has no %q: %s", k, b)
		}
	}
}
