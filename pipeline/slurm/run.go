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
	"thv/pipeline"
)

// runsDir is where runs keep their files, below the store root.
const runsDir = "slurm"

// doneFile marks a run that ended cleanly but kept its files (an element
// failed): there is nothing of it to cancel.
const doneFile = "done"

// runRecord is jobs.json: what a run submitted, rewritten atomically after
// every submission so that a later run (or a person) can tell which jobs
// and tasks were this run's.
type runRecord struct {
	Run     string      `json:"run"`
	JobName string      `json:"job_name"`
	Host    string      `json:"host"`
	PID     int         `json:"pid"`
	Started string      `json:"started"`
	Jobs    []jobRecord `json:"jobs"`
}

type jobRecord struct {
	ID       string            `json:"id"`
	Dir      string            `json:"dir"`
	Elements [][]artifacts.Key `json:"elements"` // the keys of each element's tasks
}

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

// writeRecord writes jobs.json atomically.
func writeRecord(dir string, rec *runRecord) error {
	b, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	return pipeline.WriteFileAtomic(filepath.Join(dir, "jobs.json"), append(b, '\n'))
}

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
	ok, err := flockNB(f)
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
