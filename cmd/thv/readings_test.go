package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"thv/stages/formats"
)

// TestReadingsQuick: thv readings on the quick profile runs each reading as
// an ordinary pipeline run against the shared store, once per instance seed
// of the sweep (the default reading has one fixed instance per cell): on
// instance seed 0 the default reading re-runs no run task of the quick
// repro; a reading of THV-UCB's δ re-runs, per instance, only THV-UCB's
// runs (2 settings × 4 geometries × 4 η × 3 seeds = 96), the runs of it
// its figures draw (24, with their trajectory) and the tasks downstream
// of them. It writes the report, its Parquet table and one lock
// per run; an unknown --only is an error.
func TestReadingsQuick(t *testing.T) {
	bin, dir := quickLocal(t)
	cmd := exec.Command(bin, "readings", "--profile", "quick", "-j", "2", "--set", "readings.instance_seeds=[0, 1]", "--only", "default", "--only", "delta-0.05")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("thv readings: %v\n%s", err, out)
	}
	executed := map[string]int{}
	for _, m := range regexp.MustCompile(`reading (\S+), instance seed (\d) \(\d/2\): \d+ tasks: (\d+) executed`).FindAllStringSubmatch(string(out), -1) {
		executed[m[1]+"/"+m[2]], _ = strconv.Atoi(m[3])
	}
	// default on instance seed 0: only the tasks over the sweep's two
	// settings (tables, compare) are new; every run, select, collect,
	// summarize is cached.
	if n, ok := executed["default/0"]; !ok || n > 4 {
		t.Errorf("default reading executed %d tasks on instance 0 (found %v), want at most the sweep-level tasks\n%s", n, ok, out)
	}
	if n := executed["default/1"]; n < 1000 {
		t.Errorf("default reading executed %d tasks on instance 1, want a whole protocol\n%s", n, out)
	}
	for _, inst := range []string{"0", "1"} {
		// (and the runs the figures draw of it, which keep their
		// trajectory: 2 settings × 4 geometries × 3 seeds)
		if n := executed["delta-0.05/"+inst]; n < 96 || n > 96+24+8*2+8+2+2+2 {
			t.Errorf("delta-0.05 executed %d tasks on instance %s, want THV-UCB's 96 runs, the 24 its figures draw, and what depends on them\n%s", n, inst, out)
		}
		for _, name := range []string{"default", "delta-0.05"} {
			if _, err := os.Stat(filepath.Join(dir, "results", "readings", name, "instance-seed="+inst+".lock")); err != nil {
				t.Error(err)
			}
		}
	}
	md, err := os.ReadFile(filepath.Join(dir, "results", "readings.md"))
	// The quick profile's T = 300 makes no published value comparable:
	// the sweep names its protocol and judges none (the per-reading
	// tables on comparable values: stages/compare's TestReadingSummarize).
	if err != nil || !strings.Contains(string(md), "| delta-0.05 | `algorithms.THV-UCB.params.delta=0.05` | 2 instances | 0 / 0 |") ||
		!strings.Contains(string(md), "Each reading varies a modified protocol: grid\\_seeds 3 (paper 10)") || strings.Contains(string(md), "## THV-UCB's Final Regret per reading") {
		t.Fatalf("readings.md: %v\n%s", err, md)
	}
	across, err := formats.DecodeComparisons(must(os.ReadFile(filepath.Join(dir, "results", "across-instances.parquet"))))
	if err != nil || len(across) != 224 || across[0].NotComparable != "T 300 vs 2000" {
		t.Fatalf("across-instances.parquet: %v, %d rows", err, len(across))
	}
	b, err := os.ReadFile(filepath.Join(dir, "results", "readings.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := formats.DecodeReadings(b)
	if err != nil || len(rows) != 2 || rows[0].Reading != "default" || rows[0].Values != 0 || rows[0].InstanceSeeds != 2 || !strings.HasPrefix(rows[1].CompareKey, "sha256:") ||
		!strings.HasPrefix(rows[0].Protocol, "a modified protocol: ") || !strings.HasPrefix(rows[0].ProtocolDigest, "sha256:") {
		t.Fatalf("readings.parquet: %v %+v", err, rows)
	}
	cmd = exec.Command(bin, "readings", "--profile", "quick", "--only", "nosuch")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); exitCode(err) != exitUsage || !strings.Contains(string(out), `--only "nosuch": no such reading`) {
		t.Fatalf("--only nosuch: %v\n%s", err, out)
	}
}
