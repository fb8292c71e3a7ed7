package config

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// Limits on what LoadConfig reads, checked on the YAML node tree before
// viper sees anything: a params file, a --set value or a THV_* variable
// larger or deeper than this is refused.
const (
	MaxParamsBytes = 1 << 20 // bytes of a params file (1 MiB)
	MaxParamsDepth = 32      // nesting levels: the top-level mapping is level 1
	// maxParamsValues bounds the values of a params file once YAML aliases
	// are expanded (an alias bomb fits in a few hundred bytes).
	maxParamsValues = 1 << 18
	// maxKeyBytes bounds a key, so that an error naming a key path stays short.
	maxKeyBytes = 100
	// maxParamsKeys and maxKeyDepth bound viper's keys: the paths of
	// mapping keys to a value (settings.d3.T is a key 3 levels deep; a
	// list is one value). Viper's work grows with their number times the
	// square of their depth (about 30 µs a key 16 levels deep), so that
	// these bound it to about half a second (TestViperKeyLimits).
	// params.yaml has 54 keys, at most 5 levels deep.
	maxParamsKeys = 1 << 14
	maxKeyDepth   = 16
)

const sizeLimit = "1 MiB (1048576 bytes)"

// The values of a params file as viper layers them: a mapping is a
// map[string]any (keys lower-cased: keys are case-insensitive), a list an
// []any, a scalar a *scalar, and a mapping that holds no value an
// emptyMapping. The decode hook (config_decode.go) turns them into a
// Config.

// scalar is a YAML scalar as written, kept whole through viper's layers so
// that an error can quote it as the user wrote it (.nan, 1e20, -.Inf) and
// say where it came from.
type scalar struct {
	tag  string // the resolved tag: !!str, !!int, !!float, !!bool or !!null
	text string // as written
	val  any    // as YAML decodes it: int, uint64, float64, bool, string or nil
	from string // "--set k=v" or "THV_K" for an override; "" for the file
}

// emptyMapping is a mapping written with no key ({}) where viper layers
// keys. Viper would drop a real empty map, and with it the key that holds
// it; kept as a value of its own, the key stays, so that an unknown key is
// refused even when its value is {}, and --set can name it. It holds no
// value, and neither does a mapping of them (holdsNoValue): the decode
// hook treats both as absent, as viper treats a mapping with no value.
type emptyMapping struct{}

// unset marks, in viper's overrides, a key of the layers below that a
// --set giving a mapping for a value did not give: viper merges an
// override's mapping with the mappings below it, where such a --set
// replaces. It holds no value, and the decode hook drops it before
// mapstructure sees the key.
type unset struct{}

// parseTree parses YAML into the value tree whose top node is at nesting
// level `level`, refusing more than MaxParamsBytes, nesting deeper than
// MaxParamsDepth, more than maxParamsValues values (aliases expanded),
// more than maxParamsKeys keys or keys deeper than maxKeyDepth, duplicate
// keys, keys that are not plain strings, merge keys and tags other than
// the core ones. An empty document gives nil. byKey says the
// top node is reached from the top of the protocol through mappings only
// (not inside a list): there an empty mapping is an emptyMapping, inside
// a list it is an empty map, a value like any other.
func parseTree(src []byte, level int, from string, byKey bool) (any, error) {
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
	p := treeParser{from: from}
	v, err := p.node(doc.Content[0], level, byKey)
	switch {
	case err != nil:
		return nil, err
	case p.deepLine > 0:
		return nil, fmt.Errorf("line %d: a key more than %d levels deep (settings.d3.T is 3), the limit on a params file", p.deepLine, maxKeyDepth)
	case p.keys > maxParamsKeys:
		return nil, fmt.Errorf("line %d: more than %d keys (paths of mapping keys to a value, as settings.d3.T), the limit on a params file", p.manyLine, maxParamsKeys)
	}
	return v, nil
}

// treeParser checks the limits while it builds the tree. The limits on
// viper's keys are reported only once the tree is whole, after any other
// error: they are the tightest.
type treeParser struct {
	values   int
	keys     int // values reached through mappings only: viper's keys
	deepLine int // the first line of a key deeper than maxKeyDepth
	manyLine int // the line of the key over maxParamsKeys
	from     string
}

