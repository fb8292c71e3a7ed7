package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
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
		{"-inf", "1 2\n3 -Inf\n", nil, `standard input: line 2: field 2: "-Inf" is not a finite number`},
		{"nan with comma", "1,2\n\n3,nan\n", nil, `standard input: line 3: field 2: "nan" is not a finite number`},
		{"long token cut", "1 " + strings.Repeat("x", 100000) + "\n", nil, `standard input: line 1: field 2: "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"… is not a number`},
		{"long number cut", strings.Repeat("9", 400) + "e999 1\n", nil, `standard input: line 1: field 1: "9999999999999999999999999999999999999999"… is not a finite number`},
		{"line over 1 MiB", "1 2\n3 4\n" + strings.Repeat("5 ", 1<<19) + "6\n", nil, "standard input: line 3: longer than 1 MiB (1048576 bytes), the limit on a line"},
		{"last line over 1 MiB", strings.Repeat(" ", 1<<20+1), nil, "standard input: line 1: longer than 1 MiB (1048576 bytes), the limit on a line"},
		// Finite inputs whose volume overflows float64: an error, not NaN or Inf.
		{"overflow to NaN", "1e160 1e160 1\n1e159 2e160 1\n", nil, "standard input: the hypervolume overflows float64 (computed NaN from finite coordinates): scale the coordinates down"},
		{"overflow to Inf", "1e200 1e200\n", nil, "standard input: the hypervolume overflows float64 (computed +Inf from finite coordinates): scale the coordinates down"},
		{"overflow of a side", "1e308 1\n", []string{"--ref", "-1e308,0"}, "standard input: the hypervolume overflows float64 (computed +Inf from finite coordinates): scale the coordinates down"},
		{"overflow in d=4", "1e100 1e100 1e100 1e100\n2e100 1 1 1\n", nil, "standard input: the hypervolume overflows float64 (computed +Inf from finite coordinates): scale the coordinates down"},
		{"overflow in d=6", "1e60 1e60 1e60 1e60 1e60 1e60\n2e60 1 1 1 1 1\n1 2e60 1 1 1 1\n", nil, "standard input: the hypervolume overflows float64 (computed +Inf from finite coordinates): scale the coordinates down"},
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

// TestHVLargeButFinite: volumes near the top of the float64 range that do
// not overflow are still printed.
func TestHVLargeButFinite(t *testing.T) {
	got, err := runHV(t, "1e150 1e150\n")
	if err != nil || got != "9.999999999999999e+299\n" {
		t.Errorf("got %q, %v", got, err)
	}
}

// endless is an input that never ends and has no newline.
type endless struct{ n int64 }

func (e *endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = '1'
	}
	e.n += int64(len(p))
	return len(p), nil
}

// TestHVStreams: an endless line is refused after 1 MiB, without reading
// the input whole (the command would never return otherwise).
func TestHVStreams(t *testing.T) {
	in := &endless{}
	_, err := readPoints(in, 0)
	if err == nil || err.Error() != "line 1: longer than 1 MiB (1048576 bytes), the limit on a line" {
		t.Fatalf("error %v", err)
	}
	if in.n > 4<<20 {
		t.Errorf("read %d bytes of a line before refusing it", in.n)
	}
}

// TestHVExitStatus: the binary exits with status 1 and prints nothing on
// standard output when the volume overflows or a line is too long.
func TestHVExitStatus(t *testing.T) {
	bin := buildThv(t, moduleRoot(t))
	for _, c := range []struct{ stdin, stderr string }{
		{"1e160 1e160 1\n1e159 2e160 1\n", "thv: standard input: the hypervolume overflows float64 (computed NaN from finite coordinates): scale the coordinates down\n"},
		{"1 2\nnan 1\n", "thv: standard input: line 2: field 1: \"nan\" is not a finite number\n"},
		{strings.Repeat("1", 3<<20), "thv: standard input: line 1: longer than 1 MiB (1048576 bytes), the limit on a line\n"},
	} {
		cmd := exec.Command(bin, "hv")
		cmd.Stdin = strings.NewReader(c.stdin)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 1 || out.Len() != 0 || errOut.String() != c.stderr {
			t.Errorf("%.40q: %v, stdout %q, stderr %q", c.stdin, err, out.String(), errOut.String())
		}
	}
}
