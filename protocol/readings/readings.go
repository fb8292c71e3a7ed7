// Package readings runs the readings sweep (thv readings, docs/compare.md):
// every reading of params.yaml's readings section, the protocol with the
// reading's keys set as --set sets them, run as an ordinary pass against
// one store on the settings the paper publishes values for, and judged
// against the published values. Tasks readings share are cache hits. Its
// table, report and the judgement across instances go into results/.
package readings

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"thv"
	"thv/artifacts"
	"thv/pipeline"
	"thv/protocol"
	"thv/protocol/config"
	"thv/protocol/export"
	"thv/stages/compare"
	"thv/stages/formats"
)

// Options of a sweep.
type Options struct {
	// Project locates the protocol and the store, as for thv repro.
	Project protocol.Options
	// Only names the readings to run (none: all).
	Only []string
	// Jobs is the passes' parallel workers (0: Executor's, else all
	// cores).
	Jobs int
	// Executor makes the executor of the passes from the first reading's
	// project, and its default jobs (nil: tasks run in process).
	Executor func(*protocol.Project) (exec pipeline.Executor, image string, jobs int, err error)
	// Log receives a line per reading and the passes' progress; Terminal
	// says it is a terminal. Logger receives the passes' warnings.
	Log      io.Writer
	Terminal bool
	Logger   *slog.Logger
}

// ErrUnknownReading is the error of an Only that names no reading.
var ErrUnknownReading = errors.New("no such reading")

// Sweep is what a sweep found: one row per reading (as in
// results/readings.parquet), the protocol's proposed method, and where
// its report is.
type Sweep struct {
	Rows     []formats.ReadingRow
	Proposed string
	Report   string
}

// sweep is a sweep under way.
type sweep struct {
	opt      Options
	base     *config.Config
	proto    compare.Protocol
	ref      *compare.Reference
	results  string // the results directory
	locks    string // where the readings' locks go
	exec     pipeline.Executor
	image    string
	made     bool // exec and image are made
	selected int  // readings to run
	done     int  // readings started
}

// Run runs the sweep and writes its table and report into results/.
func Run(ctx context.Context, opt Options) (*Sweep, error) {
	s, err := start(opt)
	if err != nil {
		return nil, err
	}
	defer s.close()
	unlock, err := s.opt.Project.Store.LockShared() // no gc between the readings
	if err != nil {
		return nil, err
	}
	defer unlock()
	var judged []compare.ReadingResult
	for _, v := range s.base.Readings.Variants {
		if len(opt.Only) == 0 || slices.Contains(opt.Only, v.Name) {
			r, err := s.reading(ctx, v)
			if err != nil {
				return nil, err
			}
			judged = append(judged, r)
		}
	}
	return s.write(judged)
}

// start loads the base protocol, checks the selection, and opens what the
// readings share: one store, one listing of its objects for their no-op
// checks, one registry of kinds (code identities computed once).
func start(opt Options) (*sweep, error) {
	s := &sweep{opt: opt}
	var err error
	if s.base, err = config.Load(opt.Project.LoadOptions); err != nil {
		return nil, err
	}
	variants := s.base.Readings.Variants
	if len(variants) == 0 {
		return nil, errors.New("params: readings.variants is empty: nothing to sweep (see the embedded params.yaml)")
	}
	names := make([]string, len(variants))
	for i, v := range variants {
		names[i] = v.Name
	}
	for _, name := range opt.Only {
		if !slices.Contains(names, name) {
			return nil, fmt.Errorf("--only %q: %w (readings: %s)", name, ErrUnknownReading, strings.Join(names, ", "))
		}
	}
	s.selected = len(variants)
	if len(opt.Only) > 0 {
		s.selected = len(slices.DeleteFunc(names, func(n string) bool { return !slices.Contains(opt.Only, n) }))
	}
	if s.proto, err = s.base.Describe(); err != nil {
		return nil, err
	}
	if s.ref, err = protocol.ParseReference(thv.PaperReference); err != nil {
		return nil, err
	}
	dir := opt.Project.Dir
	if dir == "" {
		if dir, err = os.Getwd(); err != nil {
			return nil, err
		}
	}
	s.results = s.base.Outputs.Results
	if !filepath.IsAbs(s.results) {
		s.results = filepath.Join(dir, s.results)
	}
	// A lock belongs to its protocol: with overrides that change the
	// protocol, the readings' locks go elsewhere.
	if s.locks, err = protocol.ReadingsLockDir(opt.Project.LoadOptions, s.results); err != nil {
		return nil, err
	}
	p := &s.opt.Project
	if p.Store, err = protocol.OpenStore(*p, dir); err != nil {
		return nil, err
	}
	p.Listing = pipeline.NewListing(p.Store)
	if p.Kinds, err = protocol.Kinds(); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *sweep) close() {
	if s.exec != nil {
		s.exec.Close()
	}
}

