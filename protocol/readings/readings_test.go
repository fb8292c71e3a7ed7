package readings

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"thv/protocol"
	"thv/protocol/config"
	"thv/protocol/export"
	"thv/stages/formats"
)

// sweepParams is the tiny protocol, with one fixed instance per cell, and
// a readings sweep of three readings on d2: two of them (default, and
// another δ) on two instance seeds.
func sweepParams(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile("../testdata/tiny.yaml")
	if err != nil {
		t.Fatal(err)
	}
	src := strings.Replace(string(b), "instances: {mode: per_seed, seed: 0}", "instances: {mode: fixed, seed: 0}", 1) + `readings:
  settings: [d2]
  instance_seeds: [0, 1]
  variants:
    - {name: default, set: [], why: the protocol as it is}
    - {name: delta-0.5, set: [algorithms.THV-UCB.params.delta=0.5], why: another δ}
    - {name: per-seed, set: [instances.mode=per_seed], why: one instance per seed}
`
	path := filepath.Join(dir, "sweep.yaml")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func runSweep(t *testing.T, dir, params string, only ...string) (*Sweep, string) {
	t.Helper()
	var log bytes.Buffer
	s, err := Run(context.Background(), Options{
		Project: protocol.Options{LoadOptions: config.LoadOptions{ParamsFile: params}, Dir: dir, StoreDir: filepath.Join(dir, "store")},
		Only:    only, Jobs: 2, Log: &log,
	})
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	return s, log.String()
}

// executed is the tasks each reading's passes executed, by the label the
// log gives them.
func executed(log string) map[string]int {
	out := map[string]int{}
	for _, m := range regexp.MustCompile(`(?m)^reading (.+): (\d+) tasks: (\d+) executed`).FindAllStringSubmatch(log, -1) {
		out[m[1]], _ = strconv.Atoi(m[3])
	}
	return out
}

// TestSweep: each reading is an ordinary pass against the one store,
// once per instance seed for the reading of fixed instances; a reading
// that changes THV-UCB's δ executes only THV-UCB's runs and what reads
// them; the table, the report and the judgement across instances land in
// results/, one row and one lock per reading (per instance); a second
// sweep executes nothing and rewrites nothing.
func TestSweep(t *testing.T) {
	dir := t.TempDir()
	params := sweepParams(t, dir)
	s, log := runSweep(t, dir, params)
	if len(s.Rows) != 3 || s.Rows[0].Reading != "default" || s.Rows[0].InstanceSeeds != 2 || s.Rows[2].InstanceSeeds != 0 || s.Proposed != "THV-UCB" {
		t.Fatalf("rows %+v", s.Rows)
	}
	ex := executed(log)
	first, second := ex["default, instance seed 0 (1/2)"], ex["default, instance seed 1 (2/2)"]
	if first == 0 || second == 0 || ex["per-seed"] == 0 || len(ex) != 5 {
		t.Fatalf("executed %v\n%s", ex, log)
	}
	// Another δ reruns, on each instance, THV-UCB's runs (2 geometries ×
	// 2 η × 2 seeds) and what reads them: the runs its figure draws (2
	// geometries × 2 seeds, each keeping its trajectory), 2 selects, 2
	// collects, the summarize, the figures, the tables and compare.
	for _, label := range []string{"delta-0.5, instance seed 0 (1/2)", "delta-0.5, instance seed 1 (2/2)"} {
		if n := ex[label]; n < 8 || n > 8+4+2+2+4 {
			t.Errorf("%s executed %d tasks, want THV-UCB's 8 runs and what reads them\n%s", label, n, log)
		}
	}
	for _, f := range []string{export.ReadingsTable, export.ReadingsReport, export.AcrossFile,
		"readings/default/instance-seed=0.lock", "readings/default/instance-seed=1.lock", "readings/delta-0.5/instance-seed=1.lock", "readings/per-seed.lock"} {
		if _, err := os.Stat(filepath.Join(dir, "results", f)); err != nil {
			t.Error(err)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "results", export.ReadingsTable))
	if err != nil {
		t.Fatal(err)
	}
	if rows, err := formats.DecodeReadings(b); err != nil || len(rows) != 3 || rows[2].Reading != "per-seed" || !strings.HasPrefix(rows[0].ProtocolDigest, "sha256:") {
		t.Errorf("%s: %v %+v", export.ReadingsTable, err, rows)
	}
	before := map[string]time.Time{}
	for _, f := range []string{export.ReadingsTable, export.ReadingsReport, export.AcrossFile} {
		fi, err := os.Stat(filepath.Join(dir, "results", f))
		if err != nil {
			t.Fatal(err)
		}
		before[f] = fi.ModTime()
	}
	time.Sleep(10 * time.Millisecond)
	again, log := runSweep(t, dir, params)
	for label, n := range executed(log) {
		if n != 0 {
			t.Errorf("second sweep: %s executed %d tasks", label, n)
		}
	}
	if len(again.Rows) != 3 {
		t.Errorf("second sweep: %d rows", len(again.Rows))
	}
	for f, mod := range before {
		if fi, err := os.Stat(filepath.Join(dir, "results", f)); err != nil || !fi.ModTime().Equal(mod) {
			t.Errorf("second sweep rewrote %s", f)
		}
	}
}

// TestOnlyAndUnknownReading: --only runs the named readings alone (and a
// sweep without the default reading leaves no judgement across
// instances); a name that is no reading is ErrUnknownReading, naming the
// readings.
func TestOnlyAndUnknownReading(t *testing.T) {
	dir := t.TempDir()
	params := sweepParams(t, dir)
	if err := os.MkdirAll(filepath.Join(dir, "results"), 0o755); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(dir, "results", export.AcrossFile)
	if err := os.WriteFile(stale, []byte("another sweep's"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, _ := runSweep(t, dir, params, "per-seed")
	if len(s.Rows) != 1 || s.Rows[0].Reading != "per-seed" {
		t.Errorf("rows %+v", s.Rows)
	}
	if _, err := os.Stat(stale); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s of another sweep left: %v", export.AcrossFile, err)
	}
	_, err := Run(context.Background(), Options{Project: protocol.Options{LoadOptions: config.LoadOptions{ParamsFile: params}, Dir: dir}, Only: []string{"nosuch"}})
	if !errors.Is(err, ErrUnknownReading) || !strings.Contains(err.Error(), "default, delta-0.5, per-seed") {
		t.Errorf("--only nosuch: %v", err)
	}
}

// TestPrint: the table has a row per reading and names the report.
func TestPrint(t *testing.T) {
	var b bytes.Buffer
	(&Sweep{Rows: []formats.ReadingRow{{Reading: "default", Values: 4, Agree: 3}}, Proposed: "THV-UCB", Report: "results/readings.md"}).Print(&b)
	if !strings.Contains(b.String(), "CI ratio THV-UCB HV") || !strings.Contains(b.String(), "default  3/4") || !strings.HasSuffix(b.String(), "report: results/readings.md\n") {
		t.Errorf("%s", b.String())
	}
}

// TestWriteIfChanged: the sweep's files are written only when their
// content changes.
func TestWriteIfChanged(t *testing.T) {
	path := filepath.Join(t.TempDir(), "readings.md")
	if err := writeIfChanged(path, []byte("one")); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
	if err := writeIfChanged(path, []byte("one")); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || !fi.ModTime().Equal(old) {
		t.Fatalf("the same content was written again (%v)", err)
	}
	if err := writeIfChanged(path, []byte("two")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "two" {
		t.Fatalf("new content not written: %q", b)
	}
}
