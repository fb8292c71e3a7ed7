package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"thv/artifacts"
	"thv/pipeline/codeid"
)

// Project ties a plan to its stage kinds, a store and a lock file: what
// `thv repro`, `thv status`, `thv show` and `thv gc` operate on.
type Project struct {
	Plan     *Plan
	Kinds    *Kinds
	Store    *artifacts.Store
	Lock     *Lock
	LockPath string
	Profile  string // recorded in the lock
	// Protocol, if set, describes the protocol the plan is built from, as
	// the planner words it, for the lock to record (called only when a
	// pass may write the lock).
	Protocol func() *LockProtocol
	// IgnoreSeal makes every pass read each task's record from the
	// store's index, even when the lock is sealed in the store:
	// verification honours no seal (nor a no-op certificate, noop.go).
	IgnoreSeal bool
	// Planner, if set, builds Plan when a pass first needs it (a pass
	// that the no-op certificate serves needs none); Plan is then nil
	// until EnsurePlan.
	Planner func() (*Plan, error)
	// PlanDigest names everything besides this binary that the plan is
	// built from (the protocol's configuration): with it, a complete pass
	// leaves a no-op certificate for the next (noop.go). "" means none.
	PlanDigest string
	// Shared, if set, is a listing of the store's objects shared with
	// other projects (thv readings), which the no-op check uses while it
	// holds (listing.go).
	Shared *Listing

	listing        <-chan map[artifacts.Digest]bool // the first pass's object listing, being read
	recoveryLogged bool                             // the store's check after a restart was reported
}

// NewProject reads the lock at lockPath (a missing file is an empty lock).
func NewProject(plan *Plan, kinds *Kinds, store *artifacts.Store, lockPath, profile string) (*Project, error) {
	lock, err := ReadLock(lockPath)
	if err != nil {
		return nil, err
	}
	return &Project{Plan: plan, Kinds: kinds, Store: store, Lock: lock, LockPath: lockPath, Profile: profile}, nil
}

// PrefetchListing starts listing the store's objects in the background, for
// the next pass (which needs it to check that recorded outputs exist). A
// caller that has other work first (planning, reading the lock) overlaps it.
func PrefetchListing(store *artifacts.Store) <-chan map[artifacts.Digest]bool {
	ch := make(chan map[artifacts.Digest]bool, 1)
	go func() {
		m, _ := store.Objects() // on error the pass stats each output instead
		ch <- m
	}()
	return ch
}

// UseListing hands a prefetched listing to the next pass.
func (p *Project) UseListing(ch <-chan map[artifacts.Digest]bool) { p.listing = ch }

// EnsurePlan builds the plan with Planner if it is not built yet, and
// checks its edges against the kinds' declarations (Kinds.CheckPlan).
func (p *Project) EnsurePlan() error {
	if p.Plan != nil || p.Planner == nil {
		return nil
	}
	plan, err := p.Planner()
	if err != nil {
		return err
	}
	if err := p.Kinds.CheckPlan(plan); err != nil {
		return fmt.Errorf("the plan reads what no kind declares:\n%w", err)
	}
	p.Plan = plan
	return nil
}

// runner returns the runner of the next pass (EnsurePlan first).
func (p *Project) runner() *Runner {
	kinds := p.Kinds
	if !p.IgnoreSeal {
		kinds = kinds.memoised(p.Store) // verification uses no memo (codememo.go)
	}
	r := &Runner{Plan: p.Plan, Kinds: kinds, Store: p.Store, Lock: p.Lock, listing: p.listing, trustLock: !p.IgnoreSeal && sealed(p.Store, p.Lock)}
	p.listing = nil
	return r
}

// fullPass prepares the full pass that a certificate did not spare: its
// listing of the store's objects starts while the plan is built.
func (p *Project) fullPass() (*Runner, error) {
	if p.listing == nil {
		p.listing = PrefetchListing(p.Store)
	}
	if err := p.EnsurePlan(); err != nil {
		return nil, err
	}
	return p.runner(), nil
}

