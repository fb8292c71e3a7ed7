package slurm

import (
	"reflect"
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

// TestDecodeParams: the executors.slurm section decodes strictly, with
// errors naming the key (without the prefix) and the value, and validates.
func TestDecodeParams(t *testing.T) {
	section := map[string]any{
		"partition": "gpu", "account": "lab", "time": "2:00:00", "mem": "4G", "cpus_per_task": 2,
		"sbatch_args": []any{"--qos=short"}, "tasks_per_element": 8.0, "max_elements": 50, "thv": "/shared/bin/thv", "deadline": "12:00:00",
	}
	got, err := DecodeParams(section)
	want := Params{Partition: "gpu", Account: "lab", Time: "2:00:00", Mem: "4G", CPUsPerTask: 2, SbatchArgs: []string{"--qos=short"},
		TasksPerElement: 8, MaxElements: 50, Thv: "/shared/bin/thv", Deadline: "12:00:00"}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("DecodeParams = %+v, %v; want %+v", got, err, want)
	}
	if p, err := DecodeParams(nil); err != nil || !reflect.DeepEqual(p, Params{}) {
		t.Fatalf("no section: %+v, %v", p, err)
	}
	for _, c := range []struct {
		section map[string]any
		want    string // the whole error
	}{
		{map[string]any{"partion": "gpu"}, "partion: unknown key (known: partition, account, time, mem, cpus_per_task, sbatch_args, tasks_per_element, max_elements, thv, deadline)"},
		{map[string]any{"time": "1h"}, `time = "1h": want a Slurm time limit: minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS`},
		{map[string]any{"time": 30}, "time = 30: want a string, got a number"},
		{map[string]any{"time": nil}, "time: no value (null): give one, or remove the key"},
		{map[string]any{"max_elements": "many"}, `max_elements = "many": want an integer, got a string`},
		{map[string]any{"max_elements": true}, "max_elements = true: want an integer, got a boolean"},
		{map[string]any{"cpus_per_task": 2.5}, "cpus_per_task = 2.5: want an integer"},
		{map[string]any{"cpus_per_task": 1 << 40}, "cpus_per_task = 1099511627776: out of range: an integer of at most 2147483647 in absolute value"},
		{map[string]any{"cpus_per_task": uint64(1) << 63}, "cpus_per_task = 9223372036854775808: out of range: an integer of at most 2147483647 in absolute value"},
		{map[string]any{"cpus_per_task": []any{2}}, "cpus_per_task: want an integer, got a list"},
		{map[string]any{"cpus_per_task": -1}, "cpus_per_task = -1: must be ≥ 1 (or absent for the default)"},
		{map[string]any{"sbatch_args": "--qos=short"}, `sbatch_args = "--qos=short": want a list, got a string`},
		{map[string]any{"sbatch_args": []any{"--qos=short", 5}}, "sbatch_args[1] = 5: want a string, got a number"},
		{map[string]any{"sbatch_args": []any{nil}}, "sbatch_args[0]: no value (null): give one, or remove the key"},
		{map[string]any{"sbatch_args": []any{"--array=0-3"}}, `sbatch_args[0] = "--array=0-3": thv sets --array itself (use the slurm keys partition, account, time, mem, cpus_per_task instead where they exist)`},
		{map[string]any{"partition": map[string]any{"a": 1}}, "partition: want a string, got a mapping"},
		{map[string]any{"max_elements": strings.Repeat("x", 39) + "é"}, `max_elements = "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"…: want an integer, got a string`},
	} {
		_, err := DecodeParams(c.section)
		if err == nil || err.Error() != c.want {
			t.Errorf("%v:\n got %v\nwant %s", c.section, err, c.want)
		}
	}
}
