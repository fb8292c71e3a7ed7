package slurm

import (
	"strings"
	"testing"
	"time"
)

func TestParseTime(t *testing.T) {
	for _, c := range []struct {
		in   string
		want time.Duration
	}{
		{"30", 30 * time.Minute},
		{"5:30", 5*time.Minute + 30*time.Second},
		{"1:00:00", time.Hour},
		{"2-0", 48 * time.Hour},
		{"1-2:3", 26*time.Hour + 3*time.Minute},
		{"1-2:3:4", 26*time.Hour + 3*time.Minute + 4*time.Second},
		{"0-0:0:1", time.Second},
	} {
		got, err := ParseTime(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseTime(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"", "0", "abc", "1:2:3:4", "-5", "1-", "1-2:3:4:5", "1h", " 5", "5:", "99999999"} {
		if d, err := ParseTime(bad); err == nil {
			t.Errorf("ParseTime(%q) = %v, want an error", bad, d)
		}
	}
}

func TestValidate(t *testing.T) {
	good := Params{Partition: "debug", Time: "10", Mem: "4G", CPUsPerTask: 2, SbatchArgs: []string{"--qos=short", "--exclusive"}, TasksPerElement: 8, MaxElements: 4}
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		p    Params
		want string // in the error
	}{
		{Params{Time: "1h"}, `time = "1h"`},
		{Params{Mem: "4 GB"}, `mem = "4 GB"`},
		{Params{CPUsPerTask: -1}, "cpus_per_task = -1"},
		{Params{TasksPerElement: -2}, "tasks_per_element = -2"},
		{Params{MaxElements: -3}, "max_elements = -3"},
		{Params{SbatchArgs: []string{"short"}}, "not an option"},
		{Params{SbatchArgs: []string{"--array=0-3"}}, "thv sets --array itself"},
		{Params{SbatchArgs: []string{"-o/tmp/x"}}, "thv sets -o itself"},
		{Params{SbatchArgs: []string{"--time=5"}}, "thv sets --time itself"},
		{Params{SbatchArgs: []string{"-p", "debug"}}, "thv sets -p itself"},
		{Params{Partition: "a\nb"}, "partition"},
	} {
		err := c.p.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: got %v, want an error containing %q", c.p, err, c.want)
		}
	}
}

func TestOverrideAndDefaults(t *testing.T) {
	file := Params{Partition: "a", Time: "10", SbatchArgs: []string{"--qos=x"}, TasksPerElement: 4}
	flags := Params{Partition: "b", SbatchArgs: []string{"--exclusive"}, MaxElements: 2}
	got := file.Override(flags).WithDefaults()
	if got.Partition != "b" || got.Time != "10" || got.TasksPerElement != 4 || got.MaxElements != 2 ||
		strings.Join(got.SbatchArgs, " ") != "--qos=x --exclusive" {
		t.Fatalf("override: %+v", got)
	}
	if (Params{}).WithDefaults().Time != DefaultTime || (Params{}).Jobs() != 2*DefaultTasksPerElement*DefaultMaxElements {
		t.Fatal("defaults")
	}
	if len(file.SbatchArgs) != 1 {
		t.Fatal("Override changed its receiver's slice")
	}
}

func TestParseQueue(t *testing.T) {
	out := "12_0|COMPLETED|0|None\n12_1|FAILED|1792|NonZeroExitCode\n12_2|CANCELLED by 0|15|None\n12_3|PENDING|0|Resources\n\n"
	m, err := parseQueue(out)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]elemState{
		"12_0": {State: "COMPLETED", Reason: "None"},
		"12_1": {State: "FAILED", Exit: 7, Reason: "NonZeroExitCode"},
		"12_2": {State: "CANCELLED", Signal: 15, Reason: "None"},
		"12_3": {State: "PENDING", Reason: "Resources"},
	}
	if len(m) != len(want) {
		t.Fatalf("got %v", m)
	}
	for k, w := range want {
		if m[k] != w {
			t.Errorf("%s: got %+v, want %+v", k, m[k], w)
		}
	}
	if !terminal("FAILED") || terminal("COMPLETING") || terminal("RUNNING") || !terminal("NODE_FAIL") {
		t.Error("terminal states")
	}
	for _, bad := range []string{"12_0 COMPLETED", "12_0|FAILED|x|y"} {
		if _, err := parseQueue(bad); err == nil {
			t.Errorf("parseQueue(%q): no error", bad)
		}
	}
}