// Repro brings every task up to date and rewrites the lock file (unless
// dry-running or nothing changed). The report lists what ran, what was
// cached, what failed and, if ctx was cancelled, what did not run; the lock
// then records what completed.
func (p *Project) Repro(ctx context.Context, opt Options) (*Report, error) {
	if !opt.DryRun {
		// A gc must not delete what this pass reads or writes.
		unlock, err := p.Store.LockShared()
		if err != nil {
			return nil, err
		}
		defer unlock()
	}
	if rec := p.Store.Recovered(); rec != nil && opt.Logger != nil && !p.recoveryLogged {
		// Open found a writer's marker from before a restart of the
		// machine and checked the whole store (artifacts/durable.go).
		p.recoveryLogged = true
		opt.Logger.Warn("the store had writes from before a restart of the machine that no barrier made durable: every object was re-hashed and every index entry read; what failed is set aside in corrupt/ and recomputed",
			"objects", rec.Objects, "entries", rec.Entries, "set aside", len(rec.Problems))
		for _, pr := range rec.Problems {
			opt.Logger.Warn("set aside after the restart", "what", pr.String())
		}
	}
	// Nothing changed since a complete pass left its certificate: the
	// lock stands as it is, and nothing is written (but the certificate
	// again, once, if its check renewed its stamps: renewStamps).
	if rep, ok := p.fastNoop(!opt.DryRun); ok {
		return rep, nil
	}
	r, err := p.fullPass()
	if err != nil {
		return nil, err
	}
	rep, runErr := r.Run(ctx, opt)
	if opt.DryRun {
		return rep, runErr
	}
	lock, wrote := p.Lock, false
	writeLock := rep.Executed > 0 || !p.lockCurrent(rep)
	// The store's writes are not fsynced one by one (artifacts/durable.go):
	// before the lock records them as fact, and before a seal vouches for
	// it, one barrier makes everything written to the store durable — the
	// outputs and index entries of this pass, by this process or by its
	// workers on this machine. Without it, no lock is written.
	if writeLock || !r.trustLock {
		if err := p.Store.Sync(); err != nil {
			return rep, errors.Join(runErr, fmt.Errorf("making the store durable before writing %s (the lock is unchanged): %w", p.LockPath, err))
		}
	}
	if writeLock {
		p.writeRunLog(rep, opt)
		lock = r.NewLock(p.Profile)
		lock.Image, lock.Protocol = opt.Image, p.lockProtocol()
		if err := lock.Write(p.LockPath); err != nil {
			return rep, fmt.Errorf("writing %s: %w", p.LockPath, err)
		}
		p.Lock, wrote = lock, true
	}
	// Every record of the lock now agrees with the store's index (it was
	// looked up there, or written from executions): seal it, so that the
	// next pass can trust it without reading the index. A lock that keeps
	// records of tasks that did not complete is not sealed.
	sealedNow := lock.complete && !wrote && r.trustLock
	if lock.complete && (wrote || !r.trustLock) {
		err := seal(p.Store, lock)
		if err != nil && opt.Logger != nil {
			opt.Logger.Warn("sealing the lock in the store", "err", err)
		}
		sealedNow = err == nil
	}
	// After a complete pass, like a seal, the store also keeps this
	// binary's code identity memo, if the pass read a package
	// the memo did not have (codememo.go).
	if lock.complete {
		if err := r.Kinds.saveMemo(p.Store); err != nil && opt.Logger != nil {
			opt.Logger.Warn("keeping the code identity memo in the store", "err", err)
		}
	}
	// A sealed lock of a complete pass with nothing disputed: the next
	// pass of this binary and protocol can be served by a certificate.
	// (Last of the pass's writes to the store: its stamps are then of the
	// store as the pass leaves it.)
	if sealedNow && len(rep.Disputes) == 0 {
		if err := p.certify(r); err != nil && opt.Logger != nil && !errors.Is(err, artifacts.ErrReadOnly) {
			opt.Logger.Warn("keeping the no-op certificate in the store", "err", err)
		}
	}
	// The end of the pass is a barrier too, for what was written since the
	// one above (the seal, the memo, the outputs of a pass that wrote no
	// lock): a seal lost in a power cut is only a cache lost, but a store
	// left with unsynced writes must be checked whole after a restart.
	if p.Store.Unsynced() {
		if err := p.Store.Sync(); err != nil && opt.Logger != nil {
			opt.Logger.Warn("syncing the store at the end of the pass", "err", err)
		}
	}
	return rep, runErr
}

// lockCurrent reports whether the lock already records exactly the tasks of
// a pass in which nothing ran: then rewriting it would write the same bytes
// (the no-op fast path skips it).
func (p *Project) lockCurrent(rep *Report) bool {
	if len(p.Lock.Tasks) != len(rep.Results) || !p.Lock.Protocol.equal(p.lockProtocol()) {
		return false
	}
	for i, r := range rep.Results {
		rec := &p.Lock.Tasks[i]
		if r.Status != Cached || rec.ID != r.Task.ID || rec.Key != r.Key || !rec.Outputs.Equal(r.Outputs) {
			return false
		}
	}
	p.Lock.complete = true
	return true
}

// lockProtocol is what the lock records of the protocol, or nil.
func (p *Project) lockProtocol() *LockProtocol {
	if p.Protocol == nil {
		return nil
	}
	return p.Protocol()
}

// Status decides what is stale and why, running nothing.
func (p *Project) Status(ctx context.Context) (*Report, error) {
	if rep, ok := p.fastNoop(false); ok {
		return rep, nil
	}
	r, err := p.fullPass()
	if err != nil {
		return nil, err
	}
	return r.Run(ctx, Options{DryRun: true, Jobs: 1})
}

// Outputs returns the output digests of the task id if rep found it up to
// date without running it (Cached), as a status pass finds every current
// task; a task this pass executed has them in its Result.
func (rep *Report) Outputs(id string) (Outputs, bool) {
	for _, r := range rep.Results {
		if r.Task.ID == id && r.Status == Cached {
			return r.Outputs, true
		}
	}
	return nil, false
}

