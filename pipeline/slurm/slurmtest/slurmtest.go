// Package slurmtest brings up the single-node Slurm cluster that thv's
// Slurm tests run against: cluster.sh (embedded here, and runnable by
// hand) started with a base directory and ports of the caller's, so that
// two test binaries can each have their own cluster.
package slurmtest

import (
	_ "embed"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

//go:embed cluster.sh
var script []byte

// Cluster is a running test cluster.
type Cluster struct {
	Base string   // its directory: slurm.conf, state, logs, pidfiles
	Conf string   // SLURM_CONF for clients
	Env  []string // this process's environment with SLURM_CONF set
	sh   string
	env  []string
}

// Missing says why the cluster cannot be brought up here ("" if it can):
// Slurm not installed, or not root.
func Missing() string {
	for _, b := range []string{"/usr/sbin/munged", "/usr/sbin/slurmctld", "/usr/sbin/slurmd", "/usr/bin/sbatch"} {
		if _, err := os.Stat(b); err != nil {
			return "Slurm is not installed (" + b + "): apt-get install -y --no-install-recommends slurmctld slurmd slurm-client munge"
		}
	}
	if os.Geteuid() != 0 {
		return "bringing up the test cluster needs root"
	}
	return ""
}

// Up brings up a cluster in base with the controller on port ctld and
// slurmd on ctld+1, and waits until its node is idle.
func Up(base string, ctld int) (*Cluster, error) {
	if err := os.MkdirAll(filepath.Dir(base), 0o755); err != nil {
		return nil, err
	}
	sh := base + ".cluster.sh"
	if err := os.WriteFile(sh, script, 0o755); err != nil {
		return nil, err
	}
	c := &Cluster{Base: base, Conf: filepath.Join(base, "slurm.conf"), sh: sh,
		env: append(os.Environ(), "SLURMCTLD_PORT="+strconv.Itoa(ctld), "SLURMD_PORT="+strconv.Itoa(ctld+1))}
	c.Env = append(withoutConf(os.Environ()), "SLURM_CONF="+c.Conf)
	sweepStale(base, c.env)
	if _, err := c.Script("up"); err != nil {
		c.Script("down")
		return nil, err
	}
	return c, nil
}

func withoutConf(env []string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, "SLURM_CONF=") {
			out = append(out, kv)
		}
	}
	return out
}

// Script runs cluster.sh with a command (up, down, status,
// slurmd-start) on this cluster.
func (c *Cluster) Script(cmd string) (string, error) {
	x := exec.Command(c.sh, cmd, c.Base)
	x.Env = c.env
	out, err := x.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("cluster.sh %s %s: %v\n%s", cmd, c.Base, err, out)
	}
	return string(out), nil
}

// Command runs a Slurm client command against the cluster.
func (c *Cluster) Command(name string, args ...string) (string, error) {
	x := exec.Command(name, args...)
	x.Env = c.Env
	out, err := x.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// SlurmdPID is the PID of the running slurmd.
func (c *Cluster) SlurmdPID() (int, error) {
	b, err := os.ReadFile(filepath.Join(c.Base, "run", "slurmd.pid"))
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(b)))
}

// Down stops the cluster (its jobs cancelled, its daemons by their PIDs)
// and removes its files.
func (c *Cluster) Down() error {
	_, err := c.Script("down")
	os.Remove(c.sh)
	if err == nil {
		os.RemoveAll(c.Base)
	}
	return err
}
