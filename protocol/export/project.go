package export

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime/trace"

	"thv/pipeline"
	"thv/protocol"
	"thv/protocol/export/report"
)

// Project is a protocol's project with its export: what results/ holds
// and what its page says of the pass that wrote it.
type Project struct {
	*protocol.Project
	// Run is what results/index.html says of the pass that exports it
	// (report.Run; its date is the lock file's): the caller's to set.
	Run report.Run
	// PreviousReport is a page whose run block the export keeps when it
	// shows the same results ("": the page being replaced): a bundle's
	// export names the project's results/index.html.
	PreviousReport string
}

// Open opens the project of opt (protocol.Open).
func Open(opt protocol.Options) (*Project, error) {
	proj, err := protocol.Open(opt)
	if err != nil {
		return nil, err
	}
	return &Project{Project: proj}, nil
}

// Repro brings every task up to date, rewrites the lock and exports the
// tables and figures to the results directory (not after a cancelled,
// failed or dry pass).
func (p *Project) Repro(ctx context.Context, opt pipeline.Options) (*pipeline.Report, error) {
	rep, err := p.Project.Repro(ctx, opt)
	if err != nil || opt.DryRun {
		return rep, err
	}
	if rep.Failed > 0 || rep.Blocked > 0 {
		// results/ keeps the tables and figures of the last complete pass,
		// with a README that describes them: a partial export would mix
		// passes.
		if opt.Logger != nil {
			opt.Logger.Warn("results not exported: some tasks failed; fix them and rerun", "results", p.ResultsDir())
		}
		return rep, nil
	}
	region := trace.StartRegion(ctx, "export")
	defer region.End()
	if _, err := p.ExportResults(rep); err != nil {
		return rep, fmt.Errorf("exporting results: %w", err)
	}
	return rep, nil
}

// CheckWritable makes sure, before a pass runs any task, that the places
// it writes at its end can be written: the lock's directory and the
// results directory (created if missing). A read-only project is then
// found in milliseconds, not after every task ran. It creates and removes
// a temp file in each, named as the temp files a killed writer leaves,
// which the next pass sweeps (removeAbandonedTemps).
func (p *Project) CheckWritable() error {
	lockDir, lockName := filepath.Split(p.LockPath)
	if lockDir == "" {
		lockDir = "."
	}
	if err := probeWrite(lockDir, lockName); err != nil {
		return fmt.Errorf("the lock's directory %s cannot be written (%w): thv repro writes %s there at its end; make it writable, or run in a copy of the project; nothing has run", lockDir, err, lockName)
	}
	results := p.ResultsDir()
	if err := os.MkdirAll(results, 0o755); err != nil {
		return fmt.Errorf("the results directory cannot be made (%w): thv repro writes its tables, figures and page there; make it writable, or give another (--set outputs.results=DIR); nothing has run", err)
	}
	for _, sub := range []string{"", "tables", "figures"} {
		dir := filepath.Join(results, sub)
		if _, err := os.Stat(dir); sub != "" && err != nil {
			continue // made when written, in a directory found writable
		}
		if err := probeWrite(dir, ReportName); err != nil {
			return fmt.Errorf("the results directory %s cannot be written (%w): thv repro writes its tables, figures and page there; make it writable, or give another (--set outputs.results=DIR); nothing has run", dir, err)
		}
	}
	return nil
}

// probeWrite creates and removes a temp file for name in dir.
func probeWrite(dir, name string) error {
	f, err := os.CreateTemp(dir, "."+name+".tmp*")
	if err != nil {
		return err
	}
	f.Close()
	return os.Remove(f.Name())
}
