package protocol

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/trace"
	"slices"
	"strings"

	"thv/artifacts"
	"thv/pipeline"
	"thv/protocol/config"
	"thv/stages/compare"
	"thv/stages/stage"
)

// Project is the paper's protocol bound to a store and its lock file.
type Project struct {
	Config *config.Config
	*pipeline.Project
	// paper: the project was opened with the paper's protocol itself (the
	// embedded params.yaml, no profile, no override), so Describe needs
	// no comparison.
	paper bool
}

// Options locate a project.
type Options struct {
	config.LoadOptions
	StoreDir string          // "" means $THV_STORE, else .thv in Dir
	Dir      string          // where the lock file and results/ live; "" means the working directory
	Kinds    *pipeline.Kinds // nil means Kinds(); tests pass kinds over edited sources
	// ReadOnly opens the store without creating or changing anything (for
	// status, show, dag, gc --dry-run); a store that does not exist yet
	// reads as empty.
	ReadOnly bool
	// Store and Listing, if set, are an open store and a listing of its
	// objects shared by several projects (thv readings); StoreDir and
	// ReadOnly are then not used.
	Store   *artifacts.Store
	Listing *pipeline.Listing
}

// Open loads and validates the protocol, plans the DAG, and opens the
// store and the lock file.
func Open(opt Options) (*Project, error) {
	ahead := readLockAhead(opt)
	region := trace.StartRegion(context.Background(), "config")
	cfg, err := config.Load(opt.LoadOptions)
	region.End()
	if err != nil {
		return nil, err
	}
	dir, err := projectDir(opt)
	if err != nil {
		return nil, err
	}
	suffix, err := overrideSuffix(opt.LoadOptions, cfg)
	if err != nil {
		return nil, err
	}
	lockPath := LockPath(dir, opt.ParamsFile, cfg.Profile)
	own := strings.TrimSuffix(lockPath, ".lock") + suffix + ".lock"
	readFrom := own
	if _, err := os.Stat(own); suffix != "" && errors.Is(err, fs.ErrNotExist) {
		// Its first pass reads the lock of the protocol it overrides, as
		// a record to explain staleness by ("params changed: T 3000 →
		// 300") and to find cached outputs by, and writes its own.
		readFrom = lockPath
	}
	p, err := openLock(cfg, opt, own, ahead.take(readFrom))
	if err != nil {
		return nil, err
	}
	p.paper = opt.ParamsFile == "" && cfg.Profile == "paper" && len(opt.Set) == 0 && !envOverrides(os.Environ())
	return p, nil
}

// lockAhead is the lock a project is likely to read, read on another
// goroutine while the configuration loads: reading and parsing the lock
// is the longest step before a pass, and a no-op's critical path.
type lockAhead struct {
	path string
	done chan struct{}
	lock *pipeline.Lock
	err  error
}

// readLockAhead starts reading the lock opt names when the configuration
// does not change its name: its params file's and profile's, without
// overrides (which name the lock after the values they set).
func readLockAhead(opt Options) *lockAhead {
	dir, err := projectDir(opt)
	if err != nil || len(opt.Set) > 0 || envOverrides(os.Environ()) {
		return nil
	}
	a := &lockAhead{path: LockPath(dir, opt.ParamsFile, cmp.Or(opt.Profile, "paper")), done: make(chan struct{})}
	go func() {
		defer close(a.done)
		a.lock, a.err = pipeline.ReadLock(a.path)
	}()
	return a
}

// take returns the reader of the lock at path: the one read ahead if it
// is that path's, else a fresh read.
func (a *lockAhead) take(path string) func() (*pipeline.Lock, error) {
	if a != nil && a.path == path {
		return func() (*pipeline.Lock, error) { <-a.done; return a.lock, a.err }
	}
	return func() (*pipeline.Lock, error) { return pipeline.ReadLock(path) }
}

// Describe is p.Config.Describe, at no cost for the paper's own protocol:
// thv repro names it on its last line, also when it has nothing to do.
func (p *Project) Describe() (compare.Protocol, error) {
	if p.paper {
		return compare.Protocol{}, nil
	}
	return p.Config.Describe()
}

// A lock belongs to its protocol: thv.lock is the paper's, and no override
// may rewrite it. Overrides (--set, THV_* variables) that change the
// protocol's values make another protocol, whose lock (and readings'
// locks) are named after it: thv.set-1a2b3c4d.lock, by the first digits of
// its ProtocolDigest and of which runs keep their trajectory (which
// changes the tasks a lock records, not the results). Overrides that change
// neither (outputs.results, the executors' settings, the readings sweep's
// section) keep the lock.

// overrideSuffix is ".set-" and 8 hex digits of cfg's ProtocolDigest when
// opt's overrides change the values of its params file and profile, else
// "".
func overrideSuffix(opt config.LoadOptions, cfg *config.Config) (string, error) {
	if len(opt.Set) == 0 && !envOverrides(os.Environ()) {
		return "", nil
	}
	base, err := config.Load(config.LoadOptions{ParamsFile: opt.ParamsFile, Profile: opt.Profile, Environ: []string{}})
	if err != nil {
		return "", err
	}
	digest := lockDigest(cfg)
	if lockDigest(base) == digest {
		return "", nil
	}
	return ".set-" + digest[:8], nil
}

