//go:build unix

package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"thv/protocol/config"
)

const limitsDoc = `docs/reliability.md, "Protocol limits"`

// TestRunCeilings: thv run's flags and --instance files meet the
// protocol's ceilings (protocol/config/limits.go) with an error naming the
// flag or file, the value, the limit and the fix, before anything is
// allocated: --T 2147483647 used to end in an out-of-memory crash.
func TestRunCeilings(t *testing.T) {
	base := []string{"--d", "2", "--geometry", "concave", "--algo", "THV-UCB", "--eta", "0.1", "--json"}
	dir := t.TempDir()
	csv := func(name string, rows, cols int) string {
		var b strings.Builder
		for i := range rows {
			for j := range cols {
				if j > 0 {
					b.WriteByte(',')
				}
				fmt.Fprintf(&b, "%.3f", float64((i*7+j*3)%100)/100)
			}
			b.WriteByte('\n')
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	if help := strings.Join(strings.Fields(newRunCommand().Long), " "); !strings.Contains(help, fmt.Sprintf("(d ≤ %d, n ≤ %d, k ≤ %d, T ≤ %d, σ ≤ %g:", config.MaxD, config.MaxN, config.MaxK, config.MaxT, config.MaxSigma)) {
		t.Errorf("thv run --help states other ceilings than protocol/config:\n%s", help)
	}
	arms201, d11 := csv("arms201.csv", 201, 2), csv("d11.csv", 5, 11)
	chebyshev := filepath.Join(dir, "cheb.yaml")
	params, err := os.ReadFile(tinyParams(t))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(chebyshev, []byte(strings.Replace(string(params), "  - {name: RandomK}", "  - {name: RandomK}\n  - {name: ChebyshevUCB, eta: [0.1], params: {divisions: 30}}", 1)), 0o644)
	for _, c := range []struct {
		args []string
		want string // the whole error
	}{
		{[]string{"--T", "2147483647"}, "--T 2147483647: above the limit of 100000 on the horizon T (a run's time and memory grow with T; " + limitsDoc + "): give at most 100000"},
		{[]string{"--T", "100001"}, "--T 100001: above the limit of 100000 on the horizon T (a run's time and memory grow with T; " + limitsDoc + "): give at most 100000"},
		{[]string{"--k", "9"}, "--k 9: above the limit of 8 on the slate size k (the benchmark's search and each round's slate grow steeply with k; " + limitsDoc + "): give at most 8"},
		{[]string{"--n", "201"}, "--n 201: above the limit of 200 on the number of arms n (the exact benchmark V* searches the front's subsets; " + limitsDoc + "): give at most 200"},
		{[]string{"--d", "11"}, "--d 11: above the limit of 10 on the number of objectives d (the hypervolume's cost grows exponentially with d; " + limitsDoc + "): give at most 10"},
		{[]string{"--sigma", "11"}, "--sigma 11: above the limit of 10 on the noise level σ (the means lie in [0, 1]; " + limitsDoc + "): give at most 10"},
		{[]string{"--set", "settings.d2.T=2147483647"}, "embedded params.yaml (profile paper): settings.d2.T = 2147483647: above the limit of 100000 on the horizon T (a run's time and memory grow with T; " + limitsDoc + "): give at most 100000"},
	} {
		args := append(append([]string{}, base...), c.args...)
		if _, err := execute(t, newRunCommand(), args...); err == nil || err.Error() != c.want {
			t.Errorf("thv run %v:\n err  %v\n want %s", c.args, err, c.want)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--instance", arms201, "--k", "2", "--T", "300", "--sigma", "0.1"}, arms201 + ": n = 201: above the limit of 200 on the number of arms n (the exact benchmark V* searches the front's subsets; " + limitsDoc + "): give at most 200"},
		{[]string{"--instance", d11, "--k", "2", "--T", "300", "--sigma", "0.1"}, d11 + ": d = 11: above the limit of 10 on the number of objectives d (the hypervolume's cost grows exponentially with d; " + limitsDoc + "): give at most 10"},
		{[]string{"--instance", dir, "--k", "2", "--T", "300", "--sigma", "0.1"}, "--instance: " + dir + ": not a regular file (a directory); give a file"},
		{[]string{"--instance", "/dev/zero", "--k", "2", "--T", "300", "--sigma", "0.1"}, "--instance: /dev/zero: not a regular file (a character device); give a file"},
		// divisions 30 at d = 10: C(39, 9) weight vectors, where params.yaml's d ≤ 3 make at most C(32, 2).
		{[]string{"--params", chebyshev, "--d", "10", "--n", "20", "--k", "2", "--T", "300", "--sigma", "0.1", "--geometry", "linear", "--algo", "ChebyshevUCB", "--eta", "0.1"}, "algorithms.ChebyshevUCB.params.divisions = 30: C(H+d−1, d−1) weight vectors with d = 10 (--d) are more than 100000, the limit on ChebyshevUCB's lattice (" + limitsDoc + "): give fewer divisions"},
	} {
		args := append([]string{"--algo", "RandomK", "--json"}, c.args...)
		if _, err := execute(t, newRunCommand(), args...); err == nil || err.Error() != c.want {
			t.Errorf("thv run %v:\n err  %v\n want %s", c.args, err, c.want)
		}
	}
}

// TestUserFilesRefused: every file a user names (--params, --reference,
// --instance, thv hv FILE) that is a named pipe, a device or a directory is
// refused at once, naming the file and its kind; one over its size limit is
// refused without being read whole. Before, a FIFO blocked the command and
// /dev/zero grew it until it was killed.
func TestUserFilesRefused(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	f.Truncate(300 << 20) // sparse: larger than every limit, nothing written
	f.Close()
	bin := buildThv(t, moduleRoot(t))
	for _, c := range []struct {
		args []string
		want string // the whole of stderr
	}{
		{[]string{"hv", fifo}, fifo + ": not a regular file (a named pipe); give a file"},
		{[]string{"hv", "/dev/zero"}, "/dev/zero: not a regular file (a character device); give a file"},
		{[]string{"hv", dir}, dir + ": not a regular file (a directory); give a file"},
		{[]string{"hv", big}, big + ": larger than the limit of 16 MiB"},
		{[]string{"compare", "--reference", fifo}, "--reference: " + fifo + ": not a regular file (a named pipe); give a file"},
		{[]string{"compare", "--reference", "/dev/zero"}, "--reference: /dev/zero: not a regular file (a character device); give a file"},
		{[]string{"compare", "--reference", big}, "--reference: " + big + ": larger than the limit of 4 MiB"},
		{[]string{"repro", "--dry-run", "--params", fifo}, "reading params: " + fifo + ": not a regular file (a named pipe); give a file"},
		{[]string{"repro", "--dry-run", "--params", "/dev/zero"}, "reading params: /dev/zero: not a regular file (a character device); give a file"},
		{[]string{"repro", "--dry-run", "--params", big}, big + ": larger than 1 MiB (1048576 bytes), the limit on a params file"},
		{[]string{"run", "--instance", fifo, "--algo", "RandomK", "--k", "2", "--T", "300", "--sigma", "0.1"}, "--instance: " + fifo + ": not a regular file (a named pipe); give a file"},
	} {
		out, err := runWithin(t, bin, dir, 20*time.Second, c.args...)
		if want := "thv: " + c.want + "\n"; err == nil || out != want {
			t.Errorf("thv %s: %v\n%s\nwant %q", strings.Join(c.args, " "), err, out, want)
		}
	}
	// Standard input stays a stream, read through the same limit.
	if out, err := runWithin(t, bin, dir, 20*time.Second, "hv", "-"); err == nil || !strings.Contains(out, "no points") {
		t.Errorf("thv hv - with empty input: %v %s", err, out)
	}
}

// runWithin runs bin with args in dir, standard input empty, and fails the
// test if it has not ended after d (a blocked read would hang it).
func runWithin(t *testing.T, bin, dir string, d time.Duration, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("thv %s: still running after %v:\n%s", strings.Join(args, " "), d, out.String())
	}
	return out.String(), err
}

// TestHVStdinLimit: standard input is read through the same limit as a
// file: 16 MiB is read, one byte more is refused (not silently cut).
func TestHVStdinLimit(t *testing.T) {
	body := strings.Repeat("#\n", maxHVInputBytes/2-2) + "1 2\n" // exactly 16 MiB
	for _, c := range []struct {
		in, want string
		err      bool
	}{{body, "2\n", false}, {body + "\n", "", true}, {"# x\n" + body, "", true}} {
		cmd := newHVCommand()
		cmd.SetIn(strings.NewReader(c.in))
		out, err := execute(t, cmd)
		switch {
		case c.err && (err == nil || err.Error() != "standard input: larger than the limit of 16 MiB"):
			t.Errorf("%d bytes: %v %q", len(c.in), err, out)
		case !c.err && (err != nil || out != c.want):
			t.Errorf("%d bytes: %v %q", len(c.in), err, out)
		}
	}
}
