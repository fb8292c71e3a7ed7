package config

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strings"

	"github.com/go-viper/mapstructure/v2"
	"github.com/spf13/viper"
)

// maxInt bounds every integer parameter, so that no product of two of
// them (n·min_pulls, …) can overflow.
const maxInt = math.MaxInt32

// decodeConfig decodes viper's layered settings into a Config, strictly:
// viper's UnmarshalExact (mapstructure with ErrorUnused: an unknown key is
// an error) without weak typing, every value through strictHook. Of
// several errors it returns the first by key, naming the key and the value.
func decodeConfig(v *viper.Viper) (*Config, error) {
	var c Config
	err := v.UnmarshalExact(&c, viper.DecodeHook(mapstructure.DecodeHookFuncValue(strictHook)), func(dc *mapstructure.DecoderConfig) {
		dc.WeaklyTypedInput = false
		dc.IgnoreUntaggedFields = true // Setting.Name, Config.Profile: set by the loader, never by a key
	})
	if err != nil {
		return nil, decodeError(err)
	}
	return &c, nil
}

// strictHook converts a value of the tree (config_tree.go) for a field of
// type to.Type(), refusing what would be lossy or a guess: a null, a value
// of the wrong kind, a string or a boolean for a number, a fraction or a
// number out of range for an integer, a negative number for a seed, a
// non-finite float. A mapping that holds no value is absent, as under
// viper. A field of type any gets the value as YAML decodes it (mappings
// as map[string]any, lists as []any).
func strictHook(from, to reflect.Value) (any, error) {
	in := from.Interface()
	if holdsNoValue(in) {
		return nil, nil
	}
	switch x := in.(type) {
	case *scalar:
		return decodeScalar(x, to.Type())
	case []any:
		switch to.Kind() {
		case reflect.Slice:
			return x, nil
		case reflect.Interface:
			return plain(x, "")
		}
		return nil, &valueError{from: originOf(x), msg: "want " + want(to.Type()) + ", got a list"}
	case map[string]any:
		switch to.Kind() {
		case reflect.Struct:
			for _, v := range x {
				if _, ok := v.(unset); ok {
					return withoutUnset(x), nil
				}
			}
			return x, nil
		case reflect.Map:
			m := make(map[string]any, len(x))
			for k, v := range x {
				if !holdsNoValue(v) {
					m[k] = v
				}
			}
			return m, nil
		case reflect.Interface:
			return plain(x, "")
		}
		return nil, &valueError{from: originOf(x), msg: "want " + want(to.Type()) + ", got a mapping"}
	case string:
		return x, nil // a map's key
	}
	return nil, fmt.Errorf("unexpected value %T", in)
}

// withoutUnset is m without its unset keys.
func withoutUnset(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if _, ok := v.(unset); !ok {
			out[k] = v
		}
	}
	return out
}

// valueError is an error of strictHook; decodeError adds the key.
type valueError struct {
	s    *scalar // the value, if a scalar
	sub  string  // the path below the key, inside a value of type any
	from string  // where the value came from, if an override
	msg  string
}

func (e *valueError) Error() string { return e.msg }

func decodeScalar(s *scalar, t reflect.Type) (any, error) {
	bad := func(format string, args ...any) error {
		return &valueError{s: s, from: s.from, msg: fmt.Sprintf(format, args...)}
	}
	if s.tag == "!!null" {
		return nil, bad("no value (null): give one, or remove the key")
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map, reflect.Slice:
		return nil, bad("want %s, got %s", want(t), kindOf(s))
	case reflect.Interface:
		return s.val, nil
	case reflect.String:
		if s.tag != "!!str" {
			return nil, bad("want a string, got %s", kindOf(s))
		}
		return s.val, nil
	case reflect.Int:
		x, err := decodeInt(s)
		if err != nil {
			return nil, bad("%v", err)
		}
		return int(x), nil
	case reflect.Uint64:
		x, err := decodeUint(s)
		if err != nil {
			return nil, bad("%v", err)
		}
		return x, nil
	case reflect.Float64:
		x, err := decodeFloat(s)
		if err != nil {
			return nil, bad("%v", err)
		}
		return x, nil
	}
	return nil, bad("cannot decode into %s", t)
}

