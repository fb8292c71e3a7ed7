package slurm

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Params are the cluster settings of `--executor slurm`: the `slurm:`
// section of params.yaml, overridden by --slurm-* flags. They say where
// tasks run, never what they compute: no task key or plan reads them.
type Params struct {
	Partition       string   `mapstructure:"partition"`         // sbatch --partition ("" = the cluster's default)
	Account         string   `mapstructure:"account"`           // sbatch --account
	Time            string   `mapstructure:"time"`              // time limit of one array element, Slurm syntax (default 1:00:00)
	Mem             string   `mapstructure:"mem"`               // sbatch --mem of one element, e.g. 2G
	CPUsPerTask     int      `mapstructure:"cpus_per_task"`     // sbatch --cpus-per-task
	SbatchArgs      []string `mapstructure:"sbatch_args"`       // more sbatch options, e.g. [--qos=short]
	TasksPerElement int      `mapstructure:"tasks_per_element"` // tasks one element runs, one after another
	MaxElements     int      `mapstructure:"max_elements"`      // array elements in flight at once
	Thv             string   `mapstructure:"thv"`               // the thv binary the nodes run (a path they see)
	Deadline        string   `mapstructure:"deadline"`          // the whole run's limit, Slurm time syntax ("" = none)
}

// Defaults of the zero Params.
const (
	DefaultTime            = "1:00:00"
	DefaultTasksPerElement = 16
	DefaultMaxElements     = 16
)

// WithDefaults returns p with its zero fields set to the defaults.
func (p Params) WithDefaults() Params {
	if p.Time == "" {
		p.Time = DefaultTime
	}
	if p.TasksPerElement == 0 {
		p.TasksPerElement = DefaultTasksPerElement
	}
	if p.MaxElements == 0 {
		p.MaxElements = DefaultMaxElements
	}
	return p
}

// Override returns p with every non-zero field of q in place of p's.
func (p Params) Override(q Params) Params {
	set := func(dst *string, v string) {
		if v != "" {
			*dst = v
		}
	}
	set(&p.Partition, q.Partition)
	set(&p.Account, q.Account)
	set(&p.Time, q.Time)
	set(&p.Mem, q.Mem)
	set(&p.Thv, q.Thv)
	set(&p.Deadline, q.Deadline)
	if q.CPUsPerTask != 0 {
		p.CPUsPerTask = q.CPUsPerTask
	}
	if q.TasksPerElement != 0 {
		p.TasksPerElement = q.TasksPerElement
	}
	if q.MaxElements != 0 {
		p.MaxElements = q.MaxElements
	}
	if len(q.SbatchArgs) > 0 {
		p.SbatchArgs = append(append([]string(nil), p.SbatchArgs...), q.SbatchArgs...)
	}
	return p
}

// Jobs is the scheduler concurrency that keeps the cluster busy: every
// element in flight full, and as many tasks again waiting to fill the next
// ones as soon as slots free.
func (p Params) Jobs() int {
	p = p.WithDefaults()
	return 2 * p.TasksPerElement * p.MaxElements
}

// managed are the sbatch options the executor sets itself.
var managed = []string{"--array", "-a", "--output", "-o", "--error", "-e", "--parsable", "--wrap",
	"--chdir", "-D", "--job-name", "-J", "--open-mode", "--wait", "-W", "--time", "-t",
	"--partition", "-p", "--account", "-A", "--mem", "--cpus-per-task", "-c", "--test-only"}

var memRE = regexp.MustCompile(`^[0-9]+[KMGT]?$`)

// Validate checks p; its errors name the key (without the "slurm."
// prefix) and say what is wanted.
func (p Params) Validate() error {
	if p.Time != "" {
		if _, err := ParseTime(p.Time); err != nil {
			return fmt.Errorf("time = %q: %v", p.Time, err)
		}
	}
	if p.Deadline != "" {
		if _, err := ParseTime(p.Deadline); err != nil {
			return fmt.Errorf("deadline = %q: %v", p.Deadline, err)
		}
	}
	if p.Mem != "" && !memRE.MatchString(p.Mem) {
		return fmt.Errorf("mem = %q: want a size as sbatch --mem takes it, e.g. 2000 (MB) or 4G", p.Mem)
	}
	for _, c := range []struct {
		name string
		v    int
	}{{"cpus_per_task", p.CPUsPerTask}, {"tasks_per_element", p.TasksPerElement}, {"max_elements", p.MaxElements}} {
		if c.v < 0 {
			return fmt.Errorf("%s = %d: must be ≥ 1 (or absent for the default)", c.name, c.v)
		}
	}
	for i, a := range p.SbatchArgs {
		if !strings.HasPrefix(a, "-") {
			return fmt.Errorf("sbatch_args[%d] = %q: not an option (write options as --name=value, one element each)", i, a)
		}
		name, _, _ := strings.Cut(a, "=")
		for _, m := range managed {
			if name == m || len(m) == 2 && strings.HasPrefix(a, m) && !strings.HasPrefix(a, "--") {
				return fmt.Errorf("sbatch_args[%d] = %q: thv sets %s itself (use the slurm keys partition, account, time, mem, cpus_per_task instead where they exist)", i, a, m)
			}
		}
	}
	for _, s := range []struct{ name, v string }{{"partition", p.Partition}, {"account", p.Account}, {"thv", p.Thv}} {
		if strings.ContainsAny(s.v, "\n\x00") {
			return fmt.Errorf("%s = %q: contains a newline or NUL", s.name, s.v)
		}
	}
	return nil
}

// ParseTime reads a Slurm time limit: minutes, minutes:seconds,
// hours:minutes:seconds, days-hours, days-hours:minutes or
// days-hours:minutes:seconds.
func ParseTime(s string) (time.Duration, error) {
	bad := fmt.Errorf("want a Slurm time limit: minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS")
	num := func(x string) (int64, bool) {
		if x == "" || len(x) > 6 {
			return 0, false
		}
		n, err := strconv.ParseInt(x, 10, 64)
		return n, err == nil && n >= 0
	}
	var days int64
	rest := s
	if d, r, ok := strings.Cut(s, "-"); ok {
		var good bool
		if days, good = num(d); !good {
			return 0, bad
		}
		rest = r
	}
	parts := strings.Split(rest, ":")
	vals := make([]int64, len(parts))
	for i, x := range parts {
		v, ok := num(x)
		if !ok {
			return 0, bad
		}
		vals[i] = v
	}
	var secs int64
	switch {
	case days > 0 || strings.Contains(s, "-"):
		// D-HH, D-HH:MM, D-HH:MM:SS
		if len(vals) > 3 {
			return 0, bad
		}
		mult := []int64{3600, 60, 1}
		for i, v := range vals {
			secs += v * mult[i]
		}
		secs += days * 86400
	case len(vals) == 1:
		secs = vals[0] * 60
	case len(vals) == 2:
		secs = vals[0]*60 + vals[1]
	case len(vals) == 3:
		secs = vals[0]*3600 + vals[1]*60 + vals[2]
	default:
		return 0, bad
	}
	if secs <= 0 {
		return 0, fmt.Errorf("must be more than zero")
	}
	return time.Duration(secs) * time.Second, nil
}
