package config

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"thv"
)

// legacyLoadConfig is LoadConfig as it was before viper did the layering:
// a strict decoder of the YAML node tree that reproduced viper's quirks by
// hand (case-insensitive keys, a mapping that holds no value is absent),
// kept as the tests' oracle: every params file, profile and override must
// give exactly the Config and the verdict it gives (TestLoadConfigAsBefore,
// FuzzLoadConfig). Its decoding into the Config goes by the mapstructure
// tags, as LoadConfig's; its validation is LoadConfig's (normalize). Never
// use it elsewhere.
func legacyLoadConfig(opt LoadOptions) (*Config, error) {
	src, name := thv.DefaultParams, "embedded params.yaml"
	if opt.ParamsFile != "" {
		b, err := readParamsFile(opt.ParamsFile)
		if err != nil {
			return nil, err
		}
		src, name = b, opt.ParamsFile
	}
	return legacyLoad(src, name, opt, os.LookupEnv)
}

// legacyLoad is LoadConfig on the bytes of a params file; env looks up the
// THV_* variables.
func legacyLoad(src []byte, name string, opt LoadOptions, env func(string) (string, bool)) (*Config, error) {
	root, err := legacyParse(src, 1, "")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if root == nil || root.kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s: not a mapping of keys to values (see the embedded params.yaml)", name)
	}
	profile := opt.Profile
	if profile == "" {
		profile = "paper"
	}
	if lp := strings.ToLower(profile); lp != "paper" {
		profiles := root.get("profiles")
		var sub *lnode
		if profiles != nil && profiles.kind == yaml.MappingNode {
			sub = profiles.get(lp)
		}
		if sub == nil || sub.kind != yaml.MappingNode {
			return nil, fmt.Errorf("%s: unknown profile %q (known: %s)", name, profile, strings.Join(legacyProfileNames(profiles), ", "))
		}
		if err := legacyMerge(root, sub.clone(), "", false); err != nil {
			return nil, fmt.Errorf("%s: profile %q: %w", name, profile, err)
		}
	}
	if err := legacyApplyEnv(root, root, "", env); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	for _, kv := range opt.Set {
		if err := legacyApplySet(root, kv, name); err != nil {
			return nil, err
		}
	}
	var c Config
	if err := legacyDecode(root, reflect.ValueOf(&c).Elem(), "", true); err != nil {
		return nil, fmt.Errorf("%s (profile %s): %w", name, profile, err)
	}
	c.Profile = profile
	if err := c.normalize(); err != nil {
		return nil, fmt.Errorf("%s (profile %s): %w", name, profile, err)
	}
	return &c, nil
}

func legacyProfileNames(profiles *lnode) []string {
	names := []string{"paper"}
	if profiles != nil && profiles.kind == yaml.MappingNode {
		names = append(names, slices.Sorted(slices.Values(profiles.keys))...)
	}
	if len(names) > 10 {
		names = append(names[:10], "…")
	}
	return names
}

// legacyApplySet applies one --set key=value: the key is a path of mapping keys
// (case-insensitive) and list indices, which must exist; the value is YAML.
// A mapping given for a mapping is merged into it (as a profile is), any
// other value replaces the old one.
func legacyApplySet(root *lnode, kv, name string) error {
	key, val, ok := strings.Cut(kv, "=")
	label := clipN(kv, 80) // a --set value may be long: never echo it whole
	if !ok || key == "" {
		return fmt.Errorf("--set %s: want key=value, e.g. --set settings.d3.T=300", label)
	}
	parent, slot, old := root.lookup(strings.Split(strings.ToLower(key), "."))
	if old == nil {
		return fmt.Errorf("--set %s: %s is not a key of %s", label, clip(key), name)
	}
	n, err := legacyParse([]byte(val), strings.Count(key, ".")+2, "--set "+cut(kv, 80))
	if err != nil {
		return fmt.Errorf("--set %s: %v", label, err)
	}
	if n == nil {
		return fmt.Errorf("--set %s: no value after =", label)
	}
	if old.kind == yaml.MappingNode && n.kind == yaml.MappingNode {
		return legacyMerge(old, n, key, true)
	}
	parent.vals[slot] = n
	return nil
}

