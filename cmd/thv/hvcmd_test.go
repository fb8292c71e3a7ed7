package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runHV executes `thv hv args...` with stdin and returns stdout and the error.
func runHV(t *testing.T, stdin string, args ...string) (string, error) {
	t.Helper()
	cmd := newHVCommand()
	var out, errOut bytes.Buffer
	cmd.SetArgs(args)
	cmd.SetIn(strings.NewReader(stdin))
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SilenceUsage = true
	cmd.SilenceErrors = true
	err := cmd.Execute()
	return out.String(), err
}

func TestHVCommand(t *testing.T) {
	for _, tc := range []struct {
		name  string
		stdin string
		args  []string
		want  string
	}{
		{"staircase", "1 3\n2 2\n3 1\n", nil, "6\n"},
		{"commas", "1,3\n2,2\n3,1\n", nil, "6\n"},
		{"commas and spaces", "1, 3\n2 ,2\n\t3\t1\n", nil, "6\n"},
		{"comments and blank lines", "# f1 f2\n\n1 3\n  # indented comment\n2 2\r\n\n3 1\n", nil, "6\n"},
		{"one point d=1", "2.5\n", nil, "2.5\n"},
		{"ref", "2 3 4\n", []string{"--ref", "1,1,1"}, "6\n"},
		{"negative ref", "-1 -1\n", []string{"--ref", "-3,-3"}, "4\n"},
		{"ref with =", "-1 -1\n", []string{"--ref=-3,-2"}, "2\n"},
		{"below ref adds nothing", "1 1\n5 0.5\n", []string{"--ref", "0,1"}, "0\n"},
		{"stdin as -", "2 2\n", []string{"-"}, "4\n"},
		{"17 digits", "0.1\n", nil, "0.10000000000000001\n"},
		{"d=4", "2 1 1 1\n1 2 1 1\n1 1 2 1\n1 1 1 2\n", nil, "5\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := runHV(t, tc.stdin, tc.args...)
			if err != nil {
				t.Fatalf("error: %v", err)
			}
			if got != tc.want {
				t.Errorf("output %q, want %q", got, tc.want)
			}
		})
	}
}

func TestHVCommandFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "front.csv")
	if err := os.WriteFile(path, []byte("# f1,f2,f3\n0.9,0.2,0.1\n0.1,0.8,0.4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := runHV(t, "ignored\n", "--ref", "0.05,0.05,0.05", path)
	if err != nil {
		t.Fatal(err)
	}
	if got != "0.019125000000000003\n" {
		t.Errorf("output %q", got)
	}

	bad := filepath.Join(dir, "bad.txt")
	if err := os.WriteFile(bad, []byte("1 2 3\n4 5 6\n7 8\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = runHV(t, "", bad)
	if err == nil || err.Error() != bad+": line 3: expected 3 coordinates, got 2" {
		t.Errorf("error %v", err)
	}

	if _, err := runHV(t, "", filepath.Join(dir, "missing.txt")); err == nil || !strings.Contains(err.Error(), "missing.txt") {
		t.Errorf("missing file: error %v", err)
	}
}

func TestHVCommandErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		stdin string
		args  []string
		want  string // the whole error message
	}{
		{"ragged", "1 2 3\n4 5 6\n7 8\n", nil, "standard input: line 3: expected 3 coordinates, got 2"},
		{"ragged after comments", "# x\n\n1 2\n1 2 3\n", nil, "standard input: line 4: expected 2 coordinates, got 3"},
		{"not a number", "1 2\n3 x\n", nil, `standard input: line 2: field 2: "x" is not a number`},
		{"NaN", "1 NaN\n", nil, `standard input: line 1: field 2: "NaN" is not a finite number`},
		{"Inf", "inf 1\n", nil, `standard input: line 1: field 1: "inf" is not a finite number`},
		{"overflow", "1e999 1\n", nil, `standard input: line 1: field 1: "1e999" is not a finite number`},
		{"empty field", "1,,2\n", nil, "standard input: line 1: field 2 is empty"},
		{"trailing comma", "1,2,\n", nil, "standard input: line 1: field 3 is empty"},
		{"no points", "# only a comment\n\n", nil, "standard input: no points"},
		{"empty input", "", nil, "standard input: no points"},
		{"ref of the wrong dimension", "1 2 3\n", []string{"--ref", "0,0"}, "standard input: line 1: expected 2 coordinates (as many as --ref), got 3"},
		{"ref not a number", "1 2\n", []string{"--ref", "0,zero"}, `--ref: field 2: "zero" is not a number`},
		{"ref NaN", "1 2\n", []string{"--ref", "0,nan"}, `--ref: field 2: "nan" is not a finite number`},
		{"ref empty", "1 2\n", []string{"--ref", ""}, "--ref: no coordinates"},
		{"two files", "", []string{"a", "b"}, "accepts at most 1 arg(s), received 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := runHV(t, tc.stdin, tc.args...)
			if err == nil {
				t.Fatalf("no error; output %q", out)
			}
			if err.Error() != tc.want {
				t.Errorf("error %q, want %q", err.Error(), tc.want)
			}
			if out != "" {
				t.Errorf("output %q on error", out)
			}
		})
	}
}

func TestHVCommandHelp(t *testing.T) {
	cmd := newHVCommand()
	if cmd.Short == "" || !strings.Contains(cmd.Long, "--ref") || !strings.Contains(cmd.Example, "thv hv") {
		t.Error("help text missing")
	}
	// The example in the help must be true.
	got, err := runHV(t, "1 3\n2 2\n3 1\n")
	if err != nil || got != "6\n" || !strings.Contains(cmd.Example, "  6\n") {
		t.Errorf("example: %q %v", got, err)
	}
}
