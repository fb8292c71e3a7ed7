package pipeline

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"

	"thv/artifacts"
)

// The process protocol: a worker process (`thv exec-task`) reads one JSON
// Spec per line on its standard input and answers each with one JSON
// specResult line on its standard output, in order. It exits when its
// input closes. Diagnostics go to its standard error.

// specResult is a worker's answer to one spec.
type specResult struct {
	Task    string                      `json:"task"`
	Outputs map[string]artifacts.Digest `json:"outputs,omitempty"`
	Error   string                      `json:"error,omitempty"`
	// Input is set when the error is an *InputError, so that the
	// scheduler can recover the input's producer.
	Input *SpecInput `json:"input,omitempty"`
}

// maxSpecLine bounds one line of the protocol (a figures spec with
// hundreds of inputs is tens of kilobytes).
const maxSpecLine = 64 << 20

// ServeWorker runs the worker side of the process protocol: specs from in,
// results to out, until in is exhausted or ctx is cancelled.
func ServeWorker(ctx context.Context, w *Worker, in io.Reader, out io.Writer) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 64<<10), maxSpecLine)
	enc := json.NewEncoder(out)
	for sc.Scan() {
		if len(strings.TrimSpace(sc.Text())) == 0 {
			continue
		}
		var spec Spec
		res := specResult{}
		if err := json.Unmarshal(sc.Bytes(), &spec); err != nil {
			res.Error = fmt.Sprintf("not a task spec: %v", err)
		} else {
			res.Task = spec.Task
			outs, err := w.Execute(ctx, &spec)
			res.Outputs = outs
			if err != nil {
				res.Outputs, res.Error = nil, err.Error()
				var ie *InputError
				if errors.As(err, &ie) {
					res.Input = &SpecInput{Role: ie.Role, Digest: ie.Digest}
				}
			}
		}
		if err := enc.Encode(res); err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	return sc.Err()
}

// Process runs every spec in a pool of worker processes started from
// Command (for thv: `thv exec-task --store DIR`), one spec at a time per
// process. It proves the executor seam: a lock made with it equals the
// local executor's byte for byte. Workers start on demand and are reused.
type Process struct {
	Command []string // the worker command line
	Env     []string // its environment (nil: this process's)
	// NewCommand, if set, makes each worker's command instead (a
	// container runtime names every container afresh).
	NewCommand func() (*exec.Cmd, error)
	// MemoryLimit is the memory ceiling the workers run under (set by
	// their command line, e.g. exec-task --max-memory), for the error of
	// a worker that dies of it; 0: none.
	MemoryLimit int64

	mu     sync.Mutex
	idle   []*procWorker
	closed bool
}

type procWorker struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  *bufio.Scanner
	stderr *stderrLog
}

// Execute sends spec to an idle worker (starting one if none is idle) and
// waits for its answer. A worker that dies or is cancelled is discarded.
func (p *Process) Execute(ctx context.Context, spec *Spec) (map[string]artifacts.Digest, error) {
	w, err := p.take()
	if err != nil {
		return nil, err
	}
	res, err := w.do(ctx, spec)
	if err != nil {
		w.kill()
		if p.MemoryLimit > 0 && outOfMemory(w.stderr.String()) {
			return nil, fmt.Errorf("exceeded the memory ceiling of %d MiB per task (its worker ran out of memory; raise it with --task-memory if the task is honest)", p.MemoryLimit>>20)
		}
		return nil, err
	}
	p.put(w)
	if res.Error != "" {
		if res.Input != nil {
			return nil, &InputError{Role: res.Input.Role, Digest: res.Input.Digest, Err: errors.New(res.Error)}
		}
		return nil, errors.New(res.Error)
	}
	return res.Outputs, nil
}

func (p *Process) take() (*procWorker, error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, errors.New("process executor: closed")
	}
	if n := len(p.idle); n > 0 {
		w := p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		return w, nil
	}
	p.mu.Unlock()
	return p.start()
}

func (p *Process) put(w *procWorker) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		w.stop()
		return
	}
	p.idle = append(p.idle, w)
}

func (p *Process) start() (*procWorker, error) {
	var cmd *exec.Cmd
	switch {
	case p.NewCommand != nil:
		var err error
		if cmd, err = p.NewCommand(); err != nil {
			return nil, err
		}
	case len(p.Command) == 0:
		return nil, errors.New("process executor: no worker command")
	default:
		cmd = exec.Command(p.Command[0], p.Command[1:]...)
		cmd.Env = p.Env
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	w := &procWorker{cmd: cmd, stdin: stdin, stderr: &stderrLog{}}
	cmd.Stderr = w.stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("process executor: starting %s: %w", cmd.Path, err)
	}
	w.lines = bufio.NewScanner(stdout)
	w.lines.Buffer(make([]byte, 0, 64<<10), maxSpecLine)
	return w, nil
}