// reading runs reading v: once, or, with one fixed instance per cell,
// once per instance seed of the sweep, judged across them.
func (s *sweep) reading(ctx context.Context, v config.Reading) (compare.ReadingResult, error) {
	s.done++
	sweepConfig := &s.base.Readings
	cfg, err := config.LoadReading(s.opt.Project.LoadOptions, sweepConfig, v)
	if err != nil {
		return compare.ReadingResult{}, err
	}
	runs, locks := []config.Reading{v}, []string{filepath.Join(s.locks, v.Name+".lock")}
	var seeds []uint64
	if cfg.Instances.Mode == config.InstancesFixed && len(sweepConfig.InstanceSeeds) > 0 {
		seeds, runs, locks = sweepConfig.InstanceSeeds, nil, nil
		for _, seed := range seeds {
			runs = append(runs, v.ForInstance(seed))
			locks = append(locks, filepath.Join(s.locks, v.Name, fmt.Sprintf("instance-seed=%d.lock", seed)))
		}
	}
	r := compare.ReadingResult{Name: v.Name, Why: v.Why, Set: v.Set, InstanceSeeds: len(seeds), Proposed: cfg.Proposed()}
	var perInstance []compare.Results
	// Each run's project (its configuration, its lock read and parsed) is
	// opened while the run before it is checked.
	type opened struct {
		proj *protocol.Project
		err  error
	}
	open := func(j int) <-chan opened {
		ch := make(chan opened, 1)
		go func() {
			p, err := protocol.OpenReading(s.opt.Project, sweepConfig, runs[j], locks[j])
			ch <- opened{p, err}
		}()
		return ch
	}
	next := open(0)
	for j := range runs {
		o := <-next
		if j+1 < len(runs) {
			next = open(j + 1)
		}
		if o.err != nil {
			return r, o.err
		}
		label := v.Name
		if len(runs) > 1 {
			label = fmt.Sprintf("%s, instance seed %d (%d/%d)", v.Name, seeds[j], j+1, len(runs))
		}
		status, err := s.pass(ctx, o.proj, label, runs[j])
		if err != nil {
			return r, err
		}
		if j == 0 { // the claims and the key: the reading's first run
			if r.Rows, r.Claims, err = o.proj.Comparison(status); err != nil {
				return r, fmt.Errorf("reading %s: %w", label, err)
			}
			r.CompareKey = protocol.TaskKey(status, protocol.CompareID)
		}
		if len(runs) > 1 {
			res, err := o.proj.Cells(status)
			if err != nil {
				return r, fmt.Errorf("reading %s: %w", label, err)
			}
			perInstance = append(perInstance, res)
		}
	}
	if len(runs) > 1 {
		proto, err := cfg.Describe()
		if err != nil {
			return r, err
		}
		r.Rows = compare.AcrossInstances(s.ref, proto, perInstance, cfg.Metrics.FinalRegret)
	}
	return r, nil
}

