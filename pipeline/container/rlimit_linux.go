package container

import "golang.org/x/sys/unix"

// hostNproc is this process's limit on its user's processes.
func hostNproc() (cur, max uint64, ok bool) {
	var l unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NPROC, &l); err != nil {
		return 0, 0, false
	}
	return l.Cur, l.Max, true
}
