package export

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"thv/artifacts"
	"thv/pipeline"
	"thv/protocol"
	"thv/protocol/export/report"
	"thv/stages/compare"
	"thv/stages/figures"
	"thv/stages/formats"
	"thv/stages/stage"
	"thv/stages/tables"
)

// ReportName is the page of results/ (protocol/export/report, docs/report.md).
const ReportName = "index.html"

// What thv readings writes into results/: its table of readings, its
// report, and the published values judged across the fixed instances of
// its default reading (one row each, as comparison.parquet). The page
// summarises them when they are there and of its protocol; the headline
// is that judgement.
const (
	ReadingsTable  = "readings.parquet"
	ReadingsReport = "readings.md"
	AcrossFile     = "across-instances.parquet"
)

// ReadingsFiles are the files of results/ that thv readings writes.
var ReadingsFiles = []string{ReadingsTable, ReadingsReport, AcrossFile}

// writeReport writes results/index.html from the stored outputs of rep's
// tasks, unless the page there is already this one. The page's run block
// (report.Run) is p.Run, its empty fields taken from the page being
// replaced, or from p.PreviousReport (a bundle's export: the project's
// page), when that page shows the same results; so is its date, which is
// otherwise the lock file's modification time: the date of the pass that
// first exported these results.
//
// page is checkPage's reading of the page there.
func (p *Project) writeReport(rep *pipeline.Report, files []resultFile, page pageCheck) (bool, error) {
	path, old := filepath.Join(p.ResultsDir(), ReportName), page.old
	if page.current {
		return false, nil
	}
	sources := ""
	if p.PreviousReport == "" { // a bundle's page is always rendered
		sources = "-" // computed below, for the run block as written
	}
	pg, err := p.reportPage(rep, files)
	if err != nil {
		return false, err
	}
	b := report.Render(pg)
	prev := old
	if p.PreviousReport != "" {
		prev, _ = os.ReadFile(p.PreviousReport)
	}
	run := pg.Run
	if was, err := report.Same(b, prev); err == nil {
		if was.Date != "" {
			run.Date = was.Date // the run that first exported these results
		}
		for _, f := range []struct{ dst, src *string }{{&run.Executor, &was.Executor}, {&run.Thv, &was.Thv}, {&run.Verify, &was.Verify}, {&run.Sources, &was.Sources}} {
			if *f.dst == "" {
				*f.dst = *f.src
			}
		}
	}
	if sources != "" {
		sources = p.reportSources(rep, run)
	}
	if sources != "" {
		if run.Sources, err = withPageSum(sources, b); err != nil {
			return false, err
		}
	}
	if b, err = report.WithRun(b, run); err != nil {
		return false, err
	}
	if old != nil && string(old) == string(b) {
		return false, nil
	}
	if err := artifacts.WriteFileAtomic(path, b); err != nil {
		return false, err
	}
	return true, nil
}

// pageCheck is the page results/ holds (nil: none) and whether it is
// already the one writeReport would write.
type pageCheck struct {
	old     []byte
	current bool
}

// checkPage reads the page of results/ and checks its memo against rep
// (a bundle's page, rendered from p.PreviousReport, is never current).
// The memo names the run block as written: p.Run, its empty fields the
// page's own (thv report after thv repro keeps the executor the page
// names, and its memo). It reads none of the files an export writes.
func (p *Project) checkPage(rep *pipeline.Report) pageCheck {
	old, _ := os.ReadFile(filepath.Join(p.ResultsDir(), ReportName))
	current := p.PreviousReport == "" && pageCurrent(old, p.reportSources(rep, keptRun(p.Run, old)))
	return pageCheck{old: old, current: current}
}

// keptRun is run with its empty fields (executor, thv, verify) taken from
// page's run block, as writeReport keeps them when the page shows the
// same results.
func keptRun(run report.Run, page []byte) report.Run {
	was, err := report.ParseRun(page)
	if err != nil {
		return run
	}
	for _, f := range []struct{ dst, src *string }{{&run.Executor, &was.Executor}, {&run.Thv, &was.Thv}, {&run.Verify, &was.Verify}} {
		if *f.dst == "" {
			*f.dst = *f.src
		}
	}
	return run
}

