//go:build unix

package slurmtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// TestSweepStale: a cluster left by a killed test binary (its PID gone,
// a daemon still running from its pidfile) is stopped and removed when
// the next cluster of the same prefix comes up; one whose test binary
// is alive, and a directory of another prefix, are left alone.
func TestSweepStale(t *testing.T) {
	dir := t.TempDir()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	daemon := func() *exec.Cmd {
		c := exec.Command("sleep", "60")
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Process.Kill(); c.Wait() })
		return c
	}
	cluster := func(name string, d *exec.Cmd) string {
		base := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Join(base, "run"), 0o755); err != nil {
			t.Fatal(err)
		}
		pidfile := filepath.Join(base, "run", "slurmctld.pid")
		if err := os.WriteFile(pidfile, []byte(strconv.Itoa(d.Process.Pid)+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return base
	}
	staleDaemon, liveDaemon, otherDaemon := daemon(), daemon(), daemon()
	stale := cluster(fmt.Sprintf("thv-slurm-cli-%d", dead.Process.Pid), staleDaemon)
	live := cluster(fmt.Sprintf("thv-slurm-cli-%d", os.Getpid()), liveDaemon)
	other := cluster(fmt.Sprintf("thv-slurm-pkg-%d", dead.Process.Pid), otherDaemon)

	// cluster.sh down asks squeue for the jobs to cancel first; these
	// clusters have none (and no slurm.conf, on which squeue would retry
	// for a minute), so a squeue that lists none stands in.
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "squeue"), []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))

	exited := make(chan error, 1)
	go func() { exited <- staleDaemon.Wait() }()
	sweepStale(filepath.Join(dir, "thv-slurm-cli-1"), env)

	select {
	case <-exited:
	case <-time.After(15 * time.Second):
		t.Fatal("the stale cluster's daemon is still running")
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("the stale cluster's directory is still there: %v", err)
	}
	for _, keep := range []string{live, other} {
		if _, err := os.Stat(keep); err != nil {
			t.Errorf("%s was removed: %v", keep, err)
		}
	}
	for _, d := range []*exec.Cmd{liveDaemon, otherDaemon} {
		if !alive(d.Process.Pid) {
			t.Errorf("daemon %d of a cluster to keep was stopped", d.Process.Pid)
		}
	}
}
