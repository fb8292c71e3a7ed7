//go:build unix

package slurmtest

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// sweepStale stops the clusters that test binaries killed before their
// cleanup left behind beside base: a base is named <prefix>-<PID of the
// test binary> (thv-slurm-cli-1234), and a sibling with the same prefix
// whose PID is gone still holds the ports its daemons bound, which the
// next cluster on those ports could not bind ("Address already in use").
// Each is stopped by the PIDs in its own pidfiles (cluster.sh down) and
// removed. A PID that is alive (its test still running, or the PID
// reused) leaves its sibling alone.
func sweepStale(base string, env []string) {
	dir, name := filepath.Split(base)
	cut := strings.LastIndexByte(name, '-')
	if cut < 0 {
		return
	}
	prefix := name[:cut+1]
	matches, _ := filepath.Glob(filepath.Join(dir, prefix+"*"))
	for _, m := range matches {
		pid, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(m), prefix))
		if err != nil || pid <= 0 || m == filepath.Clean(base) || alive(pid) {
			continue
		}
		if fi, err := os.Lstat(m); err != nil || !fi.IsDir() {
			continue
		}
		sh := m + ".cluster.sh"
		if err := os.WriteFile(sh, script, 0o755); err != nil {
			continue
		}
		x := exec.Command(sh, "down", m)
		x.Env = env
		if x.Run() == nil {
			os.RemoveAll(m)
		}
		os.Remove(sh)
	}
}

// alive reports whether a process with this PID exists (EPERM: it
// exists, and is another user's).
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
