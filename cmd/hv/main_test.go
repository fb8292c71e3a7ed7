package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"thv/internal/testenv"
)

// TestSameAsThvHV: hv prints what thv hv prints, and fails where it fails
// with the same message, on the inputs of thv hv's own tests and on
// malformed ones.
func TestSameAsThvHV(t *testing.T) {
	goCmd := testenv.LookPath(t, "go")
	dir := t.TempDir()
	thv := filepath.Join(dir, "thv")
	if out, err := exec.Command(goCmd, "build", "-o", thv, "thv/cmd/thv").CombinedOutput(); err != nil {
		t.Fatalf("go build thv: %v\n%s", err, out)
	}
	file := filepath.Join(dir, "front.csv")
	if err := os.WriteFile(file, []byte("# f1,f2,f3\n0.9,0.2,0.1\n0.1,0.8,0.4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args  []string
		stdin string
	}{
		{nil, "1 3\n2 2\n3 1\n"},
		{[]string{"--ref", "0.05,0.05,0.05", file}, ""},
		{[]string{"-"}, "0.5 0.5\n"},
		{[]string{"--ref", "-1,-1"}, "0 0\n1 1\n"},
		{nil, "1 2\n3\n"},                    // wrong number of coordinates
		{nil, "1 x\n"},                       // not a number
		{nil, ""},                            // no points
		{[]string{"--ref", "1,,2"}, "1 2\n"}, // an empty field
		{nil, "1e160 1e160 1e160\n"},         // overflows
		{[]string{filepath.Join(dir, "missing")}, ""},
	} {
		var out, errOut bytes.Buffer
		code := run(c.args, strings.NewReader(c.stdin), &out, &errOut)
		cmd := exec.Command(thv, append([]string{"hv"}, c.args...)...)
		cmd.Stdin = strings.NewReader(c.stdin)
		var wantOut, wantErr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &wantOut, &wantErr
		err := cmd.Run()
		wantCode := 0
		if e, ok := err.(*exec.ExitError); ok {
			wantCode = e.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		got := strings.TrimPrefix(errOut.String(), "hv: ")
		want := strings.TrimPrefix(wantErr.String(), "thv: ")
		if code != wantCode || out.String() != wantOut.String() || got != want {
			t.Errorf("hv %q < %q: status %d, out %q, err %q; thv hv: status %d, out %q, err %q", c.args, c.stdin, code, out.String(), errOut.String(), wantCode, wantOut.String(), wantErr.String())
		}
	}
}

// TestLinksNoPipeline: hv links no package of thv but the hypervolume,
// its input reader and the user-file checks: what keeps it fast to start.
func TestLinksNoPipeline(t *testing.T) {
	goCmd := testenv.LookPath(t, "go")
	out, err := exec.Command(goCmd, "list", "-deps", "thv/cmd/hv").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range strings.Fields(string(out)) {
		switch {
		case p == "thv/hv" || p == "thv/internal/hvcli" || p == "thv/pipeline/userfile" || p == "thv/cmd/hv":
		case strings.HasPrefix(p, "thv"), strings.Contains(p, "."):
			t.Errorf("hv links %s", p)
		}
	}
}