// legacyApplyEnv applies THV_* environment variables as viper's AutomaticEnv did:
// every leaf key of the protocol (a key whose value is not a mapping) can be
// overridden by THV_<KEY> with dots and dashes as underscores and + as PLUS,
// e.g. THV_SETTINGS_D3_T=300. The value is YAML; for a list, a bare
// comma-separated list (THV_SEEDS=0,1,2) is read as [0,1,2]. Empty variables
// are ignored.
func legacyApplyEnv(root, m *lnode, prefix string, env func(string) (string, bool)) error {
	for i, k := range m.keys {
		path := k
		if prefix != "" {
			path = prefix + "." + k
		}
		if v := m.vals[i]; v.kind == yaml.MappingNode {
			if err := legacyApplyEnv(root, v, path, env); err != nil {
				return err
			}
			continue
		}
		name := envReplacer.Replace(strings.ToUpper("THV_" + path))
		val, ok := env(name)
		if !ok || val == "" {
			continue
		}
		if m.vals[i].kind == yaml.SequenceNode && !strings.HasPrefix(strings.TrimSpace(val), "[") {
			val = "[" + val + "]"
		}
		n, err := legacyParse([]byte(val), strings.Count(path, ".")+2, name)
		if err != nil {
			return fmt.Errorf("environment %s: %v", name, err)
		}
		if n == nil {
			continue
		}
		m.vals[i] = n
	}
	return nil
}

// lnode is a value of a params file: the YAML node tree, checked for size,
// depth and duplicate keys, with mapping keys lower-cased (keys are
// case-insensitive). Profiles, THV_* variables and --set are applied to it;
// decode then turns it into a Config.
type lnode struct {
	kind  yaml.Kind // yaml.ScalarNode, yaml.MappingNode or yaml.SequenceNode
	tag   string    // a scalar's resolved tag: !!str, !!int, !!float, !!bool or !!null
	text  string    // a scalar as written
	val   any       // a scalar as YAML decodes it (int, uint64, float64, bool, string, nil)
	keys  []string  // a mapping's keys, lower-cased, in order
	names []string  // a mapping's keys as written
	index map[string]int
	vals  []*lnode // a mapping's values or a list's items
	from  string   // where an override came from ("--set k=v", "THV_K"); "" for the file
}

// legacyParse parses YAML into a lnode tree whose top node is at nesting
// level `level`, refusing more than MaxParamsBytes, nesting deeper than
// MaxParamsDepth, more than maxParamsValues values (aliases expanded),
// duplicate keys, keys that are not plain strings, merge keys and tags
// other than the core ones. An empty document gives nil.
func legacyParse(src []byte, level int, from string) (*lnode, error) {
	if len(src) > MaxParamsBytes {
		return nil, fmt.Errorf("larger than %s, the limit on a params file", sizeLimit)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		return nil, fmt.Errorf("not valid YAML: %v", err)
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, nil
	}
	p := legacyParser{from: from}
	return p.node(doc.Content[0], level)
}

type legacyParser struct {
	values int
	from   string
}

