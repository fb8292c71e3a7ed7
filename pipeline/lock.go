package pipeline

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime"
	"sync"

	"thv/artifacts"
)

// A lock file (the protocol names it: thv.lock for the paper's profile)
// records, for every task of the DAG, its key, parameters, input and
// output digests, plus the hash of every code unit (in-module package,
// third-party module, toolchain) its tasks ran. It is meant to be
// committed: a fresh clone can tell what the artifacts should be, and
// `thv status` explains staleness against it. Its bytes depend only on the
// protocol and the code (no times, no hosts), one task per line so diffs read
// well.

// Record is one task's line in the lock file.
type Record struct {
	ID     string          `json:"id"`
	Kind   string          `json:"kind"`
	Key    artifacts.Key   `json:"key"`
	Params json.RawMessage `json:"params"`
	// Inputs maps role → digest. It is kept as raw JSON and decoded only to
	// explain staleness (InputDigests): the no-op path never needs it.
	Inputs  json.RawMessage             `json:"inputs,omitempty"`
	Outputs map[string]artifacts.Digest `json:"outputs"`
}

// InputDigests decodes the record's inputs (role → digest).
func (r *Record) InputDigests() map[string]string {
	m := map[string]string{}
	if len(r.Inputs) > 0 {
		json.Unmarshal(r.Inputs, &m)
	}
	return m
}

// Lock is the content of a lock file.
type Lock struct {
	Version int    `json:"version"`
	Profile string `json:"profile"`
	// Image is provenance: the digest of the container image that ran the
	// pass which wrote the lock (absent when its tasks ran outside a
	// container). It enters no key: every executor gives the same outputs.
	Image string            `json:"image,omitempty"`
	Code  map[string]string `json:"code"` // code unit → hash when the tasks last ran
	Tasks []Record          `json:"tasks"`

	byID     map[string]*Record
	digest   artifacts.Digest // SHA-256 of the file's bytes, as read or written
	complete bool             // every record comes from the pass that wrote it (see seal.go)
}

const lockVersion = 2

// ReadLock reads a lock file; a missing file is an empty lock.
func ReadLock(path string) (*Lock, error) { return ReadLockEarly(path, nil) }

// ReadLockEarly is ReadLock that, if early is not nil, calls it with the
// file's bytes and their SHA-256 as soon as the sum is known, while the
// bytes are still being parsed (StartNoopCheck starts the no-op
// certificate's checks that way). early must not modify b, and returns
// before ReadLockEarly does.
func ReadLockEarly(path string, early func(b []byte, sum artifacts.Digest)) (*Lock, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &Lock{Version: lockVersion, Code: map[string]string{}, byID: map[string]*Record{}}, nil
	}
	if err != nil {
		return nil, err
	}
	l, err := decodeLock(b, early)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return l, nil
}

// decodeLock decodes and validates the bytes of a lock file (early: as
// ReadLockEarly).
func decodeLock(b []byte, early func([]byte, artifacts.Digest)) (*Lock, error) {
	sum := make(chan artifacts.Digest, 1)
	go func() { // the seal is looked up by it
		d := artifacts.Sum(b)
		if early != nil {
			early(b, d) // before the send: it returns before decodeLock does
		}
		sum <- d
	}()
	l, err := parseLock(b)
	if err == nil {
		err = l.validate()
	}
	digest := <-sum
	if err != nil {
		return nil, fmt.Errorf("not a valid lock file (%v); delete it to start afresh — the store still holds the artifacts", err)
	}
	if l.Version != lockVersion {
		return nil, fmt.Errorf("lock version %d, this thv writes version %d; delete it to start afresh", l.Version, lockVersion)
	}
	if l.Code == nil {
		l.Code = map[string]string{}
	}
	l.digest = digest // validate indexed l
	return l, nil
}

