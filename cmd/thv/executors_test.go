package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/spf13/cobra"

	"thv/artifacts"
	"thv/pipeline"
	"thv/protocol"
)

// countingExecutor runs specs through a pipeline.Worker in this process
// and counts them: the executor of the test-only row below.
type countingExecutor struct {
	w *pipeline.Worker
	n *atomic.Int64
}

func (e *countingExecutor) Execute(ctx context.Context, spec *pipeline.Spec) (map[string]artifacts.Digest, error) {
	e.n.Add(1)
	return e.w.Execute(ctx, spec)
}

func (e *countingExecutor) Close() error { return nil }

// runCommand runs a command made by newCmd in process, in the working
// directory, and returns what it printed.
func runCommand(t *testing.T, newCmd func() *cobra.Command, args ...string) (string, error) {
	t.Helper()
	cmd := newCmd()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(context.Background())
	return out.String(), err
}

// TestAddingAnExecutorIsOneRow: an executor registered as one row of
// executors, the way the four real ones are (with a flag of its own, a
// repro and a verify constructor), is offered by --executor, owns its
// flag, runs a repro (every executed task goes through it, and the lock
// is the local executor's byte for byte) and re-executes a verification;
// nothing else in cmd/thv names it.
func TestAddingAnExecutorIsOneRow(t *testing.T) {
	var repros, verifies atomic.Int64
	var note string
	noteFlag := &executorFlag{
		names: []string{"counting-note"},
		register: func(cmd *cobra.Command, _ *executorFlags) {
			cmd.Flags().StringVar(&note, "counting-note", "", "--executor counting: a note (a test)")
		},
	}
	executors = append(executors, executorRow{
		name:  "counting",
		help:  "in process, counted (a test)",
		flags: []*executorFlag{noteFlag},
		repro: func(_ *executorFlags, proj *protocol.Project) (pipeline.Executor, string, error) {
			kinds, err := protocol.Kinds()
			if err != nil {
				return nil, "", err
			}
			return &countingExecutor{w: &pipeline.Worker{Store: proj.Store, Kinds: kinds}, n: &repros}, "", nil
		},
		verify: func(_ *executorFlags, proj *protocol.Project) (newVerifyExecutor, error) {
			kinds, err := protocol.Kinds()
			if err != nil {
				return nil, err
			}
			return func(scratchDir string) (pipeline.Executor, error) {
				out, err := artifacts.Open(scratchDir, artifacts.Scratch)
				if err != nil {
					return nil, err
				}
				return &countingExecutor{w: &pipeline.Worker{Store: proj.Store, Kinds: kinds, Out: out}, n: &verifies}, nil
			}, nil
		},
	})
	t.Cleanup(func() { executors = executors[:len(executors)-1] })

	params := tinyParams(t)
	local, counted := t.TempDir(), t.TempDir()
	t.Chdir(local)
	if out, err := runCommand(t, newReproCommand, "--params", params, "-j", "2"); err != nil {
		t.Fatalf("repro --executor local: %v\n%s", err, out)
	}

	t.Chdir(counted)
	help, _ := runCommand(t, newReproCommand, "--help")
	if !strings.Contains(help, "or counting (in process, counted (a test))") || !strings.Contains(help, "--counting-note") {
		t.Errorf("repro --help does not offer the row:\n%s", help)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--counting-note", "hi"}, "--counting-note hi: only with --executor counting"},
		{[]string{"--executor", "counting", "--runtime", "runc"}, "--runtime runc: only with --executor container"},
		{[]string{"--executor", "countin"}, `--executor "countin": want local, process, container, slurm or counting`},
	} {
		if out, err := runCommand(t, newReproCommand, append([]string{"--params", params}, c.args...)...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("repro %v: %v\n%s\nwant an error containing %q", c.args, err, out, c.want)
		}
	}
	if repros.Load() != 0 {
		t.Fatalf("%d tasks ran through a refused executor", repros.Load())
	}
	if _, err := os.Stat(filepath.Join(counted, tinyLock)); err == nil {
		t.Fatal("a refused repro wrote a lock")
	}

	out, err := runCommand(t, newReproCommand, "--params", params, "-j", "2", "--json", "--executor", "counting", "--counting-note", "hello")
	if err != nil {
		t.Fatalf("repro --executor counting: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var r reproOut
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &r); err != nil {
		t.Fatalf("no JSON line last in:\n%s", out)
	}
	if r.Executed == 0 || int64(r.Executed) != repros.Load() {
		t.Errorf("%d tasks executed, %d through the row's executor", r.Executed, repros.Load())
	}
	if note != "hello" {
		t.Errorf("the row's flag reads %q", note)
	}
	want, _ := os.ReadFile(filepath.Join(local, tinyLock))
	got, _ := os.ReadFile(filepath.Join(counted, tinyLock))
	if len(want) == 0 || !bytes.Equal(got, want) {
		t.Fatal("--executor counting wrote another lock than --executor local")
	}

	out, err = runCommand(t, newVerifyCommand, "--params", params, "--skip-store", "--executor", "counting")
	if err != nil || !strings.Contains(out, "every output identical") {
		t.Fatalf("verify --executor counting: %v\n%s", err, out)
	}
	if verifies.Load() == 0 {
		t.Error("the verification re-executed no task through the row's executor")
	}
}

// TestExecutorRowsAreWellFormed: every row of executors names itself
// once, has a repro constructor, and either a verify constructor or the
// reason it has none; every flag a row lists is one its registration adds,
// and the table's flags are refused with every other executor.
func TestExecutorRowsAreWellFormed(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range executors {
		if r.name == "" || seen[r.name] || r.help == "" || r.repro == nil || (r.verify == nil) == (r.noVerify == "") {
			t.Errorf("row %q: want a new name, a help line, a repro constructor, and a verify constructor or why there is none", r.name)
		}
		seen[r.name] = true
	}
	for _, name := range []string{"repro", "readings", "verify", "verify-bundle"} {
		var f executorFlags
		cmd := &cobra.Command{Use: name}
		f.register(cmd)
		for _, r := range f.rows() {
			for _, fl := range r.flags {
				for _, n := range fl.names {
					if cmd.Flags().Lookup(n) == nil {
						t.Errorf("%s: row %s lists --%s, which its registration does not add", name, r.name, n)
					}
				}
			}
		}
		for _, n := range f.owned {
			if slices.Contains(f.owners[n], "local") {
				t.Errorf("%s: --%s is the local executor's", name, n)
			}
		}
		if f.verifying && slices.Contains(f.owned, "slurm-partition") {
			t.Errorf("%s: offers the flags of slurm, which cannot verify", name)
		}
	}
}

// TestWorkerCommandIsExecTasks: the command line the engine writes for
// every executor's workers (pipeline.WorkerArgs) is one that thv
// exec-task reads back, flag for flag.
func TestWorkerCommandIsExecTasks(t *testing.T) {
	args := pipeline.WorkerArgs{Store: "/s t", Out: "/o", MaxMemory: 5 << 30}.Command("/bin/thv", "a.spec", "b.spec")
	cmd := newExecTaskCommand()
	if args[0] != "/bin/thv" || args[1] != cmd.Name() {
		t.Fatalf("worker command %q: want /bin/thv %s …", args, cmd.Name())
	}
	if err := cmd.ParseFlags(args[2:]); err != nil {
		t.Fatalf("exec-task does not read %q: %v", args, err)
	}
	store, _ := cmd.Flags().GetString("store")
	out, _ := cmd.Flags().GetString("out")
	mem, _ := cmd.Flags().GetInt64("max-memory")
	if store != "/s t" || out != "/o" || mem != 5<<30 || !slices.Equal(cmd.Flags().Args(), []string{"a.spec", "b.spec"}) {
		t.Errorf("exec-task read store %q, out %q, max-memory %d, specs %q from %q", store, out, mem, cmd.Flags().Args(), args)
	}
	if got := (pipeline.WorkerArgs{Store: "/s"}).Command("thv"); !slices.Equal(got, []string{"thv", cmd.Name(), "--store", "/s"}) {
		t.Errorf("without Out and MaxMemory: %q", got)
	}
}