func (p *treeParser) node(n *yaml.Node, level int, byKey bool) (any, error) {
	if level > MaxParamsDepth {
		return nil, fmt.Errorf("line %d: nested deeper than %d levels, the limit on a params file", n.Line, MaxParamsDepth)
	}
	if p.values++; p.values > maxParamsValues {
		return nil, fmt.Errorf("line %d: more than %d values (aliases expanded), the limit on a params file", n.Line, maxParamsValues)
	}
	if byKey && n.Kind != yaml.AliasNode && (n.Kind != yaml.MappingNode || len(n.Content) == 0) {
		if p.keys++; p.keys == maxParamsKeys+1 {
			p.manyLine = n.Line
		}
	}
	switch n.Kind {
	case yaml.AliasNode:
		return p.node(n.Alias, level, byKey)
	case yaml.ScalarNode:
		switch tag := n.ShortTag(); tag {
		case "!!str", "!!int", "!!float", "!!bool", "!!null":
			v, err := scalarValue(n, tag)
			if err != nil {
				return nil, fmt.Errorf("line %d: %v", n.Line, err)
			}
			return &scalar{tag: tag, text: n.Value, val: v, from: p.from}, nil
		default:
			return nil, fmt.Errorf("line %d: %s values are not supported (quote %s to make it a string)", n.Line, tag, clip(n.Value))
		}
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for _, item := range n.Content {
			v, err := p.node(item, level+1, false)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case yaml.MappingNode:
		if len(n.Content) == 0 && byKey {
			return emptyMapping{}, nil
		}
		if byKey && level > maxKeyDepth && p.deepLine == 0 {
			p.deepLine = n.Line
		}
		out := make(map[string]any, len(n.Content)/2)
		names := make(map[string]string, len(n.Content)/2) // lower-cased key → as written
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
			if first, dup := names[key]; dup {
				return nil, fmt.Errorf("line %d: key %s is given twice (also as %s; keys are case-insensitive)", k.Line, clip(k.Value), clip(first))
			}
			names[key] = k.Value
			v, err := p.node(n.Content[i+1], level+1, byKey)
			if err != nil {
				return nil, err
			}
			out[key] = v
		}
		return out, nil
	}
	return nil, fmt.Errorf("line %d: unexpected YAML node", n.Line)
}

// scalarValue is the scalar as YAML decodes it into an any. The common
// forms are converted here as yaml.v3 converts them (Node.Decode costs some
// microseconds, too much for a million values); the rest by Node.Decode.
func scalarValue(n *yaml.Node, tag string) (any, error) {
	switch s := n.Value; tag {
	case "!!null":
		return nil, nil
	case "!!str":
		return s, nil
	case "!!bool":
		switch s {
		case "true":
			return true, nil
		case "false":
			return false, nil
		}
	case "!!int":
		if simpleDecimal(s, false) && (len(strings.TrimLeft(s, "-")) == 1 || strings.TrimLeft(s, "-")[0] != '0') {
			if x, err := strconv.ParseInt(s, 10, 64); err == nil {
				return int(x), nil
			}
		}
	case "!!float":
		if simpleDecimal(s, true) {
			if x, err := strconv.ParseFloat(s, 64); err == nil {
				return x, nil
			}
		}
	}
	var v any
	err := n.Decode(&v)
	return v, err
}

// simpleDecimal reports whether s is -?[0-9]+ or, with fraction,
// -?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?.
func simpleDecimal(s string, fraction bool) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	digits := func() bool {
		start := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i > start
	}
	if !digits() {
		return false
	}
	if !fraction {
		return i == len(s)
	}
	if i < len(s) && s[i] == '.' {
		i++
		if !digits() {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '-' || s[i] == '+') {
			i++
		}
		if !digits() {
			return false
		}
	}
	return i == len(s)
}

// isMapping reports whether v is a mapping: a map or an emptyMapping.
func isMapping(v any) bool {
	switch v.(type) {
	case map[string]any, emptyMapping:
		return true
	}
	return false
}

// holdsNoValue reports whether v is a mapping that holds no value at any
// depth: an emptyMapping (or unset), or a map of them. Viper drops such
// mappings, and so does the decode hook.
func holdsNoValue(v any) bool {
	switch v := v.(type) {
	case emptyMapping, unset:
		return true
	case map[string]any:
		for _, x := range v {
			if !holdsNoValue(x) {
				return false
			}
		}
		return len(v) > 0 // an empty map is an empty mapping inside a list: a value
	}
	return false
}

// deepCopy copies the maps and lists of a value tree (scalars are never
// changed, so they are shared).
func deepCopy(v any) any {
	switch v := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(v))
		for k, x := range v {
			m[k] = deepCopy(x)
		}
		return m
	case []any:
		s := make([]any, len(v))
		for i, x := range v {
			s[i] = deepCopy(x)
		}
		return s
	}
	return v
}

// kindOf names the kind of a value for an error.
func kindOf(v any) string {
	switch v := v.(type) {
	case map[string]any, emptyMapping:
		return "a mapping"
	case []any:
		return "a list"
	case *scalar:
		switch v.tag {
		case "!!null":
			return "no value (null)"
		case "!!bool":
			return "a boolean"
		case "!!str":
			return "a string"
		}
		return "a number"
	}
	return fmt.Sprintf("a %T", v)
}

// clip quotes a scalar as written for an error message, cut to 40 bytes.
func clip(s string) string { return clipN(s, 40) }

func clipN(s string, max int) string {
	if c := cut(s, max); c != s {
		return strconv.Quote(strings.TrimSuffix(c, "…")) + "…"
	}
	return strconv.Quote(s)
}

// cut cuts s to at most max bytes (at a rune boundary), marking a cut with …
func cut(s string, max int) string {
	if len(s) <= max {
		return s
	}
	for max > 0 && !utf8.RuneStart(s[max]) {
		max--
	}
	return s[:max] + "…"
}

// clipRaw is clip without the quotes, for numbers and booleans.
func clipRaw(s string) string { return cut(s, 40) }