// want names what a field of type t takes.
func want(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		return "a mapping"
	case reflect.Slice:
		return "a list"
	case reflect.String:
		return "a string"
	case reflect.Int:
		return "an integer"
	case reflect.Uint64:
		return "an integer ≥ 0"
	case reflect.Float64:
		return "a number"
	}
	return t.String()
}

// plain is a value for a field of type any: scalars as YAML decodes them,
// lists as []any, mappings as map[string]any without the keys that hold no
// value. A null anywhere is an error, as for a typed field.
func plain(v any, sub string) (any, error) {
	switch v := v.(type) {
	case *scalar:
		if v.tag == "!!null" {
			return nil, &valueError{s: v, sub: sub, from: v.from, msg: "no value (null): give one, or remove the key"}
		}
		return v.val, nil
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			p, err := plain(x, fmt.Sprintf("%s[%d]", sub, i))
			if err != nil {
				return nil, err
			}
			out[i] = p
		}
		return out, nil
	case map[string]any:
		out := make(map[string]any, len(v))
		for _, k := range slices.Sorted(maps.Keys(v)) {
			if holdsNoValue(v[k]) {
				continue
			}
			p, err := plain(v[k], sub+"."+k)
			if err != nil {
				return nil, err
			}
			out[k] = p
		}
		return out, nil
	}
	return nil, nil
}

// originOf is where the first scalar of a list or mapping came from.
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

// maxExact is the largest integer up to which every integer is a float64:
// a number written as a float (3e3, 3000.0) is an integer only below it.
const maxExact = 1 << 53

// decodeInt accepts an integer, or a float that is exactly one (3000.0),
// of at most maxInt in absolute value.
func decodeInt(s *scalar) (int64, error) {
	outOfRange := fmt.Errorf("out of range: an integer of at most %d in absolute value", maxInt)
	switch v := s.val.(type) {
	case int:
		if v > maxInt || v < -maxInt {
			return 0, outOfRange
		}
		return int64(v), nil
	case uint64:
		return 0, outOfRange
	case float64:
		switch {
		case math.IsNaN(v) || math.IsInf(v, 0) || v != math.Trunc(v):
			return 0, errors.New("want an integer")
		case math.Abs(v) > maxInt:
			return 0, outOfRange
		}
		return int64(v), nil
	}
	return 0, fmt.Errorf("want an integer, got %s", kindOf(s))
}

// decodeUint accepts an integer ≥ 0 (a seed: any uint64), or a float that
// is exactly one, up to 2^53.
func decodeUint(s *scalar) (uint64, error) {
	switch v := s.val.(type) {
	case int:
		if v < 0 {
			return 0, errors.New("want an integer ≥ 0")
		}
		return uint64(v), nil
	case uint64:
		return v, nil
	case float64:
		switch {
		case math.IsNaN(v) || math.IsInf(v, 0) || v != math.Trunc(v) || v < 0:
			return 0, errors.New("want an integer ≥ 0")
		case v > maxExact:
			return 0, fmt.Errorf("out of range: write an integer of at most %d, without exponent or fraction", uint64(math.MaxUint64))
		}
		return uint64(v), nil
	}
	return 0, fmt.Errorf("want an integer ≥ 0, got %s", kindOf(s))
}

// decodeFloat accepts any finite number.
func decodeFloat(s *scalar) (float64, error) {
	var x float64
	switch v := s.val.(type) {
	case int:
		x = float64(v)
	case uint64:
		x = float64(v)
	case float64:
		x = v
	default:
		return 0, fmt.Errorf("want a number, got %s", kindOf(s))
	}
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0, errors.New("want a finite number")
	}
	return x, nil
}

