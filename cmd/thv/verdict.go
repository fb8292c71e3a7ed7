package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"thv/pipeline"
	"thv/pipeline/bundle"
	"thv/stages/compare"
	"thv/stages/report"
)

// The verdict of thv verify and thv verify-bundle: what was checked, what
// was not (and why), the protocol the results are of, the outcome and
// its exit status, as text and, with --json, as one object (checkJSON).

// Outcomes of a check, the words of its verdict and of --json.
const (
	outcomeVerified   = "verified"
	outcomeRejected   = "rejected"
	outcomeNotChecked = "not checked"
	outcomeSample     = "sample agreed"
)

// outcomeCode is an outcome's exit status.
var outcomeCode = map[string]int{outcomeVerified: exitVerified, outcomeRejected: exitRejected, outcomeNotChecked: exitNotChecked, outcomeSample: exitSample}

// checkItem is one thing a verdict says it checked, or did not.
type checkItem struct {
	Item   string   `json:"item"`
	Status string   `json:"status"`          // "checked" or "not checked"
	Reason string   `json:"reason"`          // how it was checked, or why not
	Files  []string `json:"files,omitempty"` // the files Item stands for, where it names several
}

// checkList gathers the items of a verdict, in the order they were met.
type checkList []checkItem

func (l *checkList) checked(item, how string) {
	*l = append(*l, checkItem{Item: item, Status: "checked", Reason: how})
}

func (l *checkList) notChecked(item, why string) {
	*l = append(*l, checkItem{Item: item, Status: "not checked", Reason: why})
}

// add appends a bundle's account: a part re-executed or re-derived is
// checked, and says which.
func (l *checkList) add(checks ...bundle.Check) {
	for _, c := range checks {
		it := checkItem{Item: c.Item, Status: "checked", Reason: c.Status + ": " + c.Reason, Files: c.Files}
		if c.Status == bundle.NotChecked {
			it.Status, it.Reason = "not checked", c.Reason
		}
		*l = append(*l, it)
	}
}

// maxListedFiles is how many files of an item the text prints (--json
// lists them all).
const maxListedFiles = 10

// print writes the list: what was checked, then what was not.
func (l checkList) print(w io.Writer) {
	for _, status := range []string{"checked", "not checked"} {
		first := true
		for _, it := range l {
			if it.Status != status {
				continue
			}
			if first {
				fmt.Fprintf(w, "%s:\n", status)
				first = false
			}
			fmt.Fprintf(w, "  %s: %s\n", terminalText(it.Item), terminalText(it.Reason))
			for i, f := range it.Files {
				if i == maxListedFiles {
					fmt.Fprintf(w, "    … and %d more (--dir DIR keeps them to read)\n", len(it.Files)-i)
					break
				}
				fmt.Fprintf(w, "    %s\n", terminalText(f))
			}
		}
	}
}

// checkJSON is the object thv verify --json and thv verify-bundle --json
// print.
type checkJSON struct {
	Command  string        `json:"command"`
	Bundle   string        `json:"bundle,omitempty"`
	Outcome  string        `json:"outcome"` // verified, rejected, not checked, sample agreed, interrupted, error
	Exit     int           `json:"exit"`
	Message  string        `json:"message"` // the verdict's sentence, or the reason of a rejection
	Protocol *protocolJSON `json:"protocol"`
	// Against is the results' headline against the paper (the page's),
	// if they have a comparison.
	Against string      `json:"against_paper,omitempty"`
	Tasks   int         `json:"tasks"`
	Kinds   []kindJSON  `json:"kinds"`
	Sample  *sampleJSON `json:"sample"`
	// Differences name the tasks that did not reproduce, the disputes
	// and the store's problems, at most 100 of each.
	Differences []string    `json:"differences"`
	Items       []checkItem `json:"items"`
	// RunBlock is what the page's run block states: the author's word,
	// not checked.
	RunBlock *runBlockJSON `json:"run_block,omitempty"`
}

