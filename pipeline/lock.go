package pipeline

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"io/fs"
	"os"
	"runtime"
	"runtime/trace"
	"slices"
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
	Inputs  json.RawMessage `json:"inputs,omitempty"`
	Outputs Outputs         `json:"outputs"`
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
	Image string `json:"image,omitempty"`
	// Protocol is provenance too: the protocol the tasks were planned
	// from, as the planner describes it (Project.Protocol).
	Protocol *LockProtocol     `json:"protocol,omitempty"`
	Code     map[string]string `json:"code"` // code unit → hash when the tasks last ran
	Tasks    []Record          `json:"tasks"`

	byID      map[string]*Record // built by index, or by Record when first asked
	indexOnce sync.Once
	digest    artifacts.Digest // SHA-256 of the file's bytes, as read or written
	complete  bool             // every record comes from the pass that wrote it (see seal.go)

	// byLine: parsed line by line, where the fast parser checked the
	// output names of every record but those of unchecked (validate).
	byLine    bool
	unchecked []int
}

// LockProtocol is what a lock says of the protocol its plan was built
// from: the digest of its values and how they differ from the protocol's
// reference (a paper's), in the planner's words. It enters no key.
type LockProtocol struct {
	Digest  string   `json:"digest"`
	Differs []string `json:"differs,omitempty"`
}

// equal reports whether p and q say the same.
func (p *LockProtocol) equal(q *LockProtocol) bool {
	if p == nil || q == nil {
		return p == q
	}
	return p.Digest == q.Digest && slices.Equal(p.Differs, q.Differs)
}

const lockVersion = 2

// ReadLock reads a lock file; a missing file is an empty lock.
func ReadLock(path string) (*Lock, error) {
	b, sum, err := readHashed(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &Lock{Version: lockVersion, Code: map[string]string{}, byID: map[string]*Record{}}, nil
	}
	if err != nil {
		return nil, err
	}
	l, err := decodeHashed(b, sum)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return l, nil
}

// readChunk is how much readHashed reads before handing the bytes to the
// hash: small enough that the hash ends soon after the read, large enough
// to take few system calls.
const readChunk = 1 << 20

// readHashed reads the file at path whole, as os.ReadFile does, and
// computes the SHA-256 of its bytes on another goroutine while they are
// read, chunk by chunk: reading a 57 MB lock and hashing it take about as
// long each, and the no-op certificate is looked up by the sum (the
// channel delivers it once, after a nil error).
func readHashed(path string) ([]byte, <-chan artifacts.Digest, error) {
	defer trace.StartRegion(context.Background(), "lock read").End()
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	size := 0
	if fi, err := f.Stat(); err == nil && fi.Size() < 1<<40 {
		size = int(fi.Size())
	}
	chunks := make(chan []byte, 16)
	sum := make(chan artifacts.Digest, 1)
	go func() {
		h := sha256.New()
		for c := range chunks {
			h.Write(c)
		}
		var d artifacts.Digest
		h.Sum(d[:0])
		sum <- d
	}()
	b := make([]byte, 0, size+1) // +1: EOF is seen without growing
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)] // the file grew: let append size it
		}
		n, err := f.Read(b[len(b):min(cap(b), len(b)+readChunk)])
		if n > 0 {
			chunks <- b[len(b) : len(b)+n : len(b)+n] // bytes read are never written again
			b = b[:len(b)+n]
		}
		if err == io.EOF {
			close(chunks)
			return b, sum, nil
		}
		if err != nil {
			close(chunks)
			return nil, nil, err
		}
	}
}

// decodeLock decodes and validates the bytes of a lock file.
func decodeLock(b []byte) (*Lock, error) {
	sum := make(chan artifacts.Digest, 1)
	go func() { sum <- artifacts.Sum(b) }()
	return decodeHashed(b, sum)
}

// decodeHashed is decodeLock for bytes whose SHA-256 sum delivers.
func decodeHashed(b []byte, sum <-chan artifacts.Digest) (*Lock, error) {
	l, err := parseLock(b)
	if err == nil {
		err = l.validate()
	}
	digest := <-sum // the seal is looked up by it
	if err != nil {
		return nil, fmt.Errorf("not a valid lock file (%v); delete it to start afresh — the store still holds the artifacts", err)
	}
	if l.Version != lockVersion {
		return nil, fmt.Errorf("lock version %d, this thv writes version %d; delete it to start afresh", l.Version, lockVersion)
	}
	if l.Code == nil {
		l.Code = map[string]string{}
	}
	l.digest = digest
	return l, nil
}