// reportPage gathers what results/index.html shows: the protocol, the
// lock, the tables task's inputs, the compare task's outputs, the figures
// tasks' parameters, the readings sweep's rows if thv readings wrote them
// into results/, and p.Run with the lock file's date.
func (p *Project) reportPage(rep *pipeline.Report, files []resultFile) (report.Page, error) {
	pg := report.Page{Profile: p.Config.Profile, Proposed: p.Config.Proposed(), Run: p.Run}
	pg.Protocol.Digest = p.Config.ValuesDigest()
	differs, err := p.Config.DiffersFromPaper()
	if err != nil {
		return pg, err
	}
	if pg.Protocol.Described, err = p.Config.Describe(); err != nil {
		return pg, err
	}
	for _, o := range differs {
		pg.Protocol.Differs = append(pg.Protocol.Differs, report.Override(o))
	}
	if pg.Lock, pg.Run.Date, err = p.reportLock(); err != nil {
		return pg, err
	}
	if pg.Run.Verify == "" {
		pg.Run.Verify = p.lastVerify(pg.Lock.Digest)
	}
	byID := map[string]*pipeline.Result{}
	for _, r := range rep.Results {
		if r.Status == pipeline.Cached || r.Status == pipeline.Executed {
			byID[r.Task.ID] = r
		}
	}
	for _, r := range rep.Results {
		if byID[r.Task.ID] != r {
			continue
		}
		switch r.Task.Kind {
		case tables.Kind:
			if pg.Tables, err = p.reportTables(r, byID); err != nil {
				return pg, fmt.Errorf("%s: %w", r.Task.ID, err)
			}
		case compare.Kind:
			if pg.Compare, err = p.reportCompare(r); err != nil {
				return pg, fmt.Errorf("%s: %w", r.Task.ID, err)
			}
		case figures.Kind:
			fp, err := taskParams[figures.Params](r)
			if err != nil {
				return pg, err
			}
			pg.Figures = append(pg.Figures, report.Figure{Params: fp})
			rf, err := p.regretFigure(r, fp, byID)
			if err != nil {
				return pg, fmt.Errorf("%s: the cumulative regret: %w", r.Task.ID, err)
			}
			pg.Regret = append(pg.Regret, rf)
		}
	}
	for _, f := range files {
		rel := filepath.ToSlash(filepath.Join(f.sub, f.name))
		pg.Files = append(pg.Files, report.ResultFile{Path: rel, What: f.what})
	}
	pg.Files = append(pg.Files, report.ResultFile{Path: "README.md", What: "the index of these files, with the digest of the curves each PNG is drawn from"})
	if pg.Readings, err = p.reportReadings(pg.Compare); err != nil {
		return pg, err
	}
	if pg.Readings != nil {
		pg.Files = append(pg.Files, report.ResultFile{Path: ReadingsReport, What: "the readings sweep's report (thv readings)"},
			report.ResultFile{Path: ReadingsTable, What: "the readings sweep, one row per reading (Parquet)"})
	}
	if pg.Compare != nil {
		v, judged, across, err := p.verdict(pg.Compare)
		if err != nil {
			return pg, err
		}
		pg.Verdict, pg.Judged = &v, judged
		if across != nil {
			pg.Across = across.InstanceSeeds
			pg.Files = append(pg.Files, report.ResultFile{Path: AcrossFile, What: "the published values judged across the readings sweep's instances, one row each (Parquet, as comparison.parquet)"})
		}
	}
	sort.Slice(pg.Files, func(i, j int) bool { return pg.Files[i].Path < pg.Files[j].Path })
	return pg, nil
}