// validate checks what a lock read from disk could do harm with: every
// output name becomes a file name (results/), so each must be one safe
// path component; task IDs must be unique. It indexes l by ID.
func (l *Lock) validate() error {
	if l.Image != "" {
		if _, err := artifacts.ParseDigest(l.Image); err != nil {
			return fmt.Errorf("image: %v", err)
		}
	}
	// The index by ID is built here, where repeated IDs are found; each
	// distinct output name (a few, on thousands of lines) is checked once.
	byID := make(map[string]*Record, len(l.Tasks))
	valid := map[string]bool{}
	for i := range l.Tasks {
		r := &l.Tasks[i]
		if _, dup := byID[r.ID]; r.ID == "" || dup {
			return fmt.Errorf("task line %d: empty or repeated task ID %q", i+1, r.ID)
		}
		byID[r.ID] = r
		for name := range r.Outputs {
			if valid[name] {
				continue
			}
			if err := ValidName(name); err != nil {
				return fmt.Errorf("task %s: output %w", r.ID, err)
			}
			valid[name] = true
		}
	}
	l.byID = byID
	return nil
}

// lockTasksMarker ends the head of a lock in Write's layout; one task per
// line follows.
const lockTasksMarker = "\"tasks\": [\n"

// parseLock decodes a lock file. Files in Write's layout (one task per
// line) are decoded line by line on all cores, which keeps the no-op path
// fast on the paper's 8,000-task lock; anything else goes through
// json.Unmarshal as a whole.
func parseLock(b []byte) (*Lock, error) {
	head, body, ok := bytes.Cut(b, []byte(lockTasksMarker))
	if !ok || !bytes.HasSuffix(body, []byte("]}\n")) {
		var l Lock
		return &l, json.Unmarshal(b, &l)
	}
	var l Lock
	if err := json.Unmarshal(append(append([]byte(nil), head...), "\"tasks\": []}"...), &l); err != nil {
		return nil, err
	}
	lines := bytes.Split(bytes.TrimSuffix(body, []byte("]}\n")), []byte("\n"))
	if n := len(lines); n > 0 && len(lines[n-1]) == 0 {
		lines = lines[:n-1]
	}
	l.Tasks = make([]Record, len(lines))
	workers := min(runtime.NumCPU(), 8)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			var p lineParser
			for i := w; i < len(lines); i += workers {
				line := bytes.TrimSuffix(lines[i], []byte(","))
				if p.record(line, &l.Tasks[i]) {
					continue
				}
				l.Tasks[i] = Record{}
				if err := json.Unmarshal(line, &l.Tasks[i]); err != nil {
					errs[w] = fmt.Errorf("task line %d: %v", i+1, err)
					return
				}
			}
		}(w)
	}
	wg.Wait()
	return &l, errors.Join(errs...)
}

func (l *Lock) index() {
	l.byID = make(map[string]*Record, len(l.Tasks))
	for i := range l.Tasks {
		l.byID[l.Tasks[i].ID] = &l.Tasks[i]
	}
}

// Record returns the record of a task ID.
func (l *Lock) Record(id string) (*Record, bool) {
	r, ok := l.byID[id]
	return r, ok
}

// Write writes the lock to path atomically (artifacts.WriteFileAtomic).
func (l *Lock) Write(path string) error {
	b, err := l.encode()
	if err != nil {
		return err
	}
	if err := artifacts.WriteFileAtomic(path, b); err != nil {
		return err
	}
	l.digest = artifacts.Sum(b)
	return nil
}

// encode lays the lock out one task per line.
func (l *Lock) encode() ([]byte, error) {
	var buf bytes.Buffer
	w := bufio.NewWriter(&buf)
	code, _ := json.Marshal(l.Code)
	fmt.Fprintf(w, "{\"version\": %d,\n\"profile\": %q,\n", l.Version, l.Profile)
	if l.Image != "" {
		fmt.Fprintf(w, "\"image\": %q,\n", l.Image)
	}
	fmt.Fprintf(w, "\"code\": %s,\n\"tasks\": [\n", code)
	for i, r := range l.Tasks {
		line, err := json.Marshal(r)
		if err != nil {
			return nil, err
		}
		w.Write(line)
		if i < len(l.Tasks)-1 {
			w.WriteString(",")
		}
		w.WriteString("\n")
	}
	w.WriteString("]}\n")
	w.Flush()
	return buf.Bytes(), nil
}

// Digest is the SHA-256 of the lock file's bytes as this lock was read or
// written (zero for a lock that was neither: a missing file's).
func (l *Lock) Digest() artifacts.Digest { return l.digest }
