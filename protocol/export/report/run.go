package report

import (
	"bytes"
	"errors"
	"fmt"
	"html"
	"strings"
	"unicode"
)

// Run is what the page says about the pass that wrote it, which no stored
// output determines: the same results may come from runs on other days,
// under other executors, by other builds of the same code. It is the one
// part of the page outside the byte-for-byte comparison of verify-bundle,
// which reads it back (ParseRun) and compares everything else (Same); the
// page says that these values are the writer's word, unchecked.
type Run struct {
	Date     string // when the results were exported, UTC
	Executor string // the executor of the pass that exported them
	Thv      string // the thv that wrote the page: version, module sum, Go
	Verify   string // what thv verify last showed of this lock, if it ran
	// Sources is the writer's memo of what it rendered the page from (the
	// export's business, protocol/export/report_memo.go), so that an
	// export that would write the same page need not render it: hex
	// digits and spaces, in a comment; "" none.
	Sources string
}

// runFields are the block's rows, in order.
var runFields = []struct {
	label string
	field func(*Run) *string
}{
	{"date", func(r *Run) *string { return &r.Date }},
	{"executor", func(r *Run) *string { return &r.Executor }},
	{"thv", func(r *Run) *string { return &r.Thv }},
	{"thv verify", func(r *Run) *string { return &r.Verify }},
}

// The block's delimiters: comments, so that they show nowhere.
const (
	runStart = "<!-- run: not reproducible, see docs/report.md -->\n"
	runEnd   = "<!-- /run -->\n"
	// notRecorded stands for an empty value.
	notRecorded = "not recorded"
	// maxRunValue bounds a value read back.
	maxRunValue = 500
)

// rowPrefix and rowSuffix frame a value of the block.
func rowPrefix(label string) string { return `<tr><th scope="row">` + label + `</th><td>` }

const rowSuffix = "</td></tr>\n"

// block renders the run's block.
func (r Run) block() string {
	var b strings.Builder
	b.WriteString(runStart)
	b.WriteString("<table class=\"kv\">\n")
	for _, f := range runFields {
		v := *f.field(&r)
		if v == "" {
			v = notRecorded
		}
		b.WriteString(rowPrefix(f.label) + esc(v) + rowSuffix)
	}
	b.WriteString("</table>\n")
	if r.Sources != "" {
		b.WriteString(sourcesPrefix + r.Sources + sourcesSuffix)
	}
	b.WriteString(runEnd)
	return b.String()
}

// The memo's line in the block.
const (
	sourcesPrefix = "<!-- sources "
	sourcesSuffix = " -->\n"
)

// validSources: hex digits and single spaces only (it sits in a comment).
func validSources(s string) bool {
	if s == "" || len(s) > maxRunValue || strings.Contains(s, "  ") {
		return false
	}
	for _, c := range s {
		if !strings.ContainsRune("0123456789abcdef ", c) {
			return false
		}
	}
	return true
}

// runSpan finds the run block of a page: its start and end offsets.
func runSpan(page []byte) (start, end int, err error) {
	start = bytes.Index(page, []byte(runStart))
	e := bytes.Index(page, []byte(runEnd))
	if start < 0 || e < start || bytes.Count(page, []byte(runStart)) != 1 || bytes.Count(page, []byte(runEnd)) != 1 {
		return 0, 0, errors.New("the page has no run block (or more than one)")
	}
	return start, e + len(runEnd), nil
}

// ParseRun reads the run block of a page written by Render. It accepts
// only the block's exact form: plain text values (no markup), each at most
// maxRunValue bytes, without control characters.
func ParseRun(page []byte) (Run, error) {
	start, end, err := runSpan(page)
	if err != nil {
		return Run{}, err
	}
	block := string(page[start:end])
	var r Run
	rest := strings.TrimPrefix(block, runStart+"<table class=\"kv\">\n")
	for _, f := range runFields {
		line, after, ok := strings.Cut(rest, "\n")
		value, found := strings.CutPrefix(line+"\n", rowPrefix(f.label))
		value, suffixed := strings.CutSuffix(value, rowSuffix)
		if !ok || !found || !suffixed {
			return Run{}, fmt.Errorf("the run block's row %q is not in its form", f.label)
		}
		v := html.UnescapeString(value)
		if strings.ContainsAny(value, "<>") || len(v) > maxRunValue || strings.IndexFunc(v, unicode.IsControl) >= 0 {
			return Run{}, fmt.Errorf("the run block's %s is not plain text of at most %d bytes", f.label, maxRunValue)
		}
		if v == notRecorded {
			v = ""
		}
		*f.field(&r) = v
		rest = after
	}
	if line, ok := strings.CutPrefix(rest, "</table>\n"+sourcesPrefix); ok {
		v, _, _ := strings.Cut(line, sourcesSuffix)
		if !validSources(v) {
			return Run{}, errors.New("the run block's sources line is not in its form")
		}
		r.Sources = v
	}
	if r.block() != block {
		return Run{}, errors.New("the run block is not in its form")
	}
	return r, nil
}

// WithRun returns the page with its run block replaced by r's.
func WithRun(page []byte, r Run) ([]byte, error) {
	start, end, err := runSpan(page)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(page))
	out = append(out, page[:start]...)
	out = append(out, r.block()...)
	return append(out, page[end:]...), nil
}

// Same checks that got is the page fresh with got's own run block: every
// byte outside that block is fresh's, and the block is in its form. It
// returns the run got states.
func Same(fresh, got []byte) (Run, error) {
	r, err := ParseRun(got)
	if err != nil {
		return Run{}, err
	}
	want, err := WithRun(fresh, r)
	if err != nil {
		return Run{}, err
	}
	if !bytes.Equal(want, got) {
		return Run{}, errors.New("it is not the page the stored outputs give (outside its run block)")
	}
	return r, nil
}