// lockDigest identifies what a lock of cfg records: its protocol, and the
// tasks outputs.trajectories plans (the runs figures draw as tasks of
// their own, or none).
func lockDigest(cfg *config.Config) string {
	h := sha256.Sum256([]byte(cfg.ProtocolDigest() + "\noutputs.trajectories = " + cfg.Outputs.Trajectories))
	return hex.EncodeToString(h[:])
}

// envOverrides reports a set THV_* variable that may override a key of
// the protocol (one not in config.OtherVariables).
func envOverrides(env []string) bool {
	for _, kv := range env {
		name, val, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "THV_") && val != "" && !slices.Contains(config.OtherVariables, name) {
			return true
		}
	}
	return false
}

// ReadingsLockDir is where thv readings keeps its readings' locks for the
// protocol opt loads: <results>/readings, or, when overrides change the
// protocol, <results>/readings.set-<digits> (overrideSuffix).
func ReadingsLockDir(opt config.LoadOptions, results string) (string, error) {
	cfg, err := config.Load(opt)
	if err != nil {
		return "", err
	}
	suffix, err := overrideSuffix(opt, cfg)
	if err != nil {
		return "", err
	}
	return filepath.Join(results, "readings"+suffix), nil
}

// OpenReading opens the protocol of one reading of the readings sweep
// (LoadReading), with its lock at lockPath.
func OpenReading(opt Options, sweep *config.Readings, v config.Reading, lockPath string) (*Project, error) {
	cfg, err := config.LoadReading(opt.LoadOptions, sweep, v)
	if err != nil {
		return nil, err
	}
	return open(cfg, opt, lockPath)
}

func projectDir(opt Options) (string, error) {
	if opt.Dir != "" {
		return opt.Dir, nil
	}
	return os.Getwd()
}

// OpenStore opens the store opt names (StoreDir, else $THV_STORE, else
// .thv in dir).
func OpenStore(opt Options, dir string) (*artifacts.Store, error) {
	storeDir := opt.StoreDir
	if storeDir == "" {
		storeDir = os.Getenv("THV_STORE")
	}
	if storeDir == "" {
		storeDir = filepath.Join(dir, ".thv")
	}
	mode := artifacts.Create
	if opt.ReadOnly {
		mode = artifacts.ExistingOrMissing
	}
	store, err := artifacts.Open(storeDir, mode)
	if err != nil {
		return nil, fmt.Errorf("opening the store: %w", err)
	}
	return store, nil
}

// open opens the store (unless opt has one) and the lock file; cfg's DAG
// is planned when a pass needs it.
func open(cfg *config.Config, opt Options, lockPath string) (*Project, error) {
	return openLock(cfg, opt, lockPath, (*lockAhead)(nil).take(lockPath))
}

// openLock is open with the lock read from readFrom (lockPath, or the lock
// of the protocol an override changes) and written to lockPath.
func openLock(cfg *config.Config, opt Options, lockPath string, readLock func() (*pipeline.Lock, error)) (*Project, error) {
	store := opt.Store
	if store == nil {
		dir, err := projectDir(opt)
		if err != nil {
			return nil, err
		}
		if store, err = OpenStore(opt, dir); err != nil {
			return nil, err
		}
	}
	// Reading the lock is the longest step before a pass (a no-op's
	// critical path): the rest starts on other goroutines first, and this
	// one waits for it, usually read ahead (readLockAhead). (A pass that
	// no no-op certificate spares lists the store's objects while it
	// plans.)
	//
	// The plan is built when a pass needs it: a no-op certificate
	// (pipeline/noop.go) serves a pass without one. Its digest is the
	// configuration's: with the binary, all the plan is built from.
	pd := planDigest(cfg)
	kinds, err := kindsOf(opt)
	if err != nil {
		return nil, err
	}
	kinds.StartFingerprint() // a no-op certificate is keyed by it (pipeline/noop.go)
	lock, err := readLock()
	if err != nil {
		return nil, err
	}
	proj := &pipeline.Project{
		Planner:    func() (*pipeline.Plan, error) { return NewPlan(cfg) },
		Protocol:   func() *pipeline.LockProtocol { return lockProtocol(cfg) },
		PlanDigest: pd,
		Shared:     opt.Listing,
		Kinds:      kinds, Store: store, Lock: lock, LockPath: lockPath, Profile: cfg.Profile,
	}
	return &Project{Config: cfg, Project: proj}, nil
}

// lockProtocol is what a lock records of cfg: the digest of its values
// and how they differ from the paper's (Describe), or, if the paper's
// protocol cannot be read (it is embedded: never), its digest alone.
func lockProtocol(cfg *config.Config) *pipeline.LockProtocol {
	lp := &pipeline.LockProtocol{Digest: cfg.ValuesDigest()}
	if d, err := cfg.Describe(); err == nil {
		for _, x := range d.Differs {
			lp.Differs = append(lp.Differs, x.String())
		}
	}
	return lp
}

