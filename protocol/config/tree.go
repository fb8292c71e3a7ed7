package config

import (
	"cmp"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// The tree the loader layers and viper decodes: a mapping is a
// map[string]any (keys lower-cased), a list an []any, a scalar a *scalar,
// which keeps what was written and where: an error quotes it (.nan, 1e20)
// and names its origin, and strictHook refuses what a plain YAML value
// would hide (a string where a number is wanted, a null).
type scalar struct {
	tag  string // !!str, !!int, !!float, !!bool or !!null
	text string // as written
	val  any    // as YAML decodes it: int, uint64, float64, bool, string or nil
	from string // "--set k=v" or "THV_K" for an override; "" for the file
}

// emptyMapping is {} where the protocol layers keys: viper would drop an
// empty map, and with it the key, which must still be refused if unknown
// and found by --set. It holds no value (holdsNoValue).
type emptyMapping struct{}

// parseTree parses YAML whose top node is at nesting level `level` into
// the tree above, within the limits (limits.go): keys are plain strings
// (no dots, no duplicates in any case, no merge keys), tags the core ones.
// An empty document gives nil. Below a list (byKey false) viper's key
// limits do not apply and an empty mapping is a value, an empty map.
func parseTree(src []byte, level int, from string, byKey bool) (any, error) {
	if len(src) > MaxParamsBytes {
		return nil, fmt.Errorf("larger than %s, the limit on a params file", sizeLimit)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		return nil, fmt.Errorf("not valid YAML: %v", err)
	}
	if len(doc.Content) == 0 {
		return nil, nil
	}
	p := treeParser{from: from}
	v, err := p.node(doc.Content[0], level, byKey)
	switch { // the limits on viper's keys are the tightest: said last
	case err != nil:
		return nil, err
	case p.deepLine > 0:
		return nil, fmt.Errorf("line %d: a key more than %d levels deep (settings.d3.T is 3), the limit on a params file", p.deepLine, maxKeyDepth)
	case p.keys > maxParamsKeys:
		return nil, fmt.Errorf("line %d: more than %d keys (paths of mapping keys to a value, as settings.d3.T), the limit on a params file", p.manyLine, maxParamsKeys)
	}
	return v, nil
}

type treeParser struct {
	values, keys       int
	deepLine, manyLine int // the first key deeper than maxKeyDepth, the key over maxParamsKeys
	from               string
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
		return p.scalar(n)
	case yaml.SequenceNode:
		out := make([]any, len(n.Content))
		for i, item := range n.Content {
			v, err := p.node(item, level+1, false)
			if err != nil {
				return nil, err
			}
			out[i] = v
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
		written := make(map[string]string, len(n.Content)/2) // lower-cased key → as written
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			key := strings.ToLower(k.Value)
			switch {
			case k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge":
				return nil, fmt.Errorf("line %d: merge keys (<<) are not supported: write the keys out", k.Line)
			case k.Kind != yaml.ScalarNode || k.ShortTag() != "!!str":
				return nil, fmt.Errorf("line %d: a key must be a plain string, not %s", k.Line, clip(k.Value))
			case key == "":
				return nil, fmt.Errorf("line %d: empty key", k.Line)
			case len(key) > maxKeyBytes:
				return nil, fmt.Errorf("line %d: key %s is longer than %d bytes", k.Line, clip(k.Value), maxKeyBytes)
			case strings.Contains(key, "."):
				return nil, fmt.Errorf("line %d: key %s contains a dot (dots separate the levels of a key)", k.Line, clip(k.Value))
			case written[key] != "":
				return nil, fmt.Errorf("line %d: key %s is given twice (also as %s; keys are case-insensitive)", k.Line, clip(k.Value), clip(written[key]))
			}
			written[key] = k.Value
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

// scalar is n as YAML resolves and decodes it, refusing tags other than
// the core ones (a timestamp, a binary).
func (p *treeParser) scalar(n *yaml.Node) (*scalar, error) {
	tag := n.ShortTag()
	switch tag {
	case "!!str", "!!int", "!!float", "!!bool", "!!null":
	default:
		return nil, fmt.Errorf("line %d: %s values are not supported (quote %s to make it a string)", n.Line, tag, clip(n.Value))
	}
	s := &scalar{tag: tag, text: n.Value, from: p.from}
	if err := n.Decode(&s.val); err != nil {
		return nil, fmt.Errorf("line %d: %v", n.Line, err)
	}
	return s, nil
}

// isMapping reports whether v is a mapping, empty or not.
func isMapping(v any) bool {
	_, m := v.(map[string]any)
	return m || v == emptyMapping{}
}

// holdsNoValue reports whether v is {} or a non-empty map of them, as if
// absent. (An empty map is an empty mapping inside a list: a value.)
func holdsNoValue(v any) bool {
	switch v := v.(type) {
	case emptyMapping:
		return true
	case map[string]any:
		for _, x := range v {
			if !holdsNoValue(x) {
				return false
			}
		}
		return len(v) > 0
	}
	return false
}

// deepCopy copies the maps and lists of a value (scalars are shared:
// nothing changes them).
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

// scalarKinds names a scalar's kind by its tag, for an error (any other: a number).
var scalarKinds = map[string]string{"!!null": "no value (null)", "!!bool": "a boolean", "!!str": "a string"}

// kindOf names the kind of a value for an error.
func kindOf(v any) string {
	switch v := v.(type) {
	case map[string]any, emptyMapping:
		return "a mapping"
	case []any:
		return "a list"
	case *scalar:
		return cmp.Or(scalarKinds[v.tag], "a number")
	}
	return fmt.Sprintf("a %T", v)
}