// NewLock returns the lock describing a completed pass: the previous records
// of tasks that did not complete are kept.
func (r *Runner) NewLock(profile string) *Lock {
	l := &Lock{Version: lockVersion, Profile: profile, Code: map[string]string{}, complete: true}
	codes := map[*codeid.Identity]bool{}
	kept := false
	for _, t := range r.Plan.lockOrder() {
		res := r.result(t)
		if res.Status != Cached && res.Status != Executed {
			l.complete = false
			if rec, ok := r.Lock.Record(t.ID); ok && validRecord(rec) {
				l.Tasks = append(l.Tasks, *rec)
				kept = true
			}
			continue
		}
		parts := res.parts
		if !codes[parts.Code] { // thousands of tasks share an identity
			codes[parts.Code] = true
			for _, u := range parts.Code.Units {
				l.Code[u.Name] = u.Hash
			}
		}
		var inputs json.RawMessage
		if len(parts.Inputs) > 0 {
			inputs, _ = json.Marshal(parts.Inputs) // map keys sorted: canonical
		}
		l.Tasks = append(l.Tasks, Record{ID: t.ID, Kind: t.Kind, Key: res.Key, Params: parts.Params, Inputs: inputs, Outputs: res.Outputs})
	}
	if kept {
		// The kept records ran code that the old lock describes: keep its
		// units, so that explaining those tasks later stays true.
		for u, h := range r.Lock.Code {
			if _, ok := l.Code[u]; !ok {
				l.Code[u] = h
			}
		}
	}
	l.index()
	return l
}

// GC removes the store objects and index entries that no up-to-date task of
// the current plan references (and the seals of other locks). It holds the
// store exclusively from deciding what to keep to the end, so it fails at
// once while a repro runs. With dryRun it only counts, and takes no lock.
func (p *Project) GC(ctx context.Context, dryRun bool) (artifacts.GCStats, error) {
	if !dryRun {
		unlock, err := p.Store.LockExclusive()
		if err != nil {
			return artifacts.GCStats{}, err
		}
		defer unlock()
	}
	rep, err := p.Status(ctx)
	if err != nil {
		return artifacts.GCStats{}, err
	}
	keep := map[artifacts.Digest]bool{}
	keepKeys := map[artifacts.Key]bool{}
	if !p.Lock.digest.IsZero() {
		keepKeys[sealKey(p.Lock.digest)] = true // the current lock's seal
	}
	p.Kinds.keepMemo(p.Store, keep, keepKeys) // this binary's memo (codememo.go)
	p.keepCertificate(keep, keepKeys)         // this protocol's no-op certificate (noop.go)
	for _, r := range rep.Results {
		if r.Status != Cached {
			continue
		}
		keepKeys[r.Key] = true
		for _, o := range r.Outputs {
			keep[o.Digest] = true
		}
	}
	if dryRun {
		return p.Store.GCDryRun(keep, keepKeys)
	}
	return p.Store.GC(keep, keepKeys)
}

// writeRunLog records each task's status and execution time in
// <store>/log/repro-<profile>.tsv: timings live here, outside anything
// hashed. A failure to write it is only a warning.
func (p *Project) writeRunLog(rep *Report, opt Options) {
	var b strings.Builder
	b.WriteString("task\tkind\tstatus\tseconds\n")
	for _, r := range rep.Results {
		fmt.Fprintf(&b, "%s\t%s\t%s\t%.4f\n", r.Task.ID, r.Task.Kind, r.Status, r.Elapsed.Seconds())
	}
	dir := filepath.Join(p.Store.Root(), "log")
	err := os.MkdirAll(dir, 0o755)
	if err == nil {
		err = artifacts.WriteFileAtomic(filepath.Join(dir, "repro-"+p.Profile+".tsv"), []byte(b.String()))
	}
	if err != nil && opt.Logger != nil {
		opt.Logger.Warn("writing the run log", "err", err)
	}
}

// Damage is an output of an up-to-date task that the store cannot give
// back intact (Output "" when it is the task's index entry).
type Damage struct {
	Task, Output string
	Digest       artifacts.Digest
	Err          error
}

// String names the task, the output (if the damage is not to the index
// entry) and what is wrong.
func (d Damage) String() string {
	if d.Output == "" {
		return fmt.Sprintf("%s: %v", d.Task, d.Err)
	}
	return fmt.Sprintf("%s: output %s: %v", d.Task, d.Output, d.Err)
}

// VerifyOutputs re-hashes every output of the up-to-date tasks of rep (a
// status pass) and reports the missing or corrupt ones; corrupt objects are
// quarantined by the store, so the next repro recomputes them.
func (p *Project) VerifyOutputs(ctx context.Context, rep *Report) ([]Damage, error) {
	var out []Damage
	seen := map[artifacts.Digest]bool{}
	for _, r := range rep.Results {
		if r.Status != Cached {
			continue
		}
		for _, o := range r.Outputs { // sorted by name
			name, d := o.Name, o.Digest
			if seen[d] {
				continue
			}
			seen[d] = true
			if err := ctx.Err(); err != nil {
				return out, err
			}
			if err := p.Store.Verify(d); err != nil {
				out = append(out, Damage{Task: r.Task.ID, Output: name, Digest: d, Err: err})
			}
		}
	}
	return out, nil
}
