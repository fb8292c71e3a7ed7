package slurm

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// elemState is one array element as squeue reports it.
type elemState struct {
	State  string // PENDING, RUNNING, COMPLETING, COMPLETED, FAILED, …
	Exit   int    // exit status of the batch script (raw wait status >> 8)
	Signal int    // the signal that ended it, if any
	Reason string
}

// terminal reports whether Slurm is done with an element in this state.
func terminal(state string) bool {
	switch state {
	case "COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY",
		"BOOT_FAIL", "DEADLINE", "PREEMPTED", "SPECIAL_EXIT", "REVOKED":
		return true
	}
	return false
}

func (s elemState) String() string {
	switch {
	case s.Signal != 0:
		return fmt.Sprintf("%s (signal %d)", s.State, s.Signal)
	case s.Exit != 0:
		return fmt.Sprintf("%s (exit %d)", s.State, s.Exit)
	}
	return s.State
}

// squeueFormat: one line per element (-r), finished ones included (-t
// all, for MinJobAge after they end). exit_code is the raw wait status.
const squeueFormat = "JobArrayID:|,State:|,exit_code:|,Reason:"

// queue asks squeue for the elements of the given jobs, keyed
// "JOBID_INDEX". Jobs Slurm no longer knows are simply absent.
func (c *cli) queue(jobs []string) (map[string]elemState, error) {
	out, err := c.run(context.Background(), "squeue", "-h", "-r", "-t", "all", "-j", strings.Join(jobs, ","), "-O", squeueFormat)
	if err != nil {
		if strings.Contains(err.Error(), "Invalid job id") {
			return map[string]elemState{}, nil // every job has left squeue
		}
		return nil, err
	}
	return parseQueue(out)
}

// parseQueue reads squeue lines "JOBID_INDEX|STATE|WAITSTATUS|REASON".
func parseQueue(out string) (map[string]elemState, error) {
	m := map[string]elemState{}
	for _, line := range strings.Split(out, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		f := strings.SplitN(line, "|", 4)
		if len(f) < 3 {
			return nil, fmt.Errorf("squeue printed %q, want JOBID_INDEX|STATE|EXIT|REASON", clip(line))
		}
		id := strings.TrimSpace(f[0])
		st := elemState{State: strings.TrimSpace(f[1])}
		// A state may carry a suffix (CANCELLED by 0 in some versions).
		st.State, _, _ = strings.Cut(st.State, " ")
		if w := strings.TrimSpace(f[2]); w != "" && w != "N/A" {
			ws, err := strconv.Atoi(w)
			if err != nil {
				return nil, fmt.Errorf("squeue printed exit code %q for %s: not a number", w, id)
			}
			st.Exit, st.Signal = ws>>8, ws&0x7f
		}
		if len(f) == 4 {
			st.Reason = strings.TrimSpace(f[3])
		}
		m[id] = st
	}
	return m, nil
}