// do sends one spec and reads one answer; ctx cancels the wait (the caller
// then kills the worker, whose store writes are atomic).
func (w *procWorker) do(ctx context.Context, spec *Spec) (specResult, error) {
	line, err := json.Marshal(spec)
	if err != nil {
		return specResult{}, err
	}
	if _, err := w.stdin.Write(append(line, '\n')); err != nil {
		return specResult{}, w.died(err)
	}
	type answer struct {
		res specResult
		err error
	}
	ch := make(chan answer, 1)
	go func() {
		if !w.lines.Scan() {
			err := w.lines.Err()
			if err == nil {
				err = io.ErrUnexpectedEOF
			}
			ch <- answer{err: err}
			return
		}
		var res specResult
		err := json.Unmarshal(w.lines.Bytes(), &res)
		if err == nil && res.Task != spec.Task {
			err = fmt.Errorf("worker answered for task %q, expected %q", res.Task, spec.Task)
		}
		ch <- answer{res, err}
	}()
	select {
	case a := <-ch:
		if a.err != nil {
			return specResult{}, w.died(a.err)
		}
		return a.res, nil
	case <-ctx.Done():
		return specResult{}, ctx.Err()
	}
}

func (w *procWorker) died(err error) error {
	w.kill()
	msg := strings.TrimSpace(w.stderr.String())
	if msg != "" {
		return fmt.Errorf("worker process failed (%v): %s", err, msg)
	}
	return fmt.Errorf("worker process failed: %w", err)
}

func (w *procWorker) kill() {
	if w.cmd.Process != nil {
		w.cmd.Process.Kill()
	}
	w.stdin.Close()
	w.cmd.Wait()
}

// stop closes the worker's input, which ends it, and waits for it.
func (w *procWorker) stop() {
	w.stdin.Close()
	w.cmd.Wait()
}

// Close stops every idle worker.
func (p *Process) Close() error {
	p.mu.Lock()
	idle := p.idle
	p.idle, p.closed = nil, true
	p.mu.Unlock()
	for _, w := range idle {
		w.stop()
	}
	return nil
}

// outOfMemory reports whether a worker's last words are the Go runtime's
// out-of-memory crash (an allocation beyond its address-space limit).
func outOfMemory(stderr string) bool {
	return strings.Contains(stderr, "fatal error: out of memory") || strings.Contains(stderr, "runtime: out of memory")
}

// stderrLog keeps the first and the last bytes written to it (a worker's
// stderr): a Go crash says why at its start ("fatal error: out of
// memory") and where at its end.
type stderrLog struct {
	mu         sync.Mutex
	head, tail []byte
	cut        bool // bytes were dropped between head and tail
}

const (
	stderrHead = 1024
	stderrTail = 4096
)

func (t *stderrLog) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(p)
	if room := stderrHead - len(t.head); room > 0 {
		k := min(room, len(p))
		t.head = append(t.head, p[:k]...)
		p = p[k:]
	}
	t.tail = append(t.tail, p...)
	if len(t.tail) > stderrTail {
		t.tail = t.tail[len(t.tail)-stderrTail:]
		t.cut = true
	}
	return n, nil
}

func (t *stderrLog) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cut {
		return string(t.head) + "\n…\n" + string(t.tail)
	}
	return string(t.head) + string(t.tail)
}

// WorkerArgs are the settings of one worker process, the other side of
// the process protocol. Command spells them as the worker's command line:
// the one place in the engine that writes it, for every executor (a
// process on this host, a container, a cluster node); the binary's
// exec-task command reads it.
type WorkerArgs struct {
	// Store is the store the specs' inputs are read from and, without
	// Out, their outputs and index entries written to.
	Store string
	// Out is a scratch store the outputs go to instead (Store is then
	// only read); "": none.
	Out string
	// MaxMemory is the worker's address-space ceiling in bytes; 0: none.
	MaxMemory int64
}

// workerSubcommand is the binary's command that serves the process
// protocol.
const workerSubcommand = "exec-task"

// Command returns the command line that starts a worker of the binary bin
// with these settings: it executes the spec files given, or, with none,
// serves specs from its standard input until it closes (ServeWorker).
func (a WorkerArgs) Command(bin string, specFiles ...string) []string {
	cmd := []string{bin, workerSubcommand, "--store", a.Store}
	if a.Out != "" {
		cmd = append(cmd, "--out", a.Out)
	}
	if a.MaxMemory > 0 {
		cmd = append(cmd, "--max-memory", strconv.FormatInt(a.MaxMemory, 10))
	}
	return append(cmd, specFiles...)
}

// SelfCommand is Command for a worker of this very binary.
func (a WorkerArgs) SelfCommand() ([]string, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("process executor: locating this binary: %w", err)
	}
	return a.Command(exe), nil
}
