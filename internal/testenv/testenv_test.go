package testenv

import (
	"fmt"
	"strings"
	"testing"
)

// recorder is a testing.TB that records how a test was ended.
type recorder struct {
	testing.TB
	skipped, failed string
}

// The methods Missing may call; any other would panic (nil TB).
func (r *recorder) Helper()                   {}
func (r *recorder) Skip(args ...any)          { r.skipped = fmt.Sprint(args...) }
func (r *recorder) Fatalf(f string, a ...any) { r.failed = fmt.Sprintf(f, a...) }

// TestMissing: a missing requirement skips the test, saying what is
// missing, except in CI, where it fails it.
func TestMissing(t *testing.T) {
	for _, tc := range []struct {
		ci   string
		fail bool
	}{{"", false}, {"false", false}, {"0", false}, {"true", true}, {"1", true}, {"yes", true}} {
		t.Setenv("CI", tc.ci)
		var r recorder
		Missing(&r, "pdflatex not found: apt-get install %s", "texlive-latex-base")
		got := r.skipped
		if tc.fail {
			got = r.failed
		}
		if (r.failed != "") != tc.fail || (r.skipped != "") == tc.fail || !strings.HasPrefix(got, "pdflatex not found: apt-get install texlive-latex-base") {
			t.Errorf("CI=%q: skipped %q, failed %q; want it to fail: %v, with the message", tc.ci, r.skipped, r.failed, tc.fail)
		}
		if CI() != tc.fail {
			t.Errorf("CI=%q: CI() = %v", tc.ci, CI())
		}
	}
}

// TestLookPath: a tool on PATH is found; a missing one ends the test by
// Missing.
func TestLookPath(t *testing.T) {
	t.Setenv("CI", "")
	var r recorder
	if p := LookPath(&r, "thv-no-such-tool", "sh"); p == "" || r.skipped != "" {
		t.Errorf("LookPath(sh) = %q, skipped %q", p, r.skipped)
	}
	r = recorder{}
	if p := LookPath(&r, "thv-no-such-tool"); p != "" || !strings.Contains(r.skipped, "thv-no-such-tool not found") {
		t.Errorf("a missing tool: %q, skipped %q", p, r.skipped)
	}
}
