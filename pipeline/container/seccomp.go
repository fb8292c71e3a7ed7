package container

import (
	"encoding/json"
	"runtime"
	"slices"
	"syscall"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// The seccomp filter of every container, whatever the runtime: an
// allowlist. A syscall not named here fails with EPERM (runc turns the
// ones newer than any named here into ENOSYS, so that a C library falls
// back). Only the native ABI is allowed: no 32-bit or x32 calls.
//
// The list is Docker's and containers-common's default profile (what
// podman applies) cut down to what a static Go binary serving `thv
// exec-task` does — the Go runtime, file I/O in /store and /out, its
// pipes — and to what runc's own init does after loading the filter (a
// few file calls and execve; runc is Go too, linked with the C library).
// Left out because a worker never needs them: namespaces and mounts
// (unshare, setns, mount, pivot_root, chroot; clone with a namespace flag),
// tracing and other processes' memory (ptrace, process_vm_*), keys
// (keyctl, add_key), bpf, perf_event_open, personality, io_uring, memfd
// (an executable file outside every noexec mount), sockets, System V and
// POSIX IPC, changing identity (set*id, capset), ownership and extended
// attributes (chown, *xattr), device nodes, links, ioctl, the scheduler's
// settings, memory locking and NUMA, the clock, the kernel and modules.
var seccompAllow = []struct {
	why   string
	names []string
}{
	{"memory", []string{"brk", "madvise", "mincore", "mmap", "mprotect", "mremap", "msync", "munmap"}},
	{"threads and their synchronisation", []string{
		"arch_prctl", "exit", "exit_group", "futex", "futex_waitv", "gettid",
		"membarrier", "rseq", "sched_getaffinity", "sched_yield", "set_robust_list", "set_tid_address"}},
	{"signals", []string{
		"kill", "pidfd_open", "pidfd_send_signal", "restart_syscall", "rt_sigaction", "rt_sigpending",
		"rt_sigprocmask", "rt_sigreturn", "rt_sigsuspend", "rt_sigtimedwait", "sigaltstack", "tgkill", "tkill"}},
	{"time and timers", []string{
		"clock_getres", "clock_gettime", "clock_nanosleep", "getitimer", "gettimeofday", "nanosleep",
		"setitimer", "time", "timer_create", "timer_delete", "timer_getoverrun", "timer_gettime",
		"timer_settime", "timerfd_create", "timerfd_gettime", "timerfd_settime"}},
	{"the Go runtime's poller and pipes", []string{
		"epoll_create", "epoll_create1", "epoll_ctl", "epoll_pwait", "epoll_pwait2", "epoll_wait",
		"eventfd", "eventfd2", "pipe", "pipe2", "poll", "ppoll", "pselect6", "select"}},
	{"files: descriptors, reading and writing", []string{
		"close", "close_range", "copy_file_range", "dup", "dup2", "dup3", "fadvise64", "fallocate",
		"fcntl", "fdatasync", "flock", "fsync", "ftruncate", "lseek", "pread64", "preadv", "preadv2",
		"pwrite64", "pwritev", "pwritev2", "read", "readahead", "readv", "sendfile", "splice",
		"sync_file_range", "write", "writev"}},
	{"files: names, metadata, directories", []string{
		"access", "chdir", "chmod", "creat", "faccessat", "faccessat2", "fchdir", "fchmod", "fchmodat",
		"fchmodat2", "fstat", "fstatfs", "getcwd", "getdents", "getdents64", "lstat", "mkdir", "mkdirat",
		"newfstatat", "open", "openat", "openat2", "readlink", "readlinkat", "rename", "renameat",
		"renameat2", "rmdir", "stat", "statfs", "statx", "umask", "unlink", "unlinkat", "utimensat"}},
	{"processes: runc's init starts the worker with execve; Go's os/exec", []string{
		"execve", "getpgid", "getpgrp", "getpid", "getppid", "getsid", "wait4", "waitid"}},
	{"identity and limits, read only (prlimit64 and setrlimit can only lower them without a capability)", []string{
		"capget", "getegid", "geteuid", "getgid", "getgroups", "getresgid", "getresuid", "getuid",
		"getrlimit", "prlimit64", "setrlimit", "getrusage", "getcpu", "getpriority", "getrandom",
		"sysinfo", "times", "uname"}},
	{"process attributes: the Go runtime names its memory, runc's init sets its parent-death signal", []string{"prctl"}},
}

// cloneNamespaceFlags are clone's flags that make namespaces (CLONE_NEWNS,
// NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET): clone is allowed
// only without them (the Go runtime clones threads, os/exec processes).
const cloneNamespaceFlags = 0x7E020000

// Seccomp returns the filter every container gets, as runtime-spec
// configuration: runc takes it in config.json; podman and docker take the
// same JSON as a profile file (--security-opt seccomp=FILE), whose format
// is this one.
func Seccomp() *specs.LinuxSeccomp {
	var names []string
	for _, g := range seccompAllow {
		names = append(names, g.names...)
	}
	slices.Sort(names)
	eperm, enosys := uint(syscall.EPERM), uint(syscall.ENOSYS)
	flagsArg := uint(0)
	if runtime.GOARCH == "s390x" {
		flagsArg = 1 // clone(stack, flags, ...) there
	}
	return &specs.LinuxSeccomp{
		DefaultAction:   specs.ActErrno,
		DefaultErrnoRet: &eperm,
		Syscalls: []specs.LinuxSyscall{
			{Names: names, Action: specs.ActAllow},
			{Names: []string{"clone"}, Action: specs.ActAllow, Args: []specs.LinuxSeccompArg{
				{Index: flagsArg, Value: cloneNamespaceFlags, ValueTwo: 0, Op: specs.OpMaskedEqual}}},
			// clone3 passes its flags in memory, out of the filter's
			// reach: ENOSYS makes the C library (runc's init) fall back
			// to clone, as Docker's profile does. Go never uses it.
			{Names: []string{"clone3"}, Action: specs.ActErrno, ErrnoRet: &enosys},
		},
	}
}

// seccompProfileJSON is Seccomp as a podman/docker profile file.
func seccompProfileJSON() ([]byte, error) {
	return json.MarshalIndent(Seccomp(), "", "  ")
}