func (p *legacyParser) node(n *yaml.Node, level int) (*lnode, error) {
	if level > MaxParamsDepth {
		return nil, fmt.Errorf("line %d: nested deeper than %d levels, the limit on a params file", n.Line, MaxParamsDepth)
	}
	if p.values++; p.values > maxParamsValues {
		return nil, fmt.Errorf("line %d: more than %d values (aliases expanded), the limit on a params file", n.Line, maxParamsValues)
	}
	switch n.Kind {
	case yaml.AliasNode:
		return p.node(n.Alias, level)
	case yaml.ScalarNode:
		switch tag := n.ShortTag(); tag {
		case "!!str", "!!int", "!!float", "!!bool", "!!null":
			v, err := scalarValue(n, tag)
			if err != nil {
				return nil, fmt.Errorf("line %d: %v", n.Line, err)
			}
			return &lnode{kind: yaml.ScalarNode, tag: tag, text: n.Value, val: v, from: p.from}, nil
		default:
			return nil, fmt.Errorf("line %d: %s values are not supported (quote %s to make it a string)", n.Line, tag, clip(n.Value))
		}
	case yaml.SequenceNode:
		out := &lnode{kind: yaml.SequenceNode, vals: make([]*lnode, 0, len(n.Content)), from: p.from}
		for _, item := range n.Content {
			v, err := p.node(item, level+1)
			if err != nil {
				return nil, err
			}
			out.vals = append(out.vals, v)
		}
		return out, nil
	case yaml.MappingNode:
		out := &lnode{kind: yaml.MappingNode, index: map[string]int{}, from: p.from}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" {
				return nil, fmt.Errorf("line %d: merge keys (<<) are not supported: write the keys out", k.Line)
			}
			if k.Kind != yaml.ScalarNode || k.ShortTag() != "!!str" {
				return nil, fmt.Errorf("line %d: a key must be a plain string, not %s", k.Line, clip(k.Value))
			}
			key := strings.ToLower(k.Value)
			switch {
			case key == "":
				return nil, fmt.Errorf("line %d: empty key", k.Line)
			case len(key) > maxKeyBytes:
				return nil, fmt.Errorf("line %d: key %s is longer than %d bytes", k.Line, clip(k.Value), maxKeyBytes)
			case strings.Contains(key, "."):
				return nil, fmt.Errorf("line %d: key %s contains a dot (dots separate the levels of a key)", k.Line, clip(k.Value))
			}
			if j, dup := out.index[key]; dup {
				return nil, fmt.Errorf("line %d: key %s is given twice (also as %s; keys are case-insensitive)", k.Line, clip(k.Value), clip(out.names[j]))
			}
			v, err := p.node(n.Content[i+1], level+1)
			if err != nil {
				return nil, err
			}
			out.add(key, k.Value, v)
		}
		return out, nil
	}
	return nil, fmt.Errorf("line %d: unexpected YAML node", n.Line)
}
func (n *lnode) add(key, name string, v *lnode) {
	n.index[key] = len(n.keys)
	n.keys = append(n.keys, key)
	n.names = append(n.names, name)
	n.vals = append(n.vals, v)
}

// get returns the value of a mapping's key (lower-case), or nil.
func (n *lnode) get(key string) *lnode {
	if i, ok := n.index[key]; ok {
		return n.vals[i]
	}
	return nil
}

// lookup follows a path of keys and list indices: the value found, its
// parent and its slot in the parent's vals (old is nil if there is none).
func (n *lnode) lookup(path []string) (parent *lnode, slot int, old *lnode) {
	cur := n
	for _, seg := range path {
		parent, slot = cur, -1
		switch cur.kind {
		case yaml.MappingNode:
			if i, ok := cur.index[seg]; ok {
				slot = i
			}
		case yaml.SequenceNode:
			if i, err := strconv.Atoi(seg); err == nil && i >= 0 && i < len(cur.vals) && strconv.Itoa(i) == seg {
				slot = i
			} else {
				slot = slices.IndexFunc(cur.vals, func(item *lnode) bool { return item.named(seg) })
			}
		}
		if slot < 0 {
			return nil, 0, nil
		}
		cur = cur.vals[slot]
	}
	if parent == nil {
		return nil, 0, nil
	}
	return parent, slot, cur
}

// named reports whether n is a mapping whose "name" is seg, ignoring case:
// algorithms.THV-UCB.params.delta names an algorithm by name, not by its
// place in the list.
func (n *lnode) named(seg string) bool {
	if n.kind != yaml.MappingNode {
		return false
	}
	i, ok := n.index["name"]
	return ok && n.vals[i].kind == yaml.ScalarNode && strings.ToLower(n.vals[i].text) == seg
}

func (n *lnode) clone() *lnode {
	c := *n
	if n.index != nil {
		c.index = maps.Clone(n.index)
		c.keys, c.names = slices.Clone(n.keys), slices.Clone(n.names)
	}
	if n.vals != nil {
		c.vals = make([]*lnode, len(n.vals))
		for i, v := range n.vals {
			c.vals[i] = v.clone()
		}
	}
	return &c
}

