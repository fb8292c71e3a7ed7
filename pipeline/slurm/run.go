package slurm

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"thv/artifacts"
	"thv/artifacts/flock"
)

// runsDir is where runs keep their files, below the store root.
const runsDir = "slurm"

// doneFile marks a run that ended cleanly but kept its files (an element
// failed): there is nothing of it to cancel.
const doneFile = "done"

// runRecord is the first line of jobs.jsonl: whose run this is.
type runRecord struct {
	Run     string `json:"run"`
	JobName string `json:"job_name"`
	Host    string `json:"host"`
	PID     int    `json:"pid"`
	Started string `json:"started"`
}

// jobRecord is each further line of jobs.jsonl: one submitted array.
type jobRecord struct {
	ID       string            `json:"id"`
	Dir      string            `json:"dir"`
	Elements [][]artifacts.Key `json:"elements"` // the keys of each element's tasks
}

// journal is jobs.jsonl, appended to after every submission: which jobs
// and tasks were this run's, for people and tools. One write per line,
// synced; a reader skips a torn last line. Appending keeps the cost of a
// submission independent of how many came before (rewriting a JSON file
// would be quadratic over the paper's hundreds of arrays).
type journal struct{ f *os.File }

func openJournal(dir string, head runRecord) (*journal, error) {
	f, err := os.OpenFile(filepath.Join(dir, "jobs.jsonl"), os.O_WRONLY|os.O_CREATE|os.O_APPEND|os.O_EXCL, 0o644)
	if err != nil {
		return nil, err
	}
	j := &journal{f}
	if err := j.add(head); err != nil {
		f.Close()
		return nil, err
	}
	return j, nil
}

func (j *journal) add(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if _, err := j.f.Write(append(b, '\n')); err != nil {
		return err
	}
	return j.f.Sync()
}

func (j *journal) close() error { return j.f.Close() }

// newRunID names a run: a UTC time for people, random bytes for
// uniqueness (two runs may start in the same second).
func newRunID() string {
	var b [3]byte
	rand.Read(b[:])
	return time.Now().UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
}

// jobName is the Slurm job name of a run's arrays: scancel filters on it,
// so that a job ID recycled by the cluster is never cancelled by mistake.
func jobName(run string) string { return "thv-" + run }

// reapDeadRuns cancels the leftover jobs of earlier runs on this store
// whose thv is gone (their owner.lock can be taken) and removes their
// directories. Their completed tasks are in the store; the rest will be
// submitted again by this run. Runs whose owner lives (another thv on the
// same store) are left alone. It returns what it cancelled, for a warning.
func reapDeadRuns(root string, sl *cli) (reaped []string, err error) {
	entries, err := os.ReadDir(root)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		dir := filepath.Join(root, e.Name())
		if _, err := os.Stat(filepath.Join(dir, doneFile)); err == nil {
			continue // ended cleanly; kept for its logs
		}
		lock, held, err := tryOwnerLock(dir)
		if err != nil || held {
			continue // alive, or not ours to judge
		}
		if err := sl.cancelByName(jobName(e.Name()), nil); err != nil {
			lock.Close()
			return reaped, fmt.Errorf("cancelling the jobs of the earlier run %s: %w", e.Name(), err)
		}
		reaped = append(reaped, e.Name())
		os.RemoveAll(dir)
		lock.Close()
	}
	return reaped, nil
}

// tryOwnerLock takes dir/owner.lock exclusively without waiting: held is
// true when another process has it.
func tryOwnerLock(dir string) (f *os.File, held bool, err error) {
	f, err = os.OpenFile(filepath.Join(dir, "owner.lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, false, err
	}
	if !flock.Supported {
		f.Close()
		return nil, false, errors.New("slurm executor: needs flock (a unix system)")
	}
	ok, err := flock.TryAcquire(f, true)
	if err != nil {
		f.Close()
		return nil, false, err
	}
	if !ok {
		f.Close()
		return nil, true, nil
	}
	return f, false, nil
}
