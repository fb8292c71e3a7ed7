package pipeline

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"thv/artifacts"
)

// Project ties a protocol to a store and a lock file: what `thv repro`,
// `thv status`, `thv show` and `thv gc` operate on.
type Project struct {
	Config   *Config
	Plan     *Plan
	Store    *artifacts.Store
	Lock     *Lock
	LockPath string
}

// ProjectOptions locate a project.
type ProjectOptions struct {
	LoadOptions
	StoreDir string // "" means $THV_STORE, else .thv in Dir
	Dir      string // where the lock file lives; "" means the working directory
}

// OpenProject loads and validates the protocol, plans the DAG, and opens the
// store and the lock file.
func OpenProject(opt ProjectOptions) (*Project, error) {
	cfg, err := LoadConfig(opt.LoadOptions)
	if err != nil {
		return nil, err
	}
	plan, err := NewPlan(cfg)
	if err != nil {
		return nil, err
	}
	dir := opt.Dir
	if dir == "" {
		if dir, err = os.Getwd(); err != nil {
			return nil, err
		}
	}
	storeDir := opt.StoreDir
	if storeDir == "" {
		storeDir = os.Getenv("THV_STORE")
	}
	if storeDir == "" {
		storeDir = filepath.Join(dir, ".thv")
	}
	store, err := artifacts.Open(storeDir)
	if err != nil {
		return nil, fmt.Errorf("opening store %s: %w", storeDir, err)
	}
	lockPath := LockPath(dir, cfg.Profile)
	lock, err := ReadLock(lockPath)
	if err != nil {
		return nil, err
	}
	return &Project{Config: cfg, Plan: plan, Store: store, Lock: lock, LockPath: lockPath}, nil
}

// Repro brings every task up to date and rewrites the lock file (unless
// dry-running). The report lists what ran, what was cached and what failed.
func (p *Project) Repro(opt Options) (*Report, error) {
	r := &Runner{Plan: p.Plan, Store: p.Store, Lock: p.Lock}
	rep, err := r.Run(opt)
	if err != nil || opt.DryRun {
		return rep, err
	}
	if rep.Executed > 0 || !p.lockCurrent(rep) {
		p.writeRunLog(rep)
		lock, err := r.NewLock(p.Config.Profile)
		if err != nil {
			return rep, err
		}
		if err := lock.Write(p.LockPath); err != nil {
			return rep, fmt.Errorf("writing %s: %w", p.LockPath, err)
		}
		p.Lock = lock
	}
	if _, err := p.ExportResults(rep); err != nil {
		return rep, fmt.Errorf("exporting results: %w", err)
	}
	return rep, nil
}

// lockCurrent reports whether the lock already records exactly the tasks of
// a pass in which nothing ran: then rewriting it would write the same bytes
// (the no-op fast path skips it).
func (p *Project) lockCurrent(rep *Report) bool {
	if len(p.Lock.Tasks) != len(rep.Results) {
		return false
	}
	for i, r := range rep.Results {
		rec := &p.Lock.Tasks[i]
		if r.Status != Cached || rec.ID != r.Task.ID || rec.Key != r.Key {
			return false
		}
	}
	return true
}

// Status decides what is stale and why, running nothing.
func (p *Project) Status() (*Report, error) {
	r := &Runner{Plan: p.Plan, Store: p.Store, Lock: p.Lock}
	return r.Run(Options{DryRun: true, Jobs: 1})
}

// Outputs returns the output digests of an up-to-date task, read from a
// status pass.
func (rep *Report) Outputs(id string) (map[string]string, bool) {
	for _, r := range rep.Results {
		if r.Task.ID == id && r.Status == Cached {
			return r.Outputs, true
		}
	}
	return nil, false
}

// GCStats reports a garbage collection.
type GCStats struct {
	Objects, Entries int   // removed (or, dry-running, removable)
	Bytes            int64 // freed
	Kept             int   // objects kept
}

// GC removes the store objects and index entries that no up-to-date task of
// the current plan references. With dryRun it only counts.
func (p *Project) GC(dryRun bool) (GCStats, error) {
	rep, err := p.Status()
	if err != nil {
		return GCStats{}, err
	}
	keep := map[artifacts.Digest]bool{}
	keepKeys := map[artifacts.Key]bool{}
	for _, r := range rep.Results {
		if r.Status != Cached {
			continue
		}
		if k, err := artifacts.ParseKey(r.Key); err == nil {
			keepKeys[k] = true
		}
		for _, d := range r.Outputs {
			if dig, err := artifacts.ParseDigest(d); err == nil {
				keep[dig] = true
			}
		}
	}
	if dryRun {
		return p.countGarbage(keep, keepKeys)
	}
	st, err := p.Store.GC(keep, keepKeys)
	return GCStats{Objects: st.ObjectsRemoved, Entries: st.EntriesRemoved, Bytes: st.BytesFreed, Kept: st.ObjectsKept}, err
}

// countGarbage counts what GC would remove, touching nothing.
func (p *Project) countGarbage(keep map[artifacts.Digest]bool, keepKeys map[artifacts.Key]bool) (GCStats, error) {
	var st GCStats
	walk := func(sub, suffix string, kept func(string) bool, n *int) error {
		return filepath.WalkDir(filepath.Join(p.Store.Root(), sub), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			name, ok := strings.CutSuffix(d.Name(), suffix)
			if !ok {
				return nil
			}
			if kept("sha256:" + name) {
				if sub == "objects" {
					st.Kept++
				}
				return nil
			}
			*n++
			if info, err := d.Info(); err == nil {
				st.Bytes += info.Size()
			}
			return nil
		})
	}
	err := walk("objects", "", func(s string) bool { d, err := artifacts.ParseDigest(s); return err == nil && keep[d] }, &st.Objects)
	if err == nil {
		err = walk("index", ".json", func(s string) bool { k, err := artifacts.ParseKey(s); return err == nil && keepKeys[k] }, &st.Entries)
	}
	return st, err
}

// writeRunLog records each task's status and execution time in
// <store>/log/repro-<profile>.tsv: timings live here, outside anything
// hashed. A failure to write it is only a warning.
func (p *Project) writeRunLog(rep *Report) {
	var b strings.Builder
	b.WriteString("task\tkind\tstatus\tseconds\n")
	for _, r := range rep.Results {
		fmt.Fprintf(&b, "%s\t%s\t%s\t%.4f\n", r.Task.ID, r.Task.Kind, r.Status, r.Elapsed.Seconds())
	}
	dir := filepath.Join(p.Store.Root(), "log")
	if err := os.MkdirAll(dir, 0o755); err == nil {
		err = writeFileAtomic(filepath.Join(dir, "repro-"+p.Config.Profile+".tsv"), []byte(b.String()))
		if err != nil {
			warnf("writing the run log: %v", err)
		}
	}
}
