package slurm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"thv/artifacts"
	"thv/pipeline"
)

// Options configure an Executor.
type Options struct {
	Params                  // cluster settings; zero fields take the defaults
	Store  *artifacts.Store // the project store, on a filesystem the nodes share
	Env    []string         // environment of the Slurm commands (nil: this process's)
	Logger *slog.Logger     // submissions (debug), warnings; nil: slog.Default()

	PollInterval time.Duration // squeue period (default 300 ms)
	Linger       time.Duration // how long a partial batch waits for more tasks (default 200 ms)
	// ResultGrace is how long a finished element's result file may take
	// to become visible here (NFS attribute caching) before its tasks
	// fail (default 30 s).
	ResultGrace time.Duration
	// Grace is how long past its time limit an element Slurm still
	// reports RUNNING may go before thv cancels it and fails its tasks
	// (default 5 min): the client-side deadline for a lost node.
	Grace time.Duration
	// ControllerTimeout is how long squeue may keep failing before the
	// tasks in flight fail (default 5 min).
	ControllerTimeout time.Duration

	maxArraySize int // tests: instead of the controller's MaxArraySize
}

// Executor runs specs as Slurm job array elements. See the package doc.
type Executor struct {
	opt      Options
	p        Params
	limit    time.Duration // Params.Time
	deadline time.Time     // Params.Deadline from New; zero: none
	thv      string
	store    string
	mu       sync.Mutex // guards run and dir, set by the loop, read by Run and Dir
	run      string     // "" until the first Execute (begin)
	dir      string     // <store>/slurm/<run>
	owner    *os.File
	sl       *cli
	maxArray int
	log      *slog.Logger

	reqs    chan *request
	abandon chan *request
	quit    chan struct{}
	done    chan struct{}
	close   sync.Once

	// Owned by loop.
	pending   []*request
	live      map[*element]bool
	cancels   []string
	journal   *journal
	seq       int
	failed    bool
	unreached time.Time // since when squeue fails
	beginErr  error     // why the run could not be made
}

type request struct {
	spec      *pipeline.Spec
	res       chan outcome
	queued    time.Time
	elem      *element
	abandoned bool // its caller gave up
	done      bool // answered (possibly before its element ended)
}

type outcome struct {
	outs map[string]artifacts.Digest
	err  error
}

type element struct {
	job     string // Slurm job ID of the array
	index   int
	dir     string
	reqs    []*request
	running time.Time // first seen RUNNING
	missing int       // consecutive polls that did not list it
	noFile  time.Time // since when it is done but its result file is not visible
}

func (el *element) id() string { return fmt.Sprintf("%s_%d", el.job, el.index) }

// New checks the options against the cluster (sbatch --test-only), cancels
// the leftover jobs of dead earlier runs on this store, and starts the
// executor's loop. Nothing is submitted until Execute.
func New(opt Options) (*Executor, error) {
	if opt.Store == nil {
		return nil, errors.New("slurm executor: no store")
	}
	if err := opt.Params.Validate(); err != nil {
		return nil, fmt.Errorf("slurm.%w", err)
	}
	p := opt.Params.WithDefaults()
	limit, _ := ParseTime(p.Time)
	setDefault := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	setDefault(&opt.PollInterval, 300*time.Millisecond)
	setDefault(&opt.Linger, 200*time.Millisecond)
	setDefault(&opt.ResultGrace, 30*time.Second)
	setDefault(&opt.Grace, 5*time.Minute)
	setDefault(&opt.ControllerTimeout, 5*time.Minute)
	e := &Executor{opt: opt, p: p, limit: limit, sl: &cli{env: opt.Env}, log: opt.Logger,
		reqs: make(chan *request), abandon: make(chan *request), quit: make(chan struct{}), done: make(chan struct{}),
		live: map[*element]bool{}}
	if e.log == nil {
		e.log = slog.Default()
	}
	var err error
	if p.Deadline != "" {
		d, _ := ParseTime(p.Deadline)
		e.deadline = time.Now().Add(d)
	}
	if e.thv, err = thvBinary(p.Thv); err != nil {
		return nil, err
	}
	if e.store, err = filepath.Abs(opt.Store.Root()); err != nil {
		return nil, err
	}
	if err := e.preflight(); err != nil {
		return nil, err
	}
	if e.maxArray = opt.maxArraySize; e.maxArray <= 0 {
		e.maxArray = e.sl.maxArraySize()
	}
	go e.loop()
	return e, nil
}