// pass brings one run of a reading up to date and returns its status: a
// report in which every task is up to date.
func (s *sweep) pass(ctx context.Context, proj *protocol.Project, label string, run config.Reading) (*pipeline.Report, error) {
	if !s.made && s.opt.Executor != nil {
		jobs := 0
		var err error
		if s.exec, s.image, jobs, err = s.opt.Executor(proj); err != nil {
			return nil, err
		}
		s.made = true
		if s.opt.Jobs == 0 {
			s.opt.Jobs = jobs
		}
	}
	of := ""
	if s.selected > 1 {
		of = fmt.Sprintf(" (reading %d of the %d selected)", s.done, s.selected)
	}
	set := "the defaults"
	if len(run.Set) > 0 {
		set = strings.Join(run.Set, ", ")
	}
	fmt.Fprintf(s.opt.Log, "reading %s%s: %s\n", label, of, set)
	start := time.Now()
	if err := os.MkdirAll(filepath.Dir(proj.LockPath), 0o755); err != nil {
		return nil, err
	}
	rep, err := proj.Repro(ctx, pipeline.Options{Jobs: s.opt.Jobs, Progress: pipeline.NewProgress(s.opt.Log, s.opt.Terminal, s.opt.Jobs),
		Executor: s.exec, Logger: s.opt.Logger, Image: s.image})
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", label, err)
	}
	if rep.Failed > 0 || rep.Blocked > 0 {
		return nil, fmt.Errorf("reading %s: %d tasks failed, %d blocked (see FAILED lines above); fix the cause and rerun: finished tasks are kept", label, rep.Failed, rep.Blocked)
	}
	fmt.Fprintf(s.opt.Log, "reading %s: %d tasks: %d executed, %d cached in %s\n", label, len(rep.Results), rep.Executed, rep.Cached, time.Since(start).Round(time.Millisecond))
	if rep.Executed == 0 {
		return rep, nil // a pass that ran nothing found every task up to date
	}
	return proj.Status(ctx)
}

// write writes the sweep's table, report and judgement across instances
// into results/, each only if changed (the page's memo names their sizes
// and times).
func (s *sweep) write(judged []compare.ReadingResult) (*Sweep, error) {
	out := &Sweep{Rows: make([]formats.ReadingRow, len(judged)), Proposed: s.base.Proposed(), Report: filepath.Join(s.results, export.ReadingsReport)}
	var across []formats.Comparison
	for i, r := range judged {
		out.Rows[i] = r.Summarize()
		out.Rows[i].Protocol, out.Rows[i].ProtocolDigest = s.proto.Name(), s.base.ProtocolDigest()
		if across == nil && len(r.Set) == 0 && r.InstanceSeeds > 0 {
			across = r.Rows // the page's headline (export.AcrossFile)
		}
	}
	pq, err := formats.EncodeReadings(out.Rows)
	if err != nil {
		return nil, err
	}
	if err := writeIfChanged(filepath.Join(s.results, export.ReadingsTable), pq); err != nil {
		return nil, err
	}
	if err := writeIfChanged(out.Report, []byte(compare.ReadingsMarkdown(judged, s.proto, s.ref.Tolerance.Percentile))); err != nil {
		return nil, err
	}
	acrossPath := filepath.Join(s.results, export.AcrossFile)
	if across == nil { // a sweep without the default reading: the one before's rows are not its
		if err := os.Remove(acrossPath); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		return out, nil
	}
	b, err := formats.EncodeComparisons(across)
	if err != nil {
		return nil, err
	}
	return out, writeIfChanged(acrossPath, b)
}

// writeIfChanged writes b to path (atomically) unless the file holds b.
func writeIfChanged(path string, b []byte) error {
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, b) {
		return nil
	}
	return artifacts.WriteFileAtomic(path, b)
}

// Print prints the sweep's table; the proposed method's CI ratio has its
// column.
func (s *Sweep) Print(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "reading\tagree\tHV\tregret\tagree (a)\tclaims\tCI ratio %s HV\tCI ratio HV\tCI ratio regret\n", s.Proposed)
	for _, r := range s.Rows {
		fmt.Fprintf(tw, "%s\t%d/%d\t%d\t%d\t%d\t%d/%d\t%.2f\t%.2f\t%.2f\n", r.Reading, r.Agree, r.Values, r.AgreeHV, r.AgreeRegret, r.AgreeCI,
			r.ClaimsHold, r.Claims, r.CIRatioTHVUCBHV, r.CIRatioHV, r.CIRatioRegret)
	}
	tw.Flush()
	fmt.Fprintf(w, "\nreport: %s\n", s.Report)
}
