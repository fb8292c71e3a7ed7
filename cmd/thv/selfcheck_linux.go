package main

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// probeSyscalls attempts syscalls a worker never needs, each harmless even
// where it is allowed (as root on a host): a query, a call on a path or
// process that does not exist, or one that only makes a descriptor it
// closes. It reports how each failed. Several succeed or fail with
// another errno without a seccomp filter (personality and keyctl answer,
// socket and memfd_create give a descriptor, unshare of a user namespace
// fails with EINVAL in a multithreaded process): EPERM from all of them is
// the filter's default action.
func probeSyscalls() map[string]string {
	res := map[string]string{}
	try := func(name string, r1 uintptr, e syscall.Errno, fd bool) {
		if e != 0 {
			res[name] = errnoName(e)
			return
		}
		if fd {
			syscall.Close(int(r1))
		}
		res[name] = "allowed"
	}
	str := func(s string) uintptr { return uintptr(unsafe.Pointer(syscall.StringBytePtr(s))) }

	r1, _, e := syscall.RawSyscall(syscall.SYS_UNSHARE, syscall.CLONE_NEWUSER, 0, 0)
	try("unshare", r1, e, false)
	// A target that does not exist: where mount is allowed (root on a
	// host), it fails with ENOENT and mounts nothing.
	r1, _, e = syscall.RawSyscall6(syscall.SYS_MOUNT, str("none"), str("/.thv-probe-no-such-dir/x"), str("tmpfs"), syscall.MS_RDONLY, 0, 0)
	try("mount", r1, e, false)
	const keyctlGetKeyringID, keySpecSessionKeyring = 0, ^uintptr(2) // -3
	r1, _, e = syscall.RawSyscall(syscall.SYS_KEYCTL, keyctlGetKeyringID, keySpecSessionKeyring, 0)
	try("keyctl", r1, e, false)
	r1, _, e = syscall.RawSyscall(syscall.SYS_PERSONALITY, 0xffffffff, 0, 0) // a query
	try("personality", r1, e, false)
	r1, _, e = syscall.RawSyscall(syscall.SYS_SOCKET, syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	try("socket", r1, e, true)
	r1, _, e = syscall.RawSyscall(unix.SYS_MEMFD_CREATE, str("probe"), 1 /* MFD_CLOEXEC */, 0)
	try("memfd_create", r1, e, true)
	r1, _, e = syscall.RawSyscall(unix.SYS_BPF, 0 /* BPF_MAP_CREATE */, 0, 0)
	try("bpf", r1, e, false)
	r1, _, e = syscall.RawSyscall6(syscall.SYS_PERF_EVENT_OPEN, 0, 0, ^uintptr(0), ^uintptr(0), 0, 0)
	try("perf_event_open", r1, e, false)
	r1, _, e = syscall.RawSyscall(syscall.SYS_PTRACE, syscall.PTRACE_PEEKDATA, 1, 0) // of PID 1: the worker itself, or init
	try("ptrace", r1, e, false)

	// clone with a namespace flag: a child in a new user namespace.
	exe, err := os.Executable()
	if err == nil {
		cmd := exec.Command(exe, "--help")
		cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
		cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER}
		err = cmd.Start()
		if err == nil {
			cmd.Wait()
		}
	}
	var en syscall.Errno
	switch {
	case err == nil:
		res["clone(CLONE_NEWUSER)"] = "allowed"
	case errors.As(err, &en):
		res["clone(CLONE_NEWUSER)"] = errnoName(en)
	default:
		res["clone(CLONE_NEWUSER)"] = err.Error()
	}
	return res
}

func errnoName(e syscall.Errno) string {
	for _, n := range []struct {
		e    syscall.Errno
		name string
	}{{syscall.EPERM, "EPERM"}, {syscall.EACCES, "EACCES"}, {syscall.EINVAL, "EINVAL"},
		{syscall.EFAULT, "EFAULT"}, {syscall.ENOSYS, "ENOSYS"}, {syscall.ENOENT, "ENOENT"},
		{syscall.ESRCH, "ESRCH"}, {syscall.EBADF, "EBADF"}, {syscall.ENOKEY, "ENOKEY"}} {
		if e == n.e {
			return n.name
		}
	}
	return e.Error()
}

// fsSize is the size in bytes of the file system holding path.
func fsSize(path string) (uint64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		return 0, err
	}
	return st.Blocks * uint64(st.Bsize), nil
}

// blockThreads starts n goroutines, each locked to its own OS thread and
// blocked reading a pipe that is never written: n threads, which stay.
func blockThreads(n int) {
	var p [2]int
	if err := syscall.Pipe2(p[:], syscall.O_CLOEXEC); err != nil {
		return
	}
	started := make(chan struct{})
	for range n {
		go func() {
			runtime.LockOSThread()
			started <- struct{}{}
			var b [1]byte
			syscall.Read(p[0], b[:])
		}()
		<-started
	}
	time.Sleep(time.Second) // let the last ones enter read
}