// begin makes the run: reaps dead earlier runs, creates the run directory
// with its owner lock and journal. It runs at the first Execute, so that
// a repro with nothing to run (a no-op, a dry run) writes nothing.
func (e *Executor) begin() error {
	root := filepath.Join(e.store, runsDir)
	if err := os.MkdirAll(root, 0o755); err != nil {
		return fmt.Errorf("slurm executor: %w", err)
	}
	reaped, err := reapDeadRuns(root, e.sl)
	if len(reaped) > 0 {
		e.log.Warn("slurm: cancelled the leftover jobs of earlier runs whose thv is gone (their finished tasks are in the store)", "runs", strings.Join(reaped, " "))
	}
	if err != nil {
		return err
	}
	run := newRunID()
	dir := filepath.Join(root, run)
	if err := os.Mkdir(dir, 0o755); err != nil {
		return fmt.Errorf("slurm executor: %w", err)
	}
	owner, held, err := tryOwnerLock(dir)
	if err != nil || held {
		os.RemoveAll(dir)
		return fmt.Errorf("slurm executor: cannot lock %s/owner.lock (the shared filesystem must support flock, see docs/cluster.md): %v", dir, err)
	}
	host, _ := os.Hostname()
	j, err := openJournal(dir, runRecord{Run: run, JobName: jobName(run), Host: host, PID: os.Getpid(), Started: time.Now().UTC().Format(time.RFC3339)})
	if err != nil {
		owner.Close()
		os.RemoveAll(dir)
		return fmt.Errorf("slurm executor: %w", err)
	}
	e.mu.Lock()
	e.run, e.dir, e.owner, e.journal = run, dir, owner, j
	e.mu.Unlock()
	return nil
}

// thvBinary is the binary the nodes run: the given path, else this one.
func thvBinary(path string) (string, error) {
	if path == "" {
		exe, err := os.Executable()
		if err != nil {
			return "", fmt.Errorf("slurm executor: locating thv: %w (give the binary the nodes run with --slurm-thv)", err)
		}
		path = exe
	}
	if !filepath.IsAbs(path) {
		return "", fmt.Errorf("slurm.thv = %q: give an absolute path, as the nodes see it", path)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
		return "", fmt.Errorf("slurm.thv = %q: not an executable file here (the nodes run it from the same path on the shared filesystem): %v", path, err)
	}
	return path, nil
}

// preflight asks the controller whether it would accept an element with
// these options, so a bad partition or account fails before anything runs.
func (e *Executor) preflight() error {
	args := append([]string{"--test-only", "--job-name=thv-preflight"}, e.jobArgs()...)
	args = append(args, "--wrap=true")
	if _, err := e.sl.run(context.Background(), "sbatch", args...); err != nil {
		return fmt.Errorf("slurm executor: the cluster refuses the job options (check the slurm section of params.yaml and the --slurm-* flags): %w", err)
	}
	return nil
}

// jobArgs are the sbatch options every element gets from Params.
func (e *Executor) jobArgs() []string {
	args := []string{"--time=" + e.p.Time}
	add := func(flag, v string) {
		if v != "" {
			args = append(args, flag+"="+v)
		}
	}
	add("--partition", e.p.Partition)
	add("--account", e.p.Account)
	add("--mem", e.p.Mem)
	if e.p.CPUsPerTask > 0 {
		args = append(args, fmt.Sprintf("--cpus-per-task=%d", e.p.CPUsPerTask))
	}
	return append(args, e.p.SbatchArgs...)
}

// Run names this run (its directory below <store>/slurm, its job name
// thv-<run>); "" before the first Execute.
func (e *Executor) Run() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.run
}

// Dir is this run's directory; "" before the first Execute.
func (e *Executor) Dir() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.dir
}

var errClosed = errors.New("slurm executor: closed")

// Execute queues spec for the next array and waits for its element's
// result. A cancelled ctx abandons the task; an element whose tasks are
// all abandoned is cancelled in Slurm.
func (e *Executor) Execute(ctx context.Context, spec *pipeline.Spec) (map[string]artifacts.Digest, error) {
	r := &request{spec: spec, res: make(chan outcome, 1)}
	select {
	case e.reqs <- r:
	case <-e.done:
		return nil, errClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	select {
	case o := <-r.res:
		return o.outs, o.err
	case <-ctx.Done():
		select {
		case e.abandon <- r:
		case <-e.done:
		}
		return nil, ctx.Err()
	}
}

// Close cancels what this run still has in Slurm (its own job IDs only),
// releases the run and removes its directory unless an element failed
// (its logs are kept for the user).
func (e *Executor) Close() error {
	e.close.Do(func() { close(e.quit) })
	<-e.done
	if e.owner == nil {
		return nil
	}
	e.journal.close()
	e.owner.Close()
	e.owner = nil
	if e.failed {
		// A dead run is reaped by the next one; this one ended cleanly
		// and only keeps its files.
		artifacts.WriteFileAtomic(filepath.Join(e.dir, doneFile), nil)
		e.log.Warn("slurm: kept the files of this run for inspection (spec, result, stdout and stderr of every element)", "dir", e.dir)
		return nil
	}
	return os.RemoveAll(e.dir)
}