// merge merges mapping src into mapping dst: a mapping into a mapping
// recursively, any other value replaces. A profile may not replace a
// mapping by another kind of value (viper silently ignored it); --set may.
func legacyMerge(dst, src *lnode, path string, replaceMappings bool) error {
	for i, k := range src.keys {
		sv := src.vals[i]
		key := join(path, src.names[i])
		j, ok := dst.index[k]
		if !ok {
			dst.add(k, src.names[i], sv)
			continue
		}
		dv := dst.vals[j]
		switch {
		case dv.kind == yaml.MappingNode && sv.kind == yaml.MappingNode:
			if err := legacyMerge(dv, sv, key, replaceMappings); err != nil {
				return err
			}
		case dv.kind == yaml.MappingNode && !replaceMappings:
			return fmt.Errorf("%s: want a mapping, as in the protocol; got %s", key, legacyKindOf(sv))
		default:
			dst.vals[j] = sv
		}
	}
	return nil
}

// hasLeaf reports whether a mapping holds a value other than a mapping at
// any depth: viper dropped mappings that hold none, and so does decode.
func (n *lnode) hasLeaf() bool {
	if n.kind != yaml.MappingNode {
		return true
	}
	return slices.ContainsFunc(n.vals, (*lnode).hasLeaf)
}

func legacyKindOf(n *lnode) string {
	switch n.kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	switch n.tag {
	case "!!null":
		return "no value (null)"
	case "!!bool":
		return "a boolean"
	case "!!str":
		return "a string"
	}
	return "a number"
}

// decode decodes n into v (a Config or part of one, by its mapstructure
// tags), strictly: unknown keys, nulls and values of the wrong type are
// errors, and a number must fit its field exactly (see legacyDecodeInt,
// legacyDecodeUint, legacyDecodeFloat). byKey is true while n was reached through
// mappings only: there, as under viper, a mapping that holds no value at
// any depth is the same as an absent key.
func legacyDecode(n *lnode, v reflect.Value, path string, byKey bool) error {
	at := func(format string, args ...any) error {
		msg := fmt.Sprintf(format, args...)
		if n.from != "" {
			msg += " (from " + n.from + ")"
		}
		switch {
		case path == "":
			return errors.New(msg)
		case n.kind == yaml.ScalarNode && n.tag == "!!str":
			return fmt.Errorf("%s = %s: %s", path, clip(n.text), msg)
		case n.kind == yaml.ScalarNode && n.tag != "!!null":
			return fmt.Errorf("%s = %s: %s", path, clipRaw(n.text), msg)
		}
		return fmt.Errorf("%s: %s", path, msg)
	}
	if n.kind == yaml.ScalarNode && n.tag == "!!null" {
		return at("no value (null): give one, or remove the key")
	}
	switch v.Kind() {
	case reflect.Struct:
		if n.kind != yaml.MappingNode {
			return at("want a mapping, got %s", legacyKindOf(n))
		}
		t := v.Type()
		for i, k := range n.keys {
			field := -1
			for f := range t.NumField() {
				if tag := t.Field(f).Tag.Get("mapstructure"); tag != "" && tag != "-" && strings.ToLower(tag) == k {
					field = f
				}
			}
			key := join(path, n.names[i])
			if field < 0 {
				return fmt.Errorf("%s: unknown key (known: %s)", key, strings.Join(legacyStructKeys(t), ", "))
			}
			if byKey && !n.vals[i].hasLeaf() {
				continue
			}
			if err := legacyDecode(n.vals[i], v.Field(field), key, byKey); err != nil {
				return err
			}
		}
	case reflect.Map:
		if n.kind != yaml.MappingNode {
			return at("want a mapping, got %s", legacyKindOf(n))
		}
		if byKey && !n.hasLeaf() {
			return nil
		}
		m := reflect.MakeMapWithSize(v.Type(), len(n.keys))
		for i, k := range n.keys {
			if byKey && !n.vals[i].hasLeaf() {
				continue
			}
			e := reflect.New(v.Type().Elem()).Elem()
			if err := legacyDecode(n.vals[i], e, join(path, n.names[i]), byKey); err != nil {
				return err
			}
			m.SetMapIndex(reflect.ValueOf(k), e)
		}
		v.Set(m)
	case reflect.Slice:
		if n.kind != yaml.SequenceNode {
			return at("want a list, got %s", legacyKindOf(n))
		}
		s := reflect.MakeSlice(v.Type(), len(n.vals), len(n.vals))
		for i, item := range n.vals {
			if err := legacyDecode(item, s.Index(i), fmt.Sprintf("%s[%d]", path, i), false); err != nil {
				return err
			}
		}
		v.Set(s)
	case reflect.Interface:
		if err := legacyNoNulls(n, path); err != nil {
			return err
		}
		if r := legacyRaw(n, byKey); r != nil {
			v.Set(reflect.ValueOf(r))
		}
	case reflect.String:
		if n.kind != yaml.ScalarNode || n.tag != "!!str" {
			return at("want a string, got %s", legacyKindOf(n))
		}
		v.SetString(n.val.(string))
	case reflect.Int:
		x, err := legacyDecodeInt(n)
		if err != nil {
			return at("%v", err)
		}
		v.SetInt(x)
	case reflect.Uint64:
		x, err := legacyDecodeUint(n)
		if err != nil {
			return at("%v", err)
		}
		v.SetUint(x)
	case reflect.Float64:
		x, err := legacyDecodeFloat(n)
		if err != nil {
			return at("%v", err)
		}
		v.SetFloat(x)
	default:
		return at("cannot decode into %s", v.Type())
	}
	return nil
}

