package config

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/go-viper/mapstructure/v2"
	"github.com/spf13/viper"
)

// decode is viper's one strict Unmarshal of the layered tree, every value
// through strictHook; of several errors, the first by key. The tree goes in
// as defaults: MergeConfigMap costs the square of a mapping's width.
func decode(tree map[string]any) (*Config, error) {
	v := viper.New()
	for k, x := range tree {
		v.SetDefault(k, x)
	}
	var c Config
	err := v.UnmarshalExact(&c, viper.DecodeHook(mapstructure.DecodeHookFuncValue(strictHook)), func(dc *mapstructure.DecoderConfig) {
		dc.WeaklyTypedInput = false
		dc.IgnoreUntaggedFields = true // Setting.Name, Config.Profile: the loader's, never a key's
	})
	if err != nil {
		return nil, decodeError(err)
	}
	return &c, nil
}

// valueError is strictHook's error; decodeError puts the key before it.
type valueError struct {
	sub   string // the path below the key (inside a value of type any, or an unknown key)
	value string // " = " and the value as written, if a scalar that is not null
	msg   string // what is wrong, and where the value came from if an override
}

func (e *valueError) Error() string { return e.msg }

// badValue is the error msg about v, found at sub below its key.
func badValue(v any, sub, msg string) *valueError {
	e := &valueError{sub: sub, msg: msg}
	if o := originOf(v); o != "" {
		e.msg += " (from " + o + ")"
	}
	if s, ok := v.(*scalar); ok && s.tag == "!!str" {
		e.value = " = " + clip(s.text)
	} else if ok && s.tag != "!!null" {
		e.value = " = " + cut(s.text, 40)
	}
	return e
}

const noValue = "no value (null): give one, or remove the key"

// strictHook converts a value for a field of kind to.Kind(), refusing
// what would be a guess: a null, a value of the wrong kind, a lossy
// number (number), an unknown key. A mapping that holds no value
// (holdsNoValue) is absent. A field of type any gets plain values (plain).
func strictHook(from, to reflect.Value) (any, error) {
	in, k := from.Interface(), to.Kind()
	switch x := in.(type) {
	case string:
		return x, nil // a map's key
	case *scalar:
		switch {
		case x.tag == "!!null":
			return nil, badValue(x, "", noValue)
		case k == reflect.String && x.tag == "!!str":
			return x.val, nil
		case k == reflect.Int || k == reflect.Uint64 || k == reflect.Float64:
			return number(x, k)
		}
	case []any:
		if k == reflect.Slice {
			return x, nil
		}
	case map[string]any:
		switch {
		case holdsNoValue(x):
			return nil, nil
		case k == reflect.Struct:
			return x, knownKeys(x, to.Type())
		case k == reflect.Map:
			x = maps.Clone(x)
			maps.DeleteFunc(x, func(_ string, v any) bool { return holdsNoValue(v) })
			return x, nil
		}
	case emptyMapping:
		return nil, nil
	}
	if k == reflect.Interface {
		return plain(in, "")
	}
	return nil, badValue(in, "", "want "+want(k)+", got "+kindOf(in))
}