// reportLock describes the lock file: its digest, tasks, image and code,
// and its modification time, the date of the run.
func (p *Project) reportLock() (report.Lock, string, error) {
	digest := p.Lock.Digest()
	if digest.IsZero() {
		b, err := os.ReadFile(p.LockPath)
		if err != nil {
			return report.Lock{}, "", fmt.Errorf("the page describes the lock: %w", err)
		}
		digest = artifacts.Sum(b)
	}
	l := report.Lock{Digest: digest.String(), Tasks: len(p.Lock.Tasks), Image: p.Lock.Image, Go: p.Lock.Code["go"]}
	units := make([]string, 0, len(p.Lock.Code))
	for u := range p.Lock.Code {
		units = append(units, u)
	}
	sort.Strings(units)
	h := sha256.New()
	for _, u := range units {
		fmt.Fprintf(h, "%s %s\n", u, p.Lock.Code[u])
	}
	l.CodeUnits, l.CodeDigest = len(units), fmt.Sprintf("sha256:%x", h.Sum(nil))
	date := ""
	if fi, err := os.Stat(p.LockPath); err == nil {
		date = fi.ModTime().UTC().Format("2006-01-02 15:04 UTC") + " (the lock's last write)"
	}
	return l, date, nil
}

// taskParams decodes a task's parameters as its kind does.
func taskParams[P any](r *pipeline.Result) (P, error) {
	b, err := json.Marshal(r.Task.Params)
	if err != nil {
		var zero P
		return zero, fmt.Errorf("%s: params: %w", r.Task.ID, err)
	}
	return stage.Decode[P](b)
}

// input reads input role name of task r from the store, decoded.
func input[T any](p *Project, r *pipeline.Result, byID map[string]*pipeline.Result, name string, decode func([]byte) (T, error)) (T, error) {
	var zero T
	for _, d := range r.Task.Deps {
		if d.Name != name {
			continue
		}
		from, ok := byID[d.From.ID]
		if !ok {
			return zero, fmt.Errorf("input %s: task %s is not up to date", name, d.From.ID)
		}
		return protocol.ResultDecoded(p.Project, from, stage.OutputName(d.Output), decode)
	}
	if len(r.Task.Deps) == 0 {
		// A pass served by the no-op certificate (pipeline/noop.go) has
		// no plan: its results are the sealed lock's records, whose
		// inputs name the same digests the plan's dependencies would.
		return recordedInput(p, r, name, decode)
	}
	return zero, fmt.Errorf("no input %s", name)
}

// recordedInput reads input role name of task r by the digest its lock
// record names, from the store (verified), decoded.
func recordedInput[T any](p *Project, r *pipeline.Result, name string, decode func([]byte) (T, error)) (T, error) {
	var zero T
	rec, ok := p.Lock.Record(r.Task.ID)
	if !ok {
		return zero, fmt.Errorf("no input %s: %s has no lock record", name, r.Task.ID)
	}
	s, ok := rec.InputDigests()[name]
	if !ok {
		return zero, fmt.Errorf("no input %s in the lock record of %s", name, r.Task.ID)
	}
	d, err := artifacts.ParseDigest(s)
	if err != nil {
		return zero, fmt.Errorf("the lock record of %s, input %s: %w", r.Task.ID, name, err)
	}
	b, err := p.Store.Get(d)
	return protocol.Decoded(b, err, decode, r.Task.ID, "input "+name)
}

func (p *Project) reportTables(r *pipeline.Result, byID map[string]*pipeline.Result) (*report.Tables, error) {
	tp, err := taskParams[tables.Params](r)
	if err != nil {
		return nil, err
	}
	t := &report.Tables{Params: tp, Cells: map[string][]formats.Cell{}, Tests: map[string][]formats.TestRow{}}
	for _, s := range tp.Settings {
		if t.Cells[s.Name], err = input(p, r, byID, tables.CellsInputName(s.Name), formats.DecodeCells); err != nil {
			return nil, err
		}
		if t.Tests[s.Name], err = input(p, r, byID, tables.TestsInputName(s.Name), formats.DecodeTests); err != nil {
			return nil, err
		}
	}
	return t, nil
}