// decodeError turns mapstructure's errors into one naming the key as the
// protocol writes it (settings.d3.T, seeds[0]), the value as written and
// where it came from: the first by key, so that the same file always gives
// the same error.
func decodeError(err error) error {
	var all []*mapstructure.DecodeError
	gatherDecodeErrors(err, &all)
	if len(all) == 0 {
		return err
	}
	slices.SortStableFunc(all, func(a, b *mapstructure.DecodeError) int { return strings.Compare(a.Name(), b.Name()) })
	de := all[0]
	path, t := keyPath(de.Name())
	var ve *valueError
	if errors.As(de.Unwrap(), &ve) {
		msg := ve.msg
		if ve.from != "" {
			msg += " (from " + ve.from + ")"
		}
		path += ve.sub
		switch {
		case path == "":
			return errors.New(msg)
		case ve.s != nil && ve.s.tag == "!!str":
			return fmt.Errorf("%s = %s: %s", path, clip(ve.s.text), msg)
		case ve.s != nil && ve.s.tag != "!!null":
			return fmt.Errorf("%s = %s: %s", path, clipRaw(ve.s.text), msg)
		}
		return fmt.Errorf("%s: %s", path, msg)
	}
	if keys, ok := strings.CutPrefix(de.Unwrap().Error(), "has invalid keys: "); ok {
		key, _, _ := strings.Cut(keys, ", ")
		return unknownKey(path, key, t)
	}
	if path == "" {
		return de.Unwrap()
	}
	return fmt.Errorf("%s: %v", path, de.Unwrap())
}

// unknownKey is the error of an unknown key under path, a mapping decoded
// into t.
func unknownKey(path, key string, t reflect.Type) error {
	switch {
	case path == "" && key == "slurm":
		return errSlurmMoved
	case t == nil || t.Kind() != reflect.Struct:
		return fmt.Errorf("%s: unknown key", join(path, key))
	}
	return fmt.Errorf("%s: unknown key (known: %s)", join(path, key), strings.Join(structKeys(t), ", "))
}

var errSlurmMoved = errors.New("slurm: the Slurm executor's settings moved to executors.slurm (docs/cluster.md): write `executors: {slurm: {...}}` with the same keys")

// gatherDecodeErrors gathers the DecodeErrors of err, a tree of joined and wrapped
// errors.
func gatherDecodeErrors(err error, all *[]*mapstructure.DecodeError) {
	switch e := err.(type) {
	case *mapstructure.DecodeError:
		*all = append(*all, e)
	case interface{ Unwrap() []error }:
		for _, x := range e.Unwrap() {
			gatherDecodeErrors(x, all)
		}
	default:
		if u := errors.Unwrap(err); u != nil {
			gatherDecodeErrors(u, all)
		}
	}
}

// keyPath renders mapstructure's name of a field (settings[d3].T,
// algorithms[0].params[delta]) as the protocol names keys
// (settings.d3.T, algorithms[0].params.delta), and returns the type of
// the field. Map keys hold no dot (parseTree refuses them).
func keyPath(name string) (string, reflect.Type) {
	t := reflect.TypeFor[Config]()
	var b strings.Builder
	for name != "" {
		switch t.Kind() {
		case reflect.Struct:
			name = strings.TrimPrefix(name, ".")
			i := strings.IndexAny(name, ".[")
			if i < 0 {
				i = len(name)
			}
			f, ok := fieldByTag(t, name[:i])
			if !ok {
				b.WriteString(name)
				return b.String(), nil
			}
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(name[:i])
			t, name = f.Type, name[i:]
		case reflect.Map:
			rest := strings.TrimPrefix(name, "[")
			end := strings.Index(rest, "].")
			if k := t.Elem().Kind(); end < 0 && (k == reflect.Map || k == reflect.Slice) {
				end = strings.Index(rest, "][")
			}
			if end < 0 {
				end = len(rest) - 1
			}
			if end < 0 {
				b.WriteString(name)
				return b.String(), nil
			}
			b.WriteString("." + rest[:end])
			t, name = t.Elem(), rest[end+1:]
		case reflect.Slice:
			end := strings.IndexByte(name, ']')
			if end < 0 {
				b.WriteString(name)
				return b.String(), nil
			}
			b.WriteString(name[:end+1])
			t, name = t.Elem(), name[end+1:]
		default:
			b.WriteString(name)
			return b.String(), nil
		}
	}
	return b.String(), t
}

func fieldByTag(t reflect.Type, tag string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		if f := t.Field(i); f.Tag.Get("mapstructure") == tag {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// structKeys are the keys a mapping decoded into t takes.
func structKeys(t reflect.Type) []string {
	var keys []string
	for i := range t.NumField() {
		if tag := t.Field(i).Tag.Get("mapstructure"); tag != "" && tag != "-" {
			keys = append(keys, tag)
		}
	}
	return keys
}
