package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestDryRunPrintsFailedLines: a dry run in which tasks fail (here: the η*
// selection in the store's index points at an object that is no
// selection, and the lock that would vouch for the right one is gone)
// prints a FAILED line for each, naming the task and the cause, before
// "N tasks failed (see FAILED lines above)". It used to print the count
// alone: a dry run has no progress to print them.
func TestDryRunPrintsFailedLines(t *testing.T) {
	bin := buildThv(t, moduleRoot(t))
	dir := t.TempDir()
	thvRepro(t, bin, dir)

	// The index entry of one select task and the summary object of a run.
	var selectEntry, summary string
	var summarySize int64
	files, _ := filepath.Glob(filepath.Join(dir, ".thv", "index", "*", "*.json"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var e struct {
			Kind    string
			Outputs []struct {
				Name, Digest string
				Size         int64
			}
		}
		if err := json.Unmarshal(b, &e); err != nil {
			t.Fatal(err)
		}
		switch {
		case e.Kind == "select" && selectEntry == "":
			selectEntry = f
		case e.Kind == "run" && summary == "":
			summary, summarySize = e.Outputs[0].Digest, e.Outputs[0].Size
		}
	}
	if selectEntry == "" || summary == "" {
		t.Fatalf("no select entry or run summary among %d index files", len(files))
	}
	b, _ := os.ReadFile(selectEntry)
	bad := regexp.MustCompile(`("name": "selection",\s*"digest": )"[^"]*",(\s*"size": )\d+`).
		ReplaceAllString(string(b), `$1"`+summary+`",${2}`+strconv.FormatInt(summarySize, 10))
	if bad == string(b) {
		t.Fatalf("no selection output in %s:\n%s", selectEntry, b)
	}
	if err := os.WriteFile(selectEntry, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, tinyLock)); err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(bin, "repro", "--dry-run", "--params", tinyParams(t))
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	m := regexp.MustCompile(`thv: (\d+) tasks failed \(see FAILED lines above\)`).FindSubmatch(out)
	if err == nil || m == nil {
		t.Fatalf("dry run: %v\n%s", err, out)
	}
	failed := regexp.MustCompile(`(?m)^FAILED collect/\S+: reading η\* from select/\S+: .+$`).FindAll(out, -1)
	lines := regexp.MustCompile(`(?m)^FAILED `).FindAll(out, -1)
	if n, _ := strconv.Atoi(string(m[1])); n == 0 || len(failed) != n || len(lines) != n {
		t.Fatalf("%s tasks failed, %d FAILED lines naming the cause:\n%s", m[1], len(failed), out)
	}
	if regexp.MustCompile(`(?m)^all \d+ tasks up to date$`).Match(out) || !strings.Contains(string(out), "none stale; "+string(m[1])+" failed") {
		t.Errorf("a dry run with failed tasks says all are up to date:\n%s", out)
	}
}