type kindJSON struct {
	Kind       string `json:"kind"`
	Tasks      int    `json:"tasks"`
	ReExecuted int    `json:"re_executed"`
	Identical  int    `json:"identical"`
	Differing  int    `json:"differing"`
	Failed     int    `json:"failed"`
}

type sampleJSON struct {
	Tasks        int     `json:"tasks"`
	Seed         uint64  `json:"seed"`
	EscapeChance float64 `json:"escape_chance"`
}

type runBlockJSON struct {
	Status   string `json:"status"` // "stated by the author, not checked"
	Date     string `json:"date"`
	Executor string `json:"executor"`
	Thv      string `json:"thv"`
	Verify   string `json:"thv_verify"`
}

// runStated is the words for the run block's rows.
const runStated = "stated by the author, not checked"

func runBlockOf(r *report.Run) *runBlockJSON {
	if r == nil {
		return nil
	}
	return &runBlockJSON{Status: runStated, Date: r.Date, Executor: r.Executor, Thv: r.Thv, Verify: r.Verify}
}

// runBlockText is every row of a page's run block, each escaped, as the
// author's word.
func runBlockText(r report.Run) string {
	return fmt.Sprintf("%s: date %q, executor %q, thv %q, thv verify %q", runStated, r.Date, r.Executor, r.Thv, r.Verify)
}

// newCheckJSON starts the object of a check.
func newCheckJSON(command string, proto *compare.Protocol) checkJSON {
	j := checkJSON{Command: command, Kinds: []kindJSON{}, Differences: []string{}, Items: []checkItem{}}
	if proto != nil {
		p := protocolOf(*proto)
		j.Protocol = &p
	}
	return j
}

// addReport fills in what a verification report says.
func (j *checkJSON) addReport(rep *pipeline.VerifyReport, sample int, seed uint64) {
	if rep == nil {
		return
	}
	j.Tasks = rep.Tasks()
	for _, k := range rep.Kinds {
		j.Kinds = append(j.Kinds, kindJSON{k.Kind, k.Tasks, k.Checked, k.Agreed, k.Differed, k.Failed})
	}
	if sample > 0 {
		p, _ := rep.EscapeChance()
		j.Sample = &sampleJSON{Tasks: sample, Seed: seed, EscapeChance: p}
	}
	add := func(prefix string, s fmt.Stringer) {
		if len(j.Differences) < 300 {
			j.Differences = append(j.Differences, prefix+s.String())
		}
	}
	for _, p := range rep.Store.Problems {
		add("store: ", p)
	}
	for _, d := range rep.Disputes {
		add("dispute: ", d)
	}
	for _, m := range rep.Mismatches {
		add("differs: ", m)
	}
}

// finish sets the outcome from err (nil: verified, or a sample that
// agreed; with ctx cancelled, interrupted) and writes the object.
func (j *checkJSON) finish(ctx context.Context, w io.Writer, err error, sampled bool) error {
	switch {
	case err != nil && ctx.Err() != nil:
		j.Outcome, j.Message = "interrupted", err.Error()
	case err == nil && sampled:
		j.Outcome = outcomeSample
	case err == nil:
		j.Outcome = outcomeVerified
	default:
		j.Outcome = outcomeOf(err)
		j.Message = err.Error()
	}
	j.Exit = outcomeCode[j.Outcome]
	if j.Outcome == "interrupted" {
		j.Exit = 130 // 143 if by SIGTERM
	} else if j.Exit == 0 && err != nil {
		j.Exit = exitStatus(nil, err, nil)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(j)
}

// outcomeOf is the outcome an error of a check stands for.
func outcomeOf(err error) string {
	switch exitStatus(nil, asCheck(err), nil) {
	case exitRejected:
		return outcomeRejected
	case exitSample:
		return outcomeSample
	case exitUsage:
		return "error"
	}
	return outcomeNotChecked
}

// verdictLine is the one-line headline against the paper, for a check's
// text.
func verdictLine(v compare.Verdict, acrossStated bool) string {
	s := v.Sentence()
	if v.Across != nil && acrossStated {
		s += " (The judgement across instances is thv readings' table in results/: the author's word, not re-executed here.)"
	}
	return strings.TrimSpace(s)
}
