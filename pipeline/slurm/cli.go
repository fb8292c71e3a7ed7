package slurm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"
)

// cli runs the Slurm client commands. Shelling out is the portable way:
// no Go client speaks the REST API of the Slurm versions clusters run
// (see docs/cluster.md), and the commands' output formats used here are
// stable across versions.
type cli struct {
	env []string // nil: this process's environment
}

// cmdTimeout bounds one client command: a controller that does not answer
// is retried by the poller, never waited on forever.
const cmdTimeout = 60 * time.Second

func (c *cli) run(ctx context.Context, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, cmdTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = c.env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if err != nil {
		var ee *exec.Error
		if errors.As(err, &ee) {
			return "", fmt.Errorf("%s not found: install the Slurm client commands (Debian: apt-get install slurm-client) or run thv where they are", name)
		}
		msg := strings.TrimSpace(errb.String())
		if msg == "" {
			msg = strings.TrimSpace(out.String())
		}
		return "", fmt.Errorf("%s %s: %v: %s", name, strings.Join(clipArgs(args), " "), err, msg)
	}
	return out.String(), nil
}

// clipArgs keeps an error message short when a command had many job IDs.
func clipArgs(args []string) []string {
	if len(args) > 8 {
		return append(args[:8:8], fmt.Sprintf("… (%d more)", len(args)-8))
	}
	return args
}

// transient are sbatch messages of a busy or restarting controller, after
// which a submission is retried.
var transient = []string{"Socket timed out", "Resource temporarily unavailable", "Unable to contact slurm controller", "Slurm temporarily unable"}

// submit runs sbatch --parsable with args and returns the job ID. A busy
// controller is retried twice; should a lost answer hide a submission
// that succeeded, the second array runs the same specs into the same files
// and stores the same bytes, and the first array's elements are cancelled
// with the run.
func (c *cli) submit(args []string) (string, error) {
	var out string
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		if attempt > 0 {
			time.Sleep(time.Duration(attempt) * 2 * time.Second)
		}
		out, err = c.run(context.Background(), "sbatch", append([]string{"--parsable"}, args...)...)
		if err == nil || !slices.ContainsFunc(transient, func(m string) bool { return strings.Contains(err.Error(), m) }) {
			break
		}
	}
	if err != nil {
		return "", err
	}
	id, _, _ := strings.Cut(strings.TrimSpace(out), ";") // jobid[;cluster]
	if _, err := strconv.ParseUint(id, 10, 64); err != nil {
		return "", fmt.Errorf("sbatch printed %q, not a job ID", clip(out))
	}
	return id, nil
}

// cancelByName cancels the given jobs (job IDs or JOB_INDEX elements) that
// carry name; with no IDs, every job of that name.
func (c *cli) cancelByName(name string, ids []string) error {
	args := append([]string{"--name=" + name}, ids...)
	_, err := c.run(context.Background(), "scancel", args...)
	return err
}

// maxArraySize reads MaxArraySize from the controller (default 1001:
// indices 0..1000).
func (c *cli) maxArraySize() int {
	out, err := c.run(context.Background(), "scontrol", "show", "config")
	if err != nil {
		return 1001
	}
	for _, line := range strings.Split(out, "\n") {
		k, v, ok := strings.Cut(line, "=")
		if ok && strings.TrimSpace(k) == "MaxArraySize" {
			if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n > 0 {
				return n
			}
		}
	}
	return 1001
}

func clip(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}