// validate checks what a lock read from disk could do harm with: every
// output name becomes a file name (results/), so each must be one safe
// path component; task IDs must be unique.
func (l *Lock) validate() error {
	if l.Image != "" {
		if _, err := artifacts.ParseDigest(l.Image); err != nil {
			return fmt.Errorf("image: %v", err)
		}
	}
	if err := l.uniqueIDs(); err != nil {
		return err
	}
	// Each distinct output name (a few, on thousands of lines) is checked
	// once, in the records the line parser did not check.
	lines := l.unchecked
	if !l.byLine {
		lines = make([]int, len(l.Tasks))
		for i := range lines {
			lines[i] = i
		}
	}
	valid := map[string]bool{}
	for _, i := range lines {
		r := &l.Tasks[i]
		for _, o := range r.Outputs {
			if valid[o.Name] {
				continue
			}
			if err := ValidName(o.Name); err != nil {
				return fmt.Errorf("task %s: output %w", r.ID, err)
			}
			valid[o.Name] = true
		}
	}
	return nil
}

// uniqueIDs reports the first empty or repeated task ID. A no-op pass on
// the scale profile's lock (70,826 tasks) reads no record by ID, so the
// index by ID is not built here (Record builds it when first asked): the
// IDs' 64-bit hashes are sorted instead, and only when two are equal are
// the IDs themselves compared, in a map, which finds the first repeat.
func (l *Lock) uniqueIDs() error {
	bad := func(line int, id string) error {
		return fmt.Errorf("task line %d: empty or repeated task ID %q", line, id)
	}
	seed := maphash.MakeSeed()
	hashes := make([]uint64, len(l.Tasks))
	for i := range l.Tasks {
		if l.Tasks[i].ID == "" {
			return bad(i+1, "")
		}
		hashes[i] = maphash.String(seed, l.Tasks[i].ID)
	}
	slices.Sort(hashes)
	for i := 1; i < len(hashes); i++ {
		if hashes[i] != hashes[i-1] {
			continue
		}
		seen := make(map[string]bool, len(l.Tasks))
		for j := range l.Tasks {
			id := l.Tasks[j].ID
			if seen[id] {
				return bad(j+1, id)
			}
			seen[id] = true
		}
		break // a collision of two different IDs' hashes
	}
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
	defer trace.StartRegion(context.Background(), "lock parse").End()
	head, body, ok := bytes.Cut(b, []byte(lockTasksMarker))
	if !ok || !bytes.HasSuffix(body, []byte("]}\n")) {
		var l Lock
		return &l, json.Unmarshal(b, &l)
	}
	// The code map, the head's last line in Write's layout, is decoded
	// without encoding/json where it can be.
	var code map[string]string
	whole := head
	const codeLine = "\n\"code\": "
	if i := bytes.LastIndex(head, []byte(codeLine)); i >= 0 && bytes.HasSuffix(head, []byte(",\n")) {
		if m, ok := (&lineParser{}).codeMap(head[i+len(codeLine) : len(head)-2]); ok {
			code, head = m, head[:i+1]
		}
	}
	var l Lock
	if err := json.Unmarshal(append(append([]byte(nil), head...), "\"tasks\": []}"...), &l); err != nil {
		return nil, err
	}
	if code != nil && l.Code != nil { // another "code" (encoding/json's keys fold case): it decides
		l = Lock{}
		if err := json.Unmarshal(append(append([]byte(nil), whole...), "\"tasks\": []}"...), &l); err != nil {
			return nil, err
		}
	} else if code != nil {
		l.Code = code
	}
	lines := bytes.Split(bytes.TrimSuffix(body, []byte("]}\n")), []byte("\n"))
	if n := len(lines); n > 0 && len(lines[n-1]) == 0 {
		lines = lines[:n-1]
	}
	l.Tasks = make([]Record, len(lines))
	workers := min(runtime.NumCPU(), 8)
	errs := make([]error, workers)
	slow := make([][]int, workers) // lines encoding/json decoded
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
				slow[w] = append(slow[w], i)
			}
		}(w)
	}
	wg.Wait()
	l.byLine, l.unchecked = true, slices.Concat(slow...)
	return &l, errors.Join(errs...)
}

func (l *Lock) index() {
	l.byID = make(map[string]*Record, len(l.Tasks))
	for i := range l.Tasks {
		l.byID[l.Tasks[i].ID] = &l.Tasks[i]
	}
}

// Record returns the record of a task ID. The index is built on the first
// call for a lock that has none (one read from a file).
func (l *Lock) Record(id string) (*Record, bool) {
	l.indexOnce.Do(func() {
		if l.byID == nil {
			l.index()
		}
	})
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
	if l.Protocol != nil {
		b, err := json.Marshal(l.Protocol)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(w, "\"protocol\": %s,\n", b)
	}
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
