package slurm

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-viper/mapstructure/v2"
)

// Params are the cluster settings of `--executor slurm`: the
// `executors.slurm` section of params.yaml (DecodeParams), overridden by
// --slurm-* flags. They say where tasks run, never what they compute: no
// task key or plan reads them.
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

// DecodeParams decodes the executors.slurm section of params.yaml, as the
// protocol hands it over (plain values: keys lower-case, numbers int,
// uint64 or float64), strictly, and validates it: an unknown key, a value
// of the wrong type, a fraction, a number out of range or a string for a
// number is an error, never coerced. Its errors name the key without the
// executors.slurm prefix.
func DecodeParams(section map[string]any) (Params, error) {
	for _, k := range slices.Sorted(maps.Keys(section)) {
		if err := noNulls(section[k], k); err != nil {
			return Params{}, err
		}
	}
	var p Params
	d, err := mapstructure.NewDecoder(&mapstructure.DecoderConfig{
		Result:      &p,
		ErrorUnused: true,
		DecodeHook:  mapstructure.DecodeHookFuncValue(strictHook),
	})
	if err != nil {
		return Params{}, err
	}
	if err := d.Decode(section); err != nil {
		return Params{}, decodeError(err)
	}
	if err := p.Validate(); err != nil {
		return Params{}, err
	}
	return p, nil
}

// noNulls refuses a null (which mapstructure would skip) anywhere in v.
func noNulls(v any, key string) error {
	switch v := v.(type) {
	case nil:
		return fmt.Errorf("%s: no value (null): give one, or remove the key", key)
	case []any:
		for i, x := range v {
			if err := noNulls(x, fmt.Sprintf("%s[%d]", key, i)); err != nil {
				return err
			}
		}
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(v)) {
			if err := noNulls(v[k], key+"."+k); err != nil {
				return err
			}
		}
	}
	return nil
}

// maxInt bounds the integer settings, as the protocol bounds its own.
const maxInt = math.MaxInt32

// strictHook admits a value for a field of Params only if it is of the
// field's kind: a string for a string, an integer (or a float that is
// exactly one, of at most maxInt) for an int, a list for a list.
func strictHook(from, to reflect.Value) (any, error) {
	in := from.Interface()
	bad := func(format string, args ...any) error {
		return &valueError{v: in, msg: fmt.Sprintf(format, args...)}
	}
	switch to.Kind() {
	case reflect.Struct:
		if _, ok := in.(map[string]any); !ok {
			return nil, bad("want a mapping, got %s", kindOf(in))
		}
	case reflect.Slice:
		if _, ok := in.([]any); !ok {
			return nil, bad("want a list, got %s", kindOf(in))
		}
	case reflect.String:
		if _, ok := in.(string); !ok {
			return nil, bad("want a string, got %s", kindOf(in))
		}
	case reflect.Int:
		outOfRange := bad("out of range: an integer of at most %d in absolute value", maxInt)
		switch x := in.(type) {
		case int:
			if x > maxInt || x < -maxInt {
				return nil, outOfRange
			}
		case uint64:
			return nil, outOfRange
		case float64:
			switch {
			case math.IsNaN(x) || math.IsInf(x, 0) || x != math.Trunc(x):
				return nil, bad("want an integer")
			case math.Abs(x) > maxInt:
				return nil, outOfRange
			}
			return int(x), nil
		default:
			return nil, bad("want an integer, got %s", kindOf(in))
		}
	}
	return in, nil
}

// valueError is an error of strictHook; decodeError adds the key.
type valueError struct {
	v   any // the value, if any
	msg string
}

func (e *valueError) Error() string { return e.msg }

func kindOf(v any) string {
	switch v.(type) {
	case map[string]any:
		return "a mapping"
	case []any:
		return "a list"
	case bool:
		return "a boolean"
	case string:
		return "a string"
	case int, uint64, float64:
		return "a number"
	}
	return fmt.Sprintf("a %T", v)
}

// decodeError is mapstructure's first error (by key) naming the key as
// params.yaml writes it (sbatch_args[0]) and the value.
func decodeError(err error) error {
	var all []*mapstructure.DecodeError
	gather(err, &all)
	if len(all) == 0 {
		return err
	}
	slices.SortStableFunc(all, func(a, b *mapstructure.DecodeError) int { return strings.Compare(a.Name(), b.Name()) })
	key, cause := all[0].Name(), all[0].Unwrap()
	if unknown, ok := strings.CutPrefix(cause.Error(), "has invalid keys: "); ok {
		first, _, _ := strings.Cut(unknown, ", ")
		return fmt.Errorf("%s: unknown key (known: %s)", first, strings.Join(keys(), ", "))
	}
	var ve *valueError
	if !errors.As(cause, &ve) {
		return fmt.Errorf("%s: %v", key, cause)
	}
	switch v := ve.v.(type) {
	case nil, map[string]any, []any:
		return fmt.Errorf("%s: %s", key, ve.msg)
	case string:
		q := strconv.Quote(v)
		if len(v) > 40 {
			q = strconv.Quote(strings.ToValidUTF8(v[:40], "")) + "…"
		}
		return fmt.Errorf("%s = %s: %s", key, q, ve.msg)
	default:
		return fmt.Errorf("%s = %v: %s", key, v, ve.msg)
	}
}

func gather(err error, all *[]*mapstructure.DecodeError) {
	switch e := err.(type) {
	case *mapstructure.DecodeError:
		*all = append(*all, e)
	case interface{ Unwrap() []error }:
		for _, x := range e.Unwrap() {
			gather(x, all)
		}
	default:
		if u := errors.Unwrap(err); u != nil {
			gather(u, all)
		}
	}
}

// keys are the keys of the section.
func keys() []string {
	t := reflect.TypeFor[Params]()
	var out []string
	for i := range t.NumField() {
		out = append(out, t.Field(i).Tag.Get("mapstructure"))
	}
	return out
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
