package protocol

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"thv/pipeline"
	"thv/pipeline/codeid"
	"thv/stages/compare"
	"thv/stages/figures"
	"thv/stages/report"
	"thv/stages/tables"
)

// Rendering the page reads a dozen stored tables and hashes the lock:
// tens of milliseconds, on a no-op thv repro whose budget is 100 ms. So
// the page's run block carries a memo of what it was rendered from
// (report.Run.Sources): the binary that rendered it (its Go build ID:
// the renderer and the paper's params.yaml are in it), the lock's SHA-256
// (as the pipeline read or wrote it), the protocol's values, the key and outputs
// of every task the page reads, what thv readings left in results/, the
// run block's own inputs — and the SHA-256 of the page outside its run
// block, so that an edited page is rewritten. An export whose memo equals
// the page's writes nothing. The memo is this machine's shortcut, never
// evidence: verify-bundle renders the page afresh and ignores it.

// reportSources is the memo of the page rep's results give, or "" when
// there is none to take (no build ID, or a lock neither read nor
// written: the page is always rendered).
func (p *Project) reportSources(rep *pipeline.Report, run report.Run) string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	id, err := codeid.BuildID(exe)
	if err != nil || p.Lock.Digest().IsZero() {
		return ""
	}
	h := sha256.New()
	fmt.Fprintf(h, "build %s\nvalues %s\nlock %s\nrun %q %q %q\n", id, p.Config.ValuesDigest(), p.Lock.Digest(), run.Executor, run.Thv, run.Verify)
	for _, f := range []string{p.verifyLog(), filepath.Join(p.ResultsDir(), readingsFile), filepath.Join(p.ResultsDir(), AcrossFile)} {
		fmt.Fprintf(h, "file %s %s\n", f, statText(f))
	}
	for _, r := range rep.Results {
		if r.Status != pipeline.Cached && r.Status != pipeline.Executed {
			continue
		}
		switch r.Task.Kind {
		case tables.Kind, compare.Kind, figures.Kind:
		default:
			continue
		}
		fmt.Fprintf(h, "task %s %s\n", r.Task.ID, r.Key)
		for _, o := range r.Outputs { // sorted by name
			fmt.Fprintf(h, "  %s %s\n", o.Name, o.Digest)
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// statText is a file's size and modification time, or "absent".
func statText(path string) string {
	fi, err := os.Stat(path)
	if err != nil {
		return "absent"
	}
	return fmt.Sprintf("%d %d", fi.Size(), fi.ModTime().UnixNano())
}

// pageSum is the SHA-256 of a page outside its run block.
func pageSum(page []byte) (string, error) {
	bare, err := report.WithRun(page, report.Run{})
	if err != nil {
		return "", err
	}
	h := sha256.New()
	io.WriteString(h, string(bare))
	return hex.EncodeToString(h.Sum(nil)), nil
}

// withPageSum is the memo of sources completed by the page's own sum.
func withPageSum(sources string, page []byte) (string, error) {
	sum, err := pageSum(page)
	if err != nil {
		return "", err
	}
	return sources + " " + sum, nil
}

// pageCurrent reports whether page was rendered from sources and is
// unedited outside its run block.
func pageCurrent(page []byte, sources string) bool {
	if sources == "" || page == nil {
		return false
	}
	r, err := report.ParseRun(page)
	if err != nil {
		return false
	}
	src, sum, ok := strings.Cut(r.Sources, " ")
	if !ok || src != sources {
		return false
	}
	got, err := pageSum(page)
	return err == nil && got == sum
}