// kindsOf returns opt's kinds, else the paper's (Kinds).
func kindsOf(opt Options) (*pipeline.Kinds, error) {
	if opt.Kinds != nil {
		return opt.Kinds, nil
	}
	return Kinds()
}

// planDigest is the SHA-256 of cfg as JSON (struct fields in order, map
// keys sorted, floats in shortest round-trip form: the same configuration,
// the same bytes). NewPlan reads nothing but cfg and what is compiled into
// the binary (the algorithms' registry, the paper's reference). A
// configuration that JSON cannot encode has none ("": no certificate).
func planDigest(cfg *config.Config) string {
	b, err := json.Marshal(cfg)
	if err != nil {
		return ""
	}
	return artifacts.Sum(append([]byte("thv plan v1\n"), b...)).String()
}

// LockPath returns the lock file of a protocol in dir. A lock belongs to
// its protocol: the embedded params.yaml writes thv.lock (the paper) or
// thv.<profile>.lock; a params file of the user's, say my.yaml, writes
// thv-my.lock or thv-my.<profile>.lock, never over the paper's lock.
func LockPath(dir, paramsFile, profile string) string {
	base := "thv"
	if paramsFile != "" {
		base = "thv-" + strings.TrimSuffix(filepath.Base(paramsFile), filepath.Ext(paramsFile))
	}
	if profile != "" && profile != "paper" {
		base += "." + profile
	}
	return filepath.Join(dir, base+".lock")
}

// ResultsDir is where tables and figures are exported (outputs.results,
// relative to the lock file's directory).
func (p *Project) ResultsDir() string { return resultsDir(p.Config, p.LockPath) }

func resultsDir(cfg *config.Config, lockPath string) string {
	root := cfg.Outputs.Results
	if !filepath.IsAbs(root) {
		root = filepath.Join(filepath.Dir(lockPath), root)
	}
	return root
}

// Repro brings every task up to date and rewrites the lock, after
// removing what an interrupted pass left beside the lock and in results/.
// The export to results/ is the caller's (protocol/export).
func (p *Project) Repro(ctx context.Context, opt pipeline.Options) (*pipeline.Report, error) {
	p.removeAbandonedTemps()
	return p.Project.Repro(ctx, opt)
}

// removeAbandonedTemps removes the temporary files that an interrupted
// lock write or export left next to this protocol's lock and in results/.
func (p *Project) removeAbandonedTemps() {
	lockDir, lockName := filepath.Split(p.LockPath)
	artifacts.RemoveAbandonedTemps(lockDir, lockName)
	for _, sub := range []string{"", "tables", "figures"} {
		artifacts.RemoveAbandonedTemps(filepath.Join(p.ResultsDir(), sub), "")
	}
}

// Output reads output name of task id from the store if the task is up
// to date in rep (ok false otherwise).
func (p *Project) Output(rep *pipeline.Report, id string, name stage.OutputName) (b []byte, ok bool, err error) {
	outs, ok := rep.Outputs(id)
	if !ok {
		return nil, false, nil
	}
	b, err = p.storedOutput(id, outs, name)
	return b, true, err
}

// ResultOutput reads output name of result r from the store (verified).
func (p *Project) ResultOutput(r *pipeline.Result, name stage.OutputName) ([]byte, error) {
	return p.storedOutput(r.Task.ID, r.Outputs, name)
}

// ReadDecoded is ReadOutput decoded by decode (a formats.Decode…).
func ReadDecoded[T any](p *Project, rep *pipeline.Report, id string, name stage.OutputName, decode func([]byte) (T, error)) (T, error) {
	b, err := p.ReadOutput(rep, id, name)
	return Decoded(b, err, decode, id, "output "+string(name))
}

// ResultDecoded is ResultOutput decoded by decode (a formats.Decode…).
func ResultDecoded[T any](p *Project, r *pipeline.Result, name stage.OutputName, decode func([]byte) (T, error)) (T, error) {
	b, err := p.ResultOutput(r, name)
	return Decoded(b, err, decode, r.Task.ID, "output "+string(name))
}

// Decoded is decode(b) unless reading b failed (err); a decoding error
// names whose (a task ID) and what ("output cells", "input */*") b is.
func Decoded[T any](b []byte, err error, decode func([]byte) (T, error), whose, what string) (T, error) {
	var v T
	if err != nil {
		return v, err
	}
	if v, err = decode(b); err != nil {
		return v, fmt.Errorf("%s %s: %w", whose, what, err)
	}
	return v, nil
}

func (p *Project) storedOutput(id string, outs pipeline.Outputs, name stage.OutputName) ([]byte, error) {
	d, ok := outs.Get(string(name))
	if !ok {
		return nil, fmt.Errorf("%s has no output %q", id, name)
	}
	return p.Store.Get(d)
}

// ReadOutput is Output of a task that must be up to date.
func (p *Project) ReadOutput(rep *pipeline.Report, id string, name stage.OutputName) ([]byte, error) {
	b, ok, err := p.Output(rep, id, name)
	if !ok {
		return nil, fmt.Errorf("%s is not up to date: run thv repro with the same protocol first", id)
	}
	return b, err
}