func legacyStructKeys(t reflect.Type) []string {
	var keys []string
	for f := range t.NumField() {
		if tag := t.Field(f).Tag.Get("mapstructure"); tag != "" && tag != "-" {
			keys = append(keys, tag)
		}
	}
	return keys
}

// legacyNoNulls refuses a null anywhere in n, as decode does for typed fields.
func legacyNoNulls(n *lnode, path string) error {
	if n.kind == yaml.ScalarNode && n.tag == "!!null" {
		return fmt.Errorf("%s: no value (null): give one, or remove the key", path)
	}
	for i, v := range n.vals {
		sub := fmt.Sprintf("%s[%d]", path, i)
		if n.kind == yaml.MappingNode {
			sub = join(path, n.names[i])
		}
		if err := legacyNoNulls(v, sub); err != nil {
			return err
		}
	}
	return nil
}

// raw is a value as viper kept it for a field of type any: mappings as
// map[string]any (keys lower-cased; under byKey, mappings that hold no
// value dropped), lists as []any, scalars as YAML decodes them.
func legacyRaw(n *lnode, byKey bool) any {
	switch n.kind {
	case yaml.MappingNode:
		if byKey && !n.hasLeaf() {
			return nil
		}
		m := make(map[string]any, len(n.keys))
		for i, k := range n.keys {
			if r := legacyRaw(n.vals[i], byKey); r != nil {
				m[k] = r
			}
		}
		return m
	case yaml.SequenceNode:
		s := make([]any, len(n.vals))
		for i, item := range n.vals {
			s[i] = legacyRaw(item, false)
		}
		return s
	}
	return n.val
}

// legacyDecodeInt accepts an integer, or a float that is exactly one (3000.0),
// of at most maxInt in absolute value.
func legacyDecodeInt(n *lnode) (int64, error) {
	outOfRange := fmt.Errorf("out of range: an integer of at most %d in absolute value", maxInt)
	switch v := n.val.(type) {
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
	return 0, fmt.Errorf("want an integer, got %s", legacyKindOf(n))
}

// legacyDecodeUint accepts an integer ≥ 0 (a seed: any uint64), or a float that
// is exactly one, up to 2^53.
func legacyDecodeUint(n *lnode) (uint64, error) {
	switch v := n.val.(type) {
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
	return 0, fmt.Errorf("want an integer ≥ 0, got %s", legacyKindOf(n))
}

// legacyDecodeFloat accepts any finite number.
func legacyDecodeFloat(n *lnode) (float64, error) {
	var x float64
	switch v := n.val.(type) {
	case int:
		x = float64(v)
	case uint64:
		x = float64(v)
	case float64:
		x = v
	default:
		return 0, fmt.Errorf("want a number, got %s", legacyKindOf(n))
	}
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0, errors.New("want a finite number")
	}
	return x, nil
}

// normalize restores the paper's algorithm names (viper lowercases keys) and