func (p *Project) reportCompare(r *pipeline.Result) (*report.Comparison, error) {
	cp, err := taskParams[compare.Params](r)
	if err != nil {
		return nil, err
	}
	c := &report.Comparison{Params: cp}
	if c.Rows, err = protocol.ResultDecoded(p.Project, r, compare.Comparison, formats.DecodeComparisons); err != nil {
		return nil, err
	}
	if c.Claims, err = protocol.ResultDecoded(p.Project, r, compare.Claims, formats.DecodeClaims); err != nil {
		return nil, err
	}
	return c, nil
}

// readingsOutput reads the file name of results/ that thv readings
// writes, decoded; ok false if there is none.
func readingsOutput[T any](p *Project, name string, decode func([]byte) (T, error)) (v T, ok bool, err error) {
	path := filepath.Join(p.ResultsDir(), name)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return v, false, nil
	}
	if err != nil {
		return v, false, err
	}
	if v, err = decode(b); err != nil {
		return v, false, fmt.Errorf("%s: %w (it is thv readings' output: rerun thv readings, or remove it)", path, err)
	}
	return v, true, nil
}

// reportReadings reads results/readings.parquet if thv readings wrote it.
func (p *Project) reportReadings(c *report.Comparison) (*report.Readings, error) {
	rows, ok, err := readingsOutput(p, ReadingsTable, formats.DecodeReadings)
	if !ok || err != nil {
		return nil, err
	}
	r := &report.Readings{Rows: rows}
	if c != nil {
		t := c.Params.Reference.Tolerance
		r.Tolerance = fmt.Sprintf("the reference's percentile band [%g, %g]", t.Percentile[0], t.Percentile[1])
	}
	if len(rows) > 0 {
		r.Protocol = rows[0].Protocol
		r.Other = rows[0].ProtocolDigest != p.Config.ProtocolDigest()
	}
	return r, nil
}

// verdict is the headline of the page and of thv: the protocol the
// compare task judged, its counts, and the judgement across instances
// that thv readings wrote into results/ for this protocol, if any (across,
// with its rows; else judged are the compare task's).
func (p *Project) verdict(c *report.Comparison) (v compare.Verdict, judged []formats.Comparison, across *formats.ReadingRow, err error) {
	t := c.Params.Reference.Tolerance
	v = compare.Verdict{Protocol: c.Params.Protocol, Run: compare.Count(c.Rows, c.Claims), OneInstance: c.Params.OneInstance,
		Relative: t.Relative, Band: t.Percentile}
	judged = c.Rows
	row, err := p.acrossRow()
	if err != nil || row == nil {
		return v, judged, nil, err
	}
	// A sweep without its rows: its counts are not the page's headline.
	rows, ok, err := readingsOutput(p, AcrossFile, formats.DecodeComparisons)
	if !ok || err != nil {
		return v, judged, nil, err
	}
	v.Across = row
	return v, rows, row, nil
}

// acrossRow is the readings sweep's row of the default reading judged
// across fixed instances (no override, several instance seeds), if thv
// readings wrote it for this protocol; nil otherwise.
func (p *Project) acrossRow() (*formats.ReadingRow, error) {
	rows, _, err := readingsOutput(p, ReadingsTable, formats.DecodeReadings)
	if err != nil {
		return nil, err
	}
	digest := p.Config.ProtocolDigest()
	for i := range rows {
		if r := &rows[i]; r.Set == "" && r.InstanceSeeds > 0 && r.ProtocolDigest == digest {
			return r, nil
		}
	}
	return nil, nil
}

// Verdict is the headline of the project's results after rep (a pass, or
// a status in which every task is up to date): the sentence that thv
// prints and the page shows. ok is false when the protocol has no compare
// task up to date.
func (p *Project) Verdict(rep *pipeline.Report) (v compare.Verdict, ok bool, err error) {
	for _, r := range rep.Results {
		if r.Task.Kind != compare.Kind || (r.Status != pipeline.Cached && r.Status != pipeline.Executed) {
			continue
		}
		c, err := p.reportCompare(r)
		if err != nil {
			return v, false, fmt.Errorf("%s: %w", r.Task.ID, err)
		}
		v, _, _, err = p.verdict(c)
		return v, err == nil, err
	}
	return v, false, nil
}