// knownKeys refuses a key of m that is no field of struct t, naming the
// key's path and the known keys (mapstructure's ErrorUnused names neither).
func knownKeys(m map[string]any, t reflect.Type) error {
	var known []string
	for i := range t.NumField() {
		if tag := t.Field(i).Tag.Get("mapstructure"); tag != "" {
			known = append(known, tag)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if !slices.ContainsFunc(known, func(tag string) bool { return strings.EqualFold(tag, k) }) {
			if k == "slurm" && t == reflect.TypeFor[Config]() {
				return errors.New("slurm: the Slurm executor's settings moved to executors.slurm (docs/cluster.md): write `executors: {slurm: {...}}` with the same keys")
			}
			return badValue(nil, "."+k, "unknown key (known: "+strings.Join(known, ", ")+")")
		}
	}
	return nil
}

// wants names what a field of each kind takes (any other: a number).
var wants = map[reflect.Kind]string{reflect.Struct: "a mapping", reflect.Map: "a mapping", reflect.Slice: "a list",
	reflect.String: "a string", reflect.Int: "an integer", reflect.Uint64: "an integer ≥ 0"}

func want(k reflect.Kind) string { return cmp.Or(wants[k], "a number") }

// number is s as an int (at most maxInt in absolute value), a uint64 (a
// seed) or a finite float64: a float is an integer only if it is exactly
// one (3000.0), and for a uint64 only up to 2^53, where floats stop
// holding every integer.
func number(s *scalar, k reflect.Kind) (any, error) {
	bad := func(msg string) error { return badValue(s, "", msg) }
	var f float64
	switch v := s.val.(type) {
	case int:
		f = float64(v)
		if k == reflect.Uint64 && v >= 0 {
			return uint64(v), nil
		}
	case uint64: // above math.MaxInt64: out of an int's range
		if k == reflect.Uint64 {
			return v, nil
		}
		f = float64(v)
	case float64:
		f = v
	default:
		return nil, bad("want " + want(k) + ", got " + kindOf(s))
	}
	integral := f == math.Trunc(f) && !math.IsInf(f, 0)
	switch {
	case k == reflect.Float64 && (math.IsNaN(f) || math.IsInf(f, 0)):
		return nil, bad("want a finite number")
	case k == reflect.Float64:
		return f, nil
	case k == reflect.Uint64 && (!integral || f < 0):
		return nil, bad("want an integer ≥ 0")
	case k == reflect.Uint64 && f > 1<<53:
		return nil, bad(fmt.Sprintf("out of range: write an integer of at most %d, without exponent or fraction", uint64(math.MaxUint64)))
	case k == reflect.Uint64:
		return uint64(f), nil
	case !integral:
		return nil, bad("want an integer")
	case math.Abs(f) > maxInt:
		return nil, bad(fmt.Sprintf("out of range: an integer of at most %d in absolute value", maxInt))
	}
	return int(f), nil
}

// plain is a value for a field of type any: scalars as YAML decodes them,
// lists as []any, mappings as map[string]any without the keys that hold
// no value; a null anywhere is refused, as for a typed field.
func plain(v any, sub string) (any, error) {
	switch v := v.(type) {
	case *scalar:
		if v.tag == "!!null" {
			return nil, badValue(v, sub, noValue)
		}
		return v.val, nil
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			var err error
			if out[i], err = plain(x, fmt.Sprintf("%s[%d]", sub, i)); err != nil {
				return nil, err
			}
		}
		return out, nil
	case map[string]any:
		out := make(map[string]any, len(v))
		for _, k := range slices.Sorted(maps.Keys(v)) {
			if !holdsNoValue(v[k]) {
				var err error
				if out[k], err = plain(v[k], sub+"."+k); err != nil {
					return nil, err
				}
			}
		}
		return out, nil
	}
	return nil, nil
}

// originOf is where the first scalar of a value came from.
func originOf(v any) string {
	switch v := v.(type) {
	case *scalar:
		return v.from
	case []any:
		for _, x := range v {
			if o := originOf(x); o != "" {
				return o
			}
		}
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(v)) {
			if o := originOf(v[k]); o != "" {
				return o
			}
		}
	}
	return ""
}

// decodeError is the first of mapstructure's errors by key, naming the
// key as the protocol writes it (settings.d3.T, seeds[0]), the value as
// written and where it came from.
func decodeError(err error) error {
	all := decodeErrors(err)
	if len(all) == 0 {
		return err
	}
	de := slices.MinFunc(all, func(a, b *mapstructure.DecodeError) int { return strings.Compare(a.Name(), b.Name()) })
	path := keyPath(de.Name())
	var ve *valueError
	switch {
	case errors.As(de.Unwrap(), &ve):
		if path = strings.TrimPrefix(path+ve.sub, "."); path == "" {
			return errors.New(ve.msg)
		}
		return fmt.Errorf("%s%s: %s", path, ve.value, ve.msg)
	case path == "":
		return de.Unwrap()
	}
	return fmt.Errorf("%s: %v", path, de.Unwrap())
}

// decodeErrors lists the errors of mapstructure's tree of joined errors.
func decodeErrors(err error) []*mapstructure.DecodeError {
	switch e := err.(type) {
	case *mapstructure.DecodeError:
		return []*mapstructure.DecodeError{e}
	case interface{ Unwrap() []error }:
		var all []*mapstructure.DecodeError
		for _, x := range e.Unwrap() {
			all = append(all, decodeErrors(x)...)
		}
		return all
	}
	if u := errors.Unwrap(err); u != nil {
		return decodeErrors(u)
	}
	return nil
}

// keyPath renders mapstructure's name of a value (settings[d3].T,
// algorithms[0].params[delta]) as the protocol names keys: a map's key
// after a dot, a list's index in brackets.
func keyPath(name string) string {
	return regexp.MustCompile(`\[[^]]*\]`).ReplaceAllStringFunc(name, func(m string) string {
		if k := m[1 : len(m)-1]; strings.Trim(k, "0123456789") != "" {
			return "." + k
		}
		return m
	})
}
