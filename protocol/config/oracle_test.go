package config

import (
	"errors"
	"math"
	"reflect"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// The tests' second opinion on a params file: the protocol's layering and
// decoding written again from its definition, on yaml.v3's node tree,
// sharing no code with the loader (no viper, none of its helpers), and
// without its error messages: only whether a file, profile, THV_*
// variables and --set overrides decode, and to which Config (before
// validation, which TestLoadConfigBadInput and checkConfig test apart).
//
// The protocol, as this file reads it:
//   - a params file is a YAML mapping of at most 1 MiB, nested at most 32
//     levels, of at most 2^18 values once aliases are expanded; keys are
//     plain strings, case-insensitive, unique, without dots, of 1 to 100
//     bytes; no merge keys; scalars of the core tags only;
//   - a profile is merged into the file: a mapping into a mapping, key by
//     key; a mapping may not become another kind of value;
//   - THV_<KEY> replaces the value of each key that is not a mapping; a
//     bare list may drop its brackets; an empty variable or one without a
//     YAML value changes nothing;
//   - --set key=value replaces the value at key (mapping keys, list
//     indices, or the name of a list's mapping), or merges a mapping into
//     a mapping; the key must exist;
//   - a mapping (reached from the top through mappings only) that holds
//     no value at any depth is as if absent; nulls are never a value;
//     numbers are never rounded, strings never numbers.

// oval is a YAML value: a mapping (keys lower-cased, in order), a list,
// or a scalar.
type oval struct {
	mapping, list bool
	keys          []string
	items         []*oval // a mapping's values, or a list's items
	tag           string
	val           any
	text          string
}

var errOracle = errors.New("refused")

type oracleReader struct{ count int }

func (r *oracleReader) read(n *yaml.Node, depth int) (*oval, error) {
	r.count++
	if depth > 32 || r.count > 1<<18 {
		return nil, errOracle
	}
	if n.Kind == yaml.AliasNode { // counted, and so is what it names
		return r.read(n.Alias, depth)
	}
	out := &oval{}
	if n.Kind == yaml.ScalarNode {
		out.tag, out.text = n.ShortTag(), n.Value
		if !strings.Contains(" !!str !!int !!float !!bool !!null ", " "+out.tag+" ") || n.Decode(&out.val) != nil {
			return nil, errOracle
		}
		return out, nil
	}
	out.mapping, out.list = n.Kind == yaml.MappingNode, n.Kind == yaml.SequenceNode
	step := 1
	if out.mapping {
		step = 2
	}
	for i := 0; i < len(n.Content); i += step {
		if out.mapping {
			k := n.Content[i]
			name := strings.ToLower(k.Value)
			if k.Kind != yaml.ScalarNode || k.ShortTag() != "!!str" || name == "" || len(name) > 100 || strings.ContainsRune(name, '.') || out.at(name) >= 0 {
				return nil, errOracle
			}
			out.keys = append(out.keys, name)
		}
		item, err := r.read(n.Content[i+step-1], depth+1)
		if err != nil {
			return nil, err
		}
		out.items = append(out.items, item)
	}
	return out, nil
}

// oracleParse reads a document whose top is at nesting level depth; nil
// for an empty one.
func oracleParse(src []byte, depth int) (*oval, error) {
	var doc yaml.Node
	if len(src) > 1<<20 || yaml.Unmarshal(src, &doc) != nil {
		return nil, errOracle
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, nil
	}
	return new(oracleReader).read(doc.Content[0], depth)
}

func (v *oval) at(key string) int {
	for i, k := range v.keys {
		if k == key {
			return i
		}
	}
	return -1
}

// child is the slot of seg in v: a mapping's key, a list's index, or the
// index of the list's mapping whose name is seg.
func (v *oval) child(seg string) int {
	switch {
	case v.mapping:
		return v.at(seg)
	case !v.list:
		return -1
	}
	if i, err := strconv.Atoi(seg); err == nil && strconv.Itoa(i) == seg && i >= 0 && i < len(v.items) {
		return i
	}
	for i, item := range v.items {
		if j := item.at("name"); item.mapping && j >= 0 && !item.items[j].mapping && !item.items[j].list && strings.ToLower(item.items[j].text) == seg {
			return i
		}
	}
	return -1
}

func (v *oval) copy() *oval {
	c := *v
	c.keys = append([]string(nil), v.keys...)
	c.items = make([]*oval, len(v.items))
	for i := range v.items {
		c.items[i] = v.items[i].copy()
	}
	return &c
}

// merge merges mapping src into mapping dst; a mapping of dst's may
// become another kind of value only if free.
func merge(dst, src *oval, free bool) error {
	for i, k := range src.keys {
		j := dst.at(k)
		switch {
		case j < 0:
			dst.keys, dst.items = append(dst.keys, k), append(dst.items, src.items[i])
		case dst.items[j].mapping && src.items[i].mapping:
			if err := merge(dst.items[j], src.items[i], free); err != nil {
				return err
			}
		case dst.items[j].mapping && !free:
			return errOracle
		default:
			dst.items[j] = src.items[i]
		}
	}
	return nil
}

// oracleLoad decodes src with opt's profile and overrides and the THV_*
// variables of env (by name).
func oracleLoad(src []byte, opt LoadOptions, env map[string]string) (*Config, error) {
	root, err := oracleParse(src, 1)
	if err != nil || root == nil || !root.mapping {
		return nil, errOracle
	}
	profile := opt.Profile
	if profile == "" {
		profile = "paper"
	}
	if p := strings.ToLower(profile); p != "paper" {
		i := root.at("profiles")
		if i < 0 || !root.items[i].mapping || root.items[i].child(p) < 0 || !root.items[i].items[root.items[i].child(p)].mapping {
			return nil, errOracle
		}
		if err := merge(root, root.items[i].items[root.items[i].child(p)].copy(), false); err != nil {
			return nil, err
		}
	}
	if err := oracleEnv(root, "", env); err != nil {
		return nil, err
	}
	for _, kv := range opt.Set {
		if err := oracleSet(root, kv); err != nil {
			return nil, err
		}
	}
	c := &Config{}
	if err := oracleDecode(root, reflect.ValueOf(c).Elem(), true); err != nil {
		return nil, err
	}
	c.Profile = profile
	return c, nil
}

func oracleEnv(m *oval, prefix string, env map[string]string) error {
	for i, k := range m.keys {
		item := m.items[i]
		if item.mapping {
			if err := oracleEnv(item, prefix+k+".", env); err != nil {
				return err
			}
			continue
		}
		name := "THV_" + strings.NewReplacer(".", "_", "-", "_", "+", "PLUS").Replace(strings.ToUpper(prefix+k))
		value := env[name]
		if value == "" {
			continue
		}
		if item.list && !strings.HasPrefix(strings.TrimSpace(value), "[") {
			value = "[" + value + "]"
		}
		n, err := oracleParse([]byte(value), strings.Count(prefix, ".")+2)
		if err != nil {
			return err
		}
		if n != nil {
			m.items[i] = n
		}
	}
	return nil
}

func oracleSet(root *oval, kv string) error {
	key, value, ok := strings.Cut(kv, "=")
	if !ok || key == "" {
		return errOracle
	}
	parent, slot := (*oval)(nil), -1
	for cur, seg := root, strings.Split(strings.ToLower(key), "."); len(seg) > 0; seg = seg[1:] {
		if slot = cur.child(seg[0]); slot < 0 {
			return errOracle
		}
		parent, cur = cur, cur.items[slot]
	}
	n, err := oracleParse([]byte(value), strings.Count(key, ".")+2)
	if err != nil || n == nil {
		return errOracle
	}
	if old := parent.items[slot]; old.mapping && n.mapping {
		return merge(old, n, true)
	}
	parent.items[slot] = n
	return nil
}

// holdsValue reports a value other than a mapping at any depth.
func (v *oval) holdsValue() bool {
	if !v.mapping {
		return true
	}
	for _, item := range v.items {
		if item.holdsValue() {
			return true
		}
	}
	return false
}

// oracleDecode sets out from v; byKey: v was reached from the top through
// mappings only.
func oracleDecode(v *oval, out reflect.Value, byKey bool) error {
	if v.tag == "!!null" {
		return errOracle
	}
	t := out.Type()
	switch t.Kind() {
	case reflect.Struct:
		if !v.mapping {
			return errOracle
		}
		for i, k := range v.keys {
			f := -1
			for j := 0; j < t.NumField(); j++ {
				if tag := t.Field(j).Tag.Get("mapstructure"); tag != "" && strings.EqualFold(tag, k) {
					f = j
				}
			}
			if f < 0 {
				return errOracle
			}
			if !byKey || v.items[i].holdsValue() {
				if err := oracleDecode(v.items[i], out.Field(f), byKey); err != nil {
					return err
				}
			}
		}
	case reflect.Map:
		if !v.mapping {
			return errOracle
		}
		if byKey && !v.holdsValue() {
			return nil
		}
		out.Set(reflect.MakeMap(t))
		for i, k := range v.keys {
			if byKey && !v.items[i].holdsValue() {
				continue
			}
			e := reflect.New(t.Elem()).Elem()
			if err := oracleDecode(v.items[i], e, byKey); err != nil {
				return err
			}
			out.SetMapIndex(reflect.ValueOf(k), e)
		}
	case reflect.Slice:
		if !v.list {
			return errOracle
		}
		out.Set(reflect.MakeSlice(t, len(v.items), len(v.items)))
		for i, item := range v.items {
			if err := oracleDecode(item, out.Index(i), false); err != nil {
				return err
			}
		}
	case reflect.Interface:
		x, err := v.plainValue(byKey)
		if err != nil {
			return err
		}
		if x != nil {
			out.Set(reflect.ValueOf(x))
		}
	case reflect.String:
		if v.tag != "!!str" {
			return errOracle
		}
		out.SetString(v.text)
	default:
		return oracleNumber(v, out)
	}
	return nil
}

// plainValue is v as a field of type any holds it: YAML's values, with
// the mappings that hold no value left out where reached by key; a null
// anywhere is refused.
func (v *oval) plainValue(byKey bool) (any, error) {
	switch {
	case v.tag == "!!null":
		return nil, errOracle
	case v.list:
		s := []any{}
		for _, item := range v.items {
			x, err := item.plainValue(false)
			if err != nil {
				return nil, err
			}
			s = append(s, x)
		}
		return s, nil
	case !v.mapping:
		return v.val, nil
	}
	m := map[string]any{}
	for i, k := range v.keys {
		x, err := v.items[i].plainValue(byKey)
		if err != nil {
			return nil, err
		}
		if x != nil {
			m[k] = x
		}
	}
	if byKey && !v.holdsValue() {
		return nil, nil
	}
	return m, nil
}

// oracleNumber sets an int (|x| < 2^31), a uint64 (from a float, only up
// to 2^53) or a finite float64; a float becomes an integer only if it is
// one.
func oracleNumber(v *oval, out reflect.Value) error {
	var f float64
	var exact bool // f is v's value exactly
	switch x := v.val.(type) {
	case int:
		f, exact = float64(x), x >= -1<<53 && x <= 1<<53
		if out.Kind() == reflect.Uint64 && x >= 0 {
			out.SetUint(uint64(x))
			return nil
		}
	case uint64:
		if out.Kind() == reflect.Uint64 {
			out.SetUint(x)
			return nil
		}
		f = float64(x)
	case float64:
		f, exact = x, true
	default:
		return errOracle
	}
	whole := exact && !math.IsInf(f, 0) && math.Floor(f) == f
	switch k := out.Kind(); {
	case k == reflect.Float64 && !math.IsNaN(f) && !math.IsInf(f, 0):
		out.SetFloat(f)
	case k == reflect.Int && whole && math.Abs(f) <= math.MaxInt32 && v.valIsNot(reflect.Uint64):
		out.SetInt(int64(f))
	case k == reflect.Uint64 && whole && f >= 0 && f <= 1<<53:
		out.SetUint(uint64(f))
	default:
		return errOracle
	}
	return nil
}

func (v *oval) valIsNot(k reflect.Kind) bool { return reflect.ValueOf(v.val).Kind() != k }
