package config

import (
	"crypto/sha256"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// The page's protocol line (protocol/export/report): a digest of the protocol's
// values and those that differ from the paper's. Both read the Config
// through its mapstructure keys (the names params.yaml uses), leaving out
// what says where things go rather than what is computed: outputs (a
// bundle exports to a temporary directory), profiles (their values are
// in the Config once applied) and executors.

// notValues are the top-level keys that are not the protocol's values.
var notValues = []string{"outputs", "profiles", "executors"}

// Values flattens the protocol to "key = value" pairs by params.yaml's
// names, sorted by key; an algorithm's keys are by its name
// (algorithms.THV-UCB.eta), a list of numbers is one value.
func (c *Config) Values() map[string]string {
	out := map[string]string{}
	flatten(reflect.ValueOf(*c), "", out)
	return out
}

// ValuesDigest is the SHA-256 of the protocol's values, one "key = value"
// line each in key order.
func (c *Config) ValuesDigest() string { return c.digest("") }

// ProtocolDigest is the SHA-256 of the values a pass's results depend
// on: the protocol's values but the readings sweep's section, which
// enters no task. A lock and thv readings' table are of the protocol
// with this digest (overrideSuffix, the page's readings).
func (c *Config) ProtocolDigest() string { return c.digest(sweepKeys) }

// digest is ValuesDigest without the keys of prefix skip ("": none).
func (c *Config) digest(skip string) string {
	v := c.Values()
	h := sha256.New()
	for _, k := range slices.Sorted(maps.Keys(v)) {
		if skip == "" || !strings.HasPrefix(k, skip) {
			fmt.Fprintf(h, "%s = %s\n", k, v[k])
		}
	}
	return fmt.Sprintf("sha256:%x", h.Sum(nil))
}

func flatten(v reflect.Value, key string, out map[string]string) {
	join := func(k string) string { return strings.TrimPrefix(key+"."+k, ".") } // no key has a dot
	switch v.Kind() {
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			tag := f.Tag.Get("mapstructure")
			if !f.IsExported() || tag == "" || (key == "" && slices.Contains(notValues, tag)) {
				continue // Profile, Setting.Name: the page and the map keys say them
			}
			flatten(v.Field(i), join(tag), out)
		}
	case reflect.Map:
		keys := v.MapKeys()
		slices.SortFunc(keys, func(a, b reflect.Value) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
		for _, k := range keys {
			flatten(v.MapIndex(k), join(fmt.Sprint(k)), out)
		}
	case reflect.Slice:
		if v.Len() > 0 && v.Index(0).Kind() == reflect.Struct {
			for i := range v.Len() {
				e := v.Index(i)
				name := strconv.Itoa(i)
				if n := e.FieldByName("Name"); n.IsValid() && n.Kind() == reflect.String && n.String() != "" {
					name = n.String()
				}
				flatten(e, join(name), out)
			}
			return
		}
		items := make([]string, v.Len())
		for i := range items {
			items[i] = valueText(v.Index(i))
		}
		out[key] = listText(items)
	case reflect.Interface:
		if v.IsNil() {
			out[key] = "null"
			return
		}
		flatten(v.Elem(), key, out)
	default:
		out[key] = valueText(v)
	}
}

func valueText(v reflect.Value) string {
	if v.Kind() == reflect.Interface && !v.IsNil() {
		v = v.Elem()
	}
	switch v.Kind() {
	case reflect.Float32, reflect.Float64:
		return strconv.FormatFloat(v.Float(), 'g', -1, 64)
	case reflect.String:
		return strconv.Quote(v.String())
	}
	return fmt.Sprint(v.Interface())
}

// listText prints a list; a run of consecutive integers as "[a … b]
// (n values)".
func listText(items []string) string {
	if len(items) > 4 {
		first, err := strconv.Atoi(items[0])
		i := 1
		for err == nil && i < len(items) && items[i] == strconv.Itoa(first+i) {
			i++
		}
		if err == nil && i == len(items) {
			return fmt.Sprintf("[%s … %s] (%d values)", items[0], items[len(items)-1], len(items))
		}
	}
	return "[" + strings.Join(items, ", ") + "]"
}

// paperConfig is the paper's protocol: the embedded params.yaml, with no
// profile and no override (THV_* variables included).
var paperConfig = sync.OnceValues(func() (*Config, error) {
	return Load(LoadOptions{Environ: []string{}})
})

// Override is a value of the protocol that differs from the paper's (the
// embedded params.yaml without a profile): its key, the paper's value and
// this protocol's ("" for a key the other does not have).
type Override struct{ Key, Paper, Ours string }

// DiffersFromPaper lists the protocol's values that differ from the
// paper's, by key.
func (c *Config) DiffersFromPaper() ([]Override, error) {
	p, err := paperConfig()
	if err != nil {
		return nil, fmt.Errorf("the paper's protocol: %w", err)
	}
	paper, ours := p.Values(), c.Values()
	var out []Override
	for k, v := range ours {
		if paper[k] != v {
			out = append(out, Override{k, paper[k], v})
		}
	}
	for k, v := range paper {
		if _, ok := ours[k]; !ok {
			out = append(out, Override{k, v, ""})
		}
	}
	slices.SortFunc(out, func(a, b Override) int { return strings.Compare(a.Key, b.Key) })
	return out, nil
}
