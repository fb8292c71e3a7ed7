package tempdir

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"thv/internal/mountinfo"
)

// umountNoFollow is UMOUNT_NOFOLLOW: do not follow a link at the target.
const umountNoFollow = 0x8

// mountsBelow lists the mount points at or below root in this process's
// mount namespace (/proc/self/mountinfo), in the reverse of their order
// there: a mount stacked on, or nested in, another comes after it, and must
// be unmounted first.
func mountsBelow(root string) ([]string, error) {
	real, err := filepath.EvalSymlinks(root) // mountinfo names resolved paths
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil // nothing left to unmount or remove
	}
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, fmt.Errorf("listing mounts: %w", err)
	}
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		// ID parentID major:minor root mountpoint options …
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 {
			continue
		}
		p := mountinfo.Unescape(fields[4])
		if p == real || strings.HasPrefix(p, real+"/") {
			out = append(out, p)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("listing mounts: %w", err)
	}
	slices.Reverse(out)
	return out, nil
}

// unmount detaches the mount at target (root may; others get EPERM).
func unmount(target string) error {
	return syscall.Unmount(target, syscall.MNT_DETACH|umountNoFollow)
}
