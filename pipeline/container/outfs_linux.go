package container

import (
	"fmt"
	"syscall"
)

// The scratch store the workers write (/out in every container) is a
// tmpfs of OutLimit bytes that the host mounts over the scratch directory
// before any worker starts, nosuid, nodev and noexec, owned by the
// containers' user: a worker that fills it gets ENOSPC, whatever the
// runtime, and a bind mount of it keeps those flags. Its pages are
// charged to the memory cgroup of the worker that writes them, so a
// worker's outputs in /out count toward its memory ceiling until the
// executor closes. Close unmounts it: what the workers wrote is gone.

// mountOut mounts the tmpfs on dir.
func mountOut(dir string, size int64) error {
	// One inode per page at most: a file takes a page unless it is
	// empty, and a flood of empty files is bounded too.
	opts := fmt.Sprintf("size=%d,nr_inodes=%d,mode=0755,uid=%d,gid=%d", size, max(size/4096, 1024), UID, GID)
	if err := syscall.Mount("thv-out", dir, "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV|syscall.MS_NOEXEC, opts); err != nil {
		return fmt.Errorf("mounting a tmpfs of %d bytes on the scratch store %s: %w (the container executor needs root)", size, dir, err)
	}
	return nil
}

// unmountOut unmounts it; a mount still busy (a worker the runtime failed
// to remove) is detached, and goes when its last user does.
func unmountOut(dir string) error {
	err := syscall.Unmount(dir, 0)
	if err == syscall.EBUSY {
		err = syscall.Unmount(dir, syscall.MNT_DETACH)
	}
	if err != nil {
		return fmt.Errorf("unmounting the scratch store %s: %w", dir, err)
	}
	return nil
}
