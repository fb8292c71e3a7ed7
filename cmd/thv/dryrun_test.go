package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"thv/artifacts"
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

	// The index entry of one select task made to name the summary object
	// of a run as its selection, as a forger with the store would.
	st, err := artifacts.Open(filepath.Join(dir, ".thv"), artifacts.Create)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := st.Keys()
	if err != nil {
		t.Fatal(err)
	}
	var selectEntry, run artifacts.Entry
	for _, k := range keys {
		e, ok, err := st.GetEntry(k)
		if err != nil || !ok {
			continue
		}
		switch {
		case e.Kind == "select" && selectEntry.Kind == "":
			selectEntry = e
		case e.Kind == "run" && run.Kind == "":
			run = e
		}
	}
	if selectEntry.Kind == "" || run.Kind == "" {
		t.Fatalf("no select entry or run among %d index entries", len(keys))
	}
	summary, _ := run.Output("summary")
	selectEntry.Outputs = []artifacts.Output{{Name: "selection", Digest: summary.Digest, Size: summary.Size}}
	if err := st.PutEntry(selectEntry); err != nil {
		t.Fatal(err)
	}
	if err := st.Sync(); err != nil {
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
