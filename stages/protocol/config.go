package protocol

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"thv"
	"thv/algos"
	_ "thv/algos/all" // the registry the protocol is validated against
	"thv/envs"
	"thv/pipeline/slurm"
	"thv/pipeline/userfile"
	"thv/stages/formats"
)

// Setting is one of the paper's experimental settings.
type Setting struct {
	Name  string  `mapstructure:"-"`
	D     int     `mapstructure:"d"`
	N     int     `mapstructure:"n"`
	K     int     `mapstructure:"k"`
	T     int     `mapstructure:"t"`
	Sigma float64 `mapstructure:"sigma"`
}

// AlgoConfig is the protocol of one algorithm.
type AlgoConfig struct {
	Name   string             `mapstructure:"name"` // as the paper prints it
	Eta    []float64          `mapstructure:"eta"`
	Params map[string]float64 `mapstructure:"params"`
}

// Config is the validated experiment protocol.
type Config struct {
	Profile    string             `mapstructure:"-"`
	Settings   map[string]Setting `mapstructure:"settings"`
	Geometries []string           `mapstructure:"geometries"`
	Seeds      []uint64           `mapstructure:"seeds"`
	GridSeeds  []uint64           `mapstructure:"grid_seeds"`
	// Instances is a reading of the paper's protocol (docs/fidelity.md):
	// per_seed draws one instance per (setting, geometry, seed); fixed
	// draws one per (setting, geometry), from Seed, and the run seeds vary
	// only the noise.
	// Order, ClusterSplit and Distractors are the generator's readings
	// (envs.Reading).
	Instances struct {
		Mode         string `mapstructure:"mode"`
		Seed         uint64 `mapstructure:"seed"`
		Order        string `mapstructure:"order"`
		ClusterSplit string `mapstructure:"clusters_split"`
		Distractors  string `mapstructure:"distractors"`
	} `mapstructure:"instances"`
	MinPulls int `mapstructure:"min_pulls"`
	// InitTies is how the forced initialisation breaks ties
	// (algos.InitTieRules): lowest_index or random.
	InitTies  string  `mapstructure:"init_ties"`
	Reference float64 `mapstructure:"reference"`
	Metrics   struct {
		HVWindow int `mapstructure:"hv_window"`
		// FinalRegret is which of our regrets the paper's "Final Regret"
		// column is compared with (docs/compare.md): regret_alpha_pos,
		// regret_alpha or regret_exact.
		FinalRegret string `mapstructure:"final_regret"`
	} `mapstructure:"metrics"`
	Algorithms []AlgoConfig `mapstructure:"algorithms"`
	Statistics struct {
		Confidence float64 `mapstructure:"confidence"`
		Resamples  int     `mapstructure:"bootstrap_resamples"`
		Seed       uint64  `mapstructure:"bootstrap_seed"`
	} `mapstructure:"statistics"`
	Figures struct {
		MovingAverage int `mapstructure:"moving_average"`
	} `mapstructure:"figures"`
	Outputs struct {
		Results string `mapstructure:"results"`
	} `mapstructure:"outputs"`
	// Readings is the readings sweep (thv readings): the paper's open
	// readings, each run as its own protocol. It enters no key.
	Readings Readings       `mapstructure:"readings"`
	Profiles map[string]any `mapstructure:"profiles"`
	// Slurm configures --executor slurm: where tasks run, never what they
	// compute, so no plan or task key reads it.
	Slurm slurm.Params `mapstructure:"slurm"`

	byName map[string]AlgoConfig
}

// The readings of instances.mode.
const (
	InstancesPerSeed = "per_seed"
	InstancesFixed   = "fixed"
)

// InstanceSeed is the seed of the instance a run of seed faces.
func (c *Config) InstanceSeed(seed uint64) uint64 {
	if c.Instances.Mode == InstancesFixed {
		return c.Instances.Seed
	}
	return seed
}

// InstanceReading is the generator's reading for geometry g: the fields
// that matter for g, so that a reading of another geometry's generator
// enters no key of g's instances.
func (c *Config) InstanceReading(g string) envs.Reading {
	r := envs.Reading{Order: c.Instances.Order, Distractors: c.Instances.Distractors}
	if g == string(envs.Clusters) {
		r.ClusterSplit = c.Instances.ClusterSplit
	}
	return r
}

// Algorithm returns the protocol of the named algorithm.
func (c *Config) Algorithm(name string) (AlgoConfig, bool) {
	a, ok := c.byName[name]
	return a, ok
}

// LoadOptions says where the protocol comes from.
type LoadOptions struct {
	ParamsFile string   // "" means the embedded params.yaml
	Profile    string   // "" or "paper" means no profile
	Set        []string // key=value overrides, applied last
}

// Limits on what LoadConfig reads, checked on the YAML node tree before
// anything is decoded: a params file, a --set value or a THV_* variable
// larger or deeper than this is refused.
const (
	MaxParamsBytes = 1 << 20 // bytes of a params file (1 MiB)
	MaxParamsDepth = 32      // nesting levels: the top-level mapping is level 1
	// maxParamsValues bounds the values of a params file once YAML aliases
	// are expanded (an alias bomb fits in a few hundred bytes).
	maxParamsValues = 1 << 18
	// maxKeyBytes bounds a key, so that an error naming a key path stays short.
	maxKeyBytes = 100
	// maxInt bounds every integer parameter, so that no product of two of
	// them (n·min_pulls, …) can overflow.
	maxInt = math.MaxInt32
)

// LoadConfig reads params.yaml (embedded or a file), applies the profile,
// THV_* environment variables and --set overrides, and validates the result.
// Every error names the offending key.
//
// Decoding is strict (see decode): a value of the wrong type, a fraction or
// a boolean where an integer is wanted, a negative seed, a number out of
// range or not finite is an error naming its key and value, never coerced.
// Keys are case-insensitive, as they were under viper.
func LoadConfig(opt LoadOptions) (*Config, error) {
	src, name := thv.DefaultParams, "embedded params.yaml"
	if opt.ParamsFile != "" {
		b, err := readParamsFile(opt.ParamsFile)
		if err != nil {
			return nil, err
		}
		src, name = b, opt.ParamsFile
	}
	return loadConfig(src, name, opt, os.LookupEnv)
}

// readParamsFile reads a params file of at most MaxParamsBytes, without
// reading more than that from it; a named pipe, a device or a directory is
// refused before it is opened (userfile).
func readParamsFile(path string) ([]byte, error) {
	b, err := userfile.ReadFile(path, MaxParamsBytes)
	switch {
	case errors.Is(err, userfile.ErrTooLarge):
		return nil, fmt.Errorf("%s: larger than %s, the limit on a params file", path, sizeLimit)
	case err != nil:
		return nil, fmt.Errorf("reading params: %w", err)
	}
	return b, nil
}

const sizeLimit = "1 MiB (1048576 bytes)"

// loadConfig is LoadConfig on the bytes of a params file; env looks up the
// THV_* variables.
func loadConfig(src []byte, name string, opt LoadOptions, env func(string) (string, bool)) (*Config, error) {
	root, err := parseParams(src, 1, "")
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
		var sub *pnode
		if profiles != nil && profiles.kind == yaml.MappingNode {
			sub = profiles.get(lp)
		}
		if sub == nil || sub.kind != yaml.MappingNode {
			return nil, fmt.Errorf("%s: unknown profile %q (known: %s)", name, profile, strings.Join(profileNames(profiles), ", "))
		}
		if err := merge(root, sub.clone(), "", false); err != nil {
			return nil, fmt.Errorf("%s: profile %q: %w", name, profile, err)
		}
	}
	if err := applyEnv(root, root, "", env); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	for _, kv := range opt.Set {
		if err := applySet(root, kv, name); err != nil {
			return nil, err
		}
	}
	var c Config
	if err := decode(root, reflect.ValueOf(&c).Elem(), "", true); err != nil {
		return nil, fmt.Errorf("%s (profile %s): %w", name, profile, err)
	}
	c.Profile = profile
	if err := c.normalize(); err != nil {
		return nil, fmt.Errorf("%s (profile %s): %w", name, profile, err)
	}
	return &c, nil
}

func profileNames(profiles *pnode) []string {
	names := []string{"paper"}
	if profiles != nil && profiles.kind == yaml.MappingNode {
		names = append(names, slices.Sorted(slices.Values(profiles.keys))...)
	}
	if len(names) > 10 {
		names = append(names[:10], "…")
	}
	return names
}

// applySet applies one --set key=value: the key is a path of mapping keys
// (case-insensitive) and list indices, which must exist; the value is YAML.
// A mapping given for a mapping is merged into it (as a profile is), any
// other value replaces the old one.
func applySet(root *pnode, kv, name string) error {
	key, val, ok := strings.Cut(kv, "=")
	label := clipN(kv, 80) // a --set value may be long: never echo it whole
	if !ok || key == "" {
		return fmt.Errorf("--set %s: want key=value, e.g. --set settings.d3.T=300", label)
	}
	parent, slot, old := root.lookup(strings.Split(strings.ToLower(key), "."))
	if old == nil {
		return fmt.Errorf("--set %s: %s is not a key of %s", label, clip(key), name)
	}
	n, err := parseParams([]byte(val), strings.Count(key, ".")+2, "--set "+cut(kv, 80))
	if err != nil {
		return fmt.Errorf("--set %s: %v", label, err)
	}
	if n == nil {
		return fmt.Errorf("--set %s: no value after =", label)
	}
	if old.kind == yaml.MappingNode && n.kind == yaml.MappingNode {
		return merge(old, n, key, true)
	}
	parent.vals[slot] = n
	return nil
}

// applyEnv applies THV_* environment variables as viper's AutomaticEnv did:
// every leaf key of the protocol (a key whose value is not a mapping) can be
// overridden by THV_<KEY> with dots and dashes as underscores and + as PLUS,
// e.g. THV_SETTINGS_D3_T=300. The value is YAML; for a list, a bare
// comma-separated list (THV_SEEDS=0,1,2) is read as [0,1,2]. Empty variables
// are ignored.
func applyEnv(root, m *pnode, prefix string, env func(string) (string, bool)) error {
	for i, k := range m.keys {
		path := k
		if prefix != "" {
			path = prefix + "." + k
		}
		if v := m.vals[i]; v.kind == yaml.MappingNode {
			if err := applyEnv(root, v, path, env); err != nil {
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
		n, err := parseParams([]byte(val), strings.Count(path, ".")+2, name)
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

var envReplacer = strings.NewReplacer(".", "_", "-", "_", "+", "PLUS")

// pnode is a value of a params file: the YAML node tree, checked for size,
// depth and duplicate keys, with mapping keys lower-cased (keys are
// case-insensitive). Profiles, THV_* variables and --set are applied to it;
// decode then turns it into a Config.
type pnode struct {
	kind  yaml.Kind // yaml.ScalarNode, yaml.MappingNode or yaml.SequenceNode
	tag   string    // a scalar's resolved tag: !!str, !!int, !!float, !!bool or !!null
	text  string    // a scalar as written
	val   any       // a scalar as YAML decodes it (int, uint64, float64, bool, string, nil)
	keys  []string  // a mapping's keys, lower-cased, in order
	names []string  // a mapping's keys as written
	index map[string]int
	vals  []*pnode // a mapping's values or a list's items
	from  string   // where an override came from ("--set k=v", "THV_K"); "" for the file
}

// parseParams parses YAML into a pnode tree whose top node is at nesting
// level `level`, refusing more than MaxParamsBytes, nesting deeper than
// MaxParamsDepth, more than maxParamsValues values (aliases expanded),
// duplicate keys, keys that are not plain strings, merge keys and tags
// other than the core ones. An empty document gives nil.
func parseParams(src []byte, level int, from string) (*pnode, error) {
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
	p := parser{from: from}
	return p.node(doc.Content[0], level)
}

type parser struct {
	values int
	from   string
}

func (p *parser) node(n *yaml.Node, level int) (*pnode, error) {
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
			return &pnode{kind: yaml.ScalarNode, tag: tag, text: n.Value, val: v, from: p.from}, nil
		default:
			return nil, fmt.Errorf("line %d: %s values are not supported (quote %s to make it a string)", n.Line, tag, clip(n.Value))
		}
	case yaml.SequenceNode:
		out := &pnode{kind: yaml.SequenceNode, vals: make([]*pnode, 0, len(n.Content)), from: p.from}
		for _, item := range n.Content {
			v, err := p.node(item, level+1)
			if err != nil {
				return nil, err
			}
			out.vals = append(out.vals, v)
		}
		return out, nil
	case yaml.MappingNode:
		out := &pnode{kind: yaml.MappingNode, index: map[string]int{}, from: p.from}
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

func (n *pnode) add(key, name string, v *pnode) {
	n.index[key] = len(n.keys)
	n.keys = append(n.keys, key)
	n.names = append(n.names, name)
	n.vals = append(n.vals, v)
}

// get returns the value of a mapping's key (lower-case), or nil.
func (n *pnode) get(key string) *pnode {
	if i, ok := n.index[key]; ok {
		return n.vals[i]
	}
	return nil
}

// lookup follows a path of keys and list indices: the value found, its
// parent and its slot in the parent's vals (old is nil if there is none).
func (n *pnode) lookup(path []string) (parent *pnode, slot int, old *pnode) {
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
				slot = slices.IndexFunc(cur.vals, func(item *pnode) bool { return item.named(seg) })
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
func (n *pnode) named(seg string) bool {
	if n.kind != yaml.MappingNode {
		return false
	}
	i, ok := n.index["name"]
	return ok && n.vals[i].kind == yaml.ScalarNode && strings.ToLower(n.vals[i].text) == seg
}

func (n *pnode) clone() *pnode {
	c := *n
	if n.index != nil {
		c.index = maps.Clone(n.index)
		c.keys, c.names = slices.Clone(n.keys), slices.Clone(n.names)
	}
	if n.vals != nil {
		c.vals = make([]*pnode, len(n.vals))
		for i, v := range n.vals {
			c.vals[i] = v.clone()
		}
	}
	return &c
}

// merge merges mapping src into mapping dst: a mapping into a mapping
// recursively, any other value replaces. A profile may not replace a
// mapping by another kind of value (viper silently ignored it); --set may.
func merge(dst, src *pnode, path string, replaceMappings bool) error {
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
			if err := merge(dv, sv, key, replaceMappings); err != nil {
				return err
			}
		case dv.kind == yaml.MappingNode && !replaceMappings:
			return fmt.Errorf("%s: want a mapping, as in the protocol; got %s", key, kindOf(sv))
		default:
			dst.vals[j] = sv
		}
	}
	return nil
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// hasLeaf reports whether a mapping holds a value other than a mapping at
// any depth: viper dropped mappings that hold none, and so does decode.
func (n *pnode) hasLeaf() bool {
	if n.kind != yaml.MappingNode {
		return true
	}
	return slices.ContainsFunc(n.vals, (*pnode).hasLeaf)
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

func kindOf(n *pnode) string {
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
// errors, and a number must fit its field exactly (see decodeInt,
// decodeUint, decodeFloat). byKey is true while n was reached through
// mappings only: there, as under viper, a mapping that holds no value at
// any depth is the same as an absent key.
func decode(n *pnode, v reflect.Value, path string, byKey bool) error {
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
			return at("want a mapping, got %s", kindOf(n))
		}
		t := v.Type()
		for i, k := range n.keys {
			field := -1
			for f := range t.NumField() {
				if tag := t.Field(f).Tag.Get("mapstructure"); tag != "" && tag != "-" && tag == k {
					field = f
				}
			}
			key := join(path, n.names[i])
			if field < 0 {
				return fmt.Errorf("%s: unknown key (known: %s)", key, strings.Join(structKeys(t), ", "))
			}
			if byKey && !n.vals[i].hasLeaf() {
				continue
			}
			if err := decode(n.vals[i], v.Field(field), key, byKey); err != nil {
				return err
			}
		}
	case reflect.Map:
		if n.kind != yaml.MappingNode {
			return at("want a mapping, got %s", kindOf(n))
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
			if err := decode(n.vals[i], e, join(path, n.names[i]), byKey); err != nil {
				return err
			}
			m.SetMapIndex(reflect.ValueOf(k), e)
		}
		v.Set(m)
	case reflect.Slice:
		if n.kind != yaml.SequenceNode {
			return at("want a list, got %s", kindOf(n))
		}
		s := reflect.MakeSlice(v.Type(), len(n.vals), len(n.vals))
		for i, item := range n.vals {
			if err := decode(item, s.Index(i), fmt.Sprintf("%s[%d]", path, i), false); err != nil {
				return err
			}
		}
		v.Set(s)
	case reflect.Interface:
		if err := noNulls(n, path); err != nil {
			return err
		}
		if r := raw(n, byKey); r != nil {
			v.Set(reflect.ValueOf(r))
		}
	case reflect.String:
		if n.kind != yaml.ScalarNode || n.tag != "!!str" {
			return at("want a string, got %s", kindOf(n))
		}
		v.SetString(n.val.(string))
	case reflect.Int:
		x, err := decodeInt(n)
		if err != nil {
			return at("%v", err)
		}
		v.SetInt(x)
	case reflect.Uint64:
		x, err := decodeUint(n)
		if err != nil {
			return at("%v", err)
		}
		v.SetUint(x)
	case reflect.Float64:
		x, err := decodeFloat(n)
		if err != nil {
			return at("%v", err)
		}
		v.SetFloat(x)
	default:
		return at("cannot decode into %s", v.Type())
	}
	return nil
}

func structKeys(t reflect.Type) []string {
	var keys []string
	for f := range t.NumField() {
		if tag := t.Field(f).Tag.Get("mapstructure"); tag != "" && tag != "-" {
			keys = append(keys, tag)
		}
	}
	return keys
}

// noNulls refuses a null anywhere in n, as decode does for typed fields.
func noNulls(n *pnode, path string) error {
	if n.kind == yaml.ScalarNode && n.tag == "!!null" {
		return fmt.Errorf("%s: no value (null): give one, or remove the key", path)
	}
	for i, v := range n.vals {
		sub := fmt.Sprintf("%s[%d]", path, i)
		if n.kind == yaml.MappingNode {
			sub = join(path, n.names[i])
		}
		if err := noNulls(v, sub); err != nil {
			return err
		}
	}
	return nil
}

// raw is a value as viper kept it for a field of type any: mappings as
// map[string]any (keys lower-cased; under byKey, mappings that hold no
// value dropped), lists as []any, scalars as YAML decodes them.
func raw(n *pnode, byKey bool) any {
	switch n.kind {
	case yaml.MappingNode:
		if byKey && !n.hasLeaf() {
			return nil
		}
		m := make(map[string]any, len(n.keys))
		for i, k := range n.keys {
			if r := raw(n.vals[i], byKey); r != nil {
				m[k] = r
			}
		}
		return m
	case yaml.SequenceNode:
		s := make([]any, len(n.vals))
		for i, item := range n.vals {
			s[i] = raw(item, false)
		}
		return s
	}
	return n.val
}

// maxExact is the largest integer up to which every integer is a float64:
// a number written as a float (3e3, 3000.0) is an integer only below it.
const maxExact = 1 << 53

// decodeInt accepts an integer, or a float that is exactly one (3000.0),
// of at most maxInt in absolute value.
func decodeInt(n *pnode) (int64, error) {
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
	return 0, fmt.Errorf("want an integer, got %s", kindOf(n))
}

// decodeUint accepts an integer ≥ 0 (a seed: any uint64), or a float that
// is exactly one, up to 2^53.
func decodeUint(n *pnode) (uint64, error) {
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
	return 0, fmt.Errorf("want an integer ≥ 0, got %s", kindOf(n))
}

// decodeFloat accepts any finite number.
func decodeFloat(n *pnode) (float64, error) {
	var x float64
	switch v := n.val.(type) {
	case int:
		x = float64(v)
	case uint64:
		x = float64(v)
	case float64:
		x = v
	default:
		return 0, fmt.Errorf("want a number, got %s", kindOf(n))
	}
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0, errors.New("want a finite number")
	}
	return x, nil
}

// normalize restores the paper's algorithm names (viper lowercases keys) and
// validates everything a run needs, before anything runs.
func (c *Config) normalize() error {
	if len(c.Settings) == 0 {
		return fmt.Errorf("settings: no setting")
	}
	for name, s := range c.Settings {
		s.Name = name
		key := "settings." + name
		switch {
		case s.D < 2:
			return fmt.Errorf("%s.d = %d: need at least 2 objectives", key, s.D)
		case s.N < 1:
			return fmt.Errorf("%s.n = %d: need at least one arm", key, s.N)
		case s.K < 1 || s.K > s.N:
			return fmt.Errorf("%s.k = %d: slate size must be between 1 and n = %d", key, s.K, s.N)
		}
		if err := CheckSetting(key+".", s); err != nil {
			return err
		}
		switch {
		case s.T < algos.InitRounds(s.N, s.K, max(1, c.MinPulls)):
			return fmt.Errorf("%s.T = %d: shorter than the forced initialisation (%d rounds)", key, s.T, algos.InitRounds(s.N, s.K, max(1, c.MinPulls)))
		case s.T < c.Metrics.HVWindow:
			return fmt.Errorf("%s.T = %d: shorter than metrics.hv_window = %d", key, s.T, c.Metrics.HVWindow)
		}
		c.Settings[name] = s
	}
	if len(c.Geometries) == 0 {
		return fmt.Errorf("geometries: empty list")
	}
	for i, g := range c.Geometries {
		if _, err := envs.ParseGeometry(g); err != nil {
			return fmt.Errorf("geometries[%d]: %w", i, err)
		}
		if j := slices.Index(c.Geometries[:i], g); j >= 0 {
			return fmt.Errorf("geometries[%d] = %s: given twice (also geometries[%d]): remove one", i, g, j)
		}
	}
	if err := checkSeeds("seeds", c.Seeds); err != nil {
		return err
	}
	if err := checkSeeds("grid_seeds", c.GridSeeds); err != nil {
		return err
	}
	if n := len(c.Readings.InstanceSeeds); n > MaxSeeds {
		return fmt.Errorf("readings.instance_seeds: %d seeds, above the limit of %d (docs/reliability.md, \"Protocol limits\"): give at most %d", n, MaxSeeds, MaxSeeds)
	}
	for _, s := range c.SortedSettings() {
		if rounds := len(c.Seeds) * s.T; rounds > MaxSeedRounds {
			return fmt.Errorf("settings.%s.T = %d with %d seeds: %d seed-rounds, above the limit of %d on len(seeds)·T (a figures task holds every drawn run's trajectory; docs/reliability.md, \"Protocol limits\"): give fewer seeds or a shorter T",
				s.Name, s.T, len(c.Seeds), rounds, MaxSeedRounds)
		}
	}
	switch c.Instances.Mode {
	case "":
		c.Instances.Mode = InstancesPerSeed
	case InstancesPerSeed, InstancesFixed:
	default:
		return fmt.Errorf("instances.mode = %q: want %s (one instance per seed) or %s (one per setting and geometry, from instances.seed)", c.Instances.Mode, InstancesPerSeed, InstancesFixed)
	}
	switch {
	case c.InitTies == "":
		c.InitTies = algos.InitTieRules[0]
	case !slices.Contains(algos.InitTieRules, c.InitTies):
		return fmt.Errorf("init_ties = %q: want one of %v", c.InitTies, algos.InitTieRules)
	}
	switch c.Metrics.FinalRegret {
	case "":
		c.Metrics.FinalRegret = formats.RegretMetrics[0]
	default:
		if !slices.Contains(formats.RegretMetrics, c.Metrics.FinalRegret) {
			return fmt.Errorf("metrics.final_regret = %q: want one of %v", c.Metrics.FinalRegret, formats.RegretMetrics)
		}
	}
	if err := c.Readings.check(c); err != nil {
		return err
	}
	reading, err := envs.Reading{Order: c.Instances.Order, ClusterSplit: c.Instances.ClusterSplit, Distractors: c.Instances.Distractors}.Normalize()
	if err != nil {
		return fmt.Errorf("instances.%w", err)
	}
	c.Instances.Order, c.Instances.ClusterSplit, c.Instances.Distractors = reading.Order, reading.ClusterSplit, reading.Distractors
	if math.IsNaN(c.Reference) || math.IsInf(c.Reference, 0) {
		return fmt.Errorf("reference = %v: must be a finite number", c.Reference)
	}
	if c.MinPulls < 1 {
		return fmt.Errorf("min_pulls = %d: must be ≥ 1", c.MinPulls)
	}
	if c.Metrics.HVWindow < 1 {
		return fmt.Errorf("metrics.hv_window = %d: must be ≥ 1", c.Metrics.HVWindow)
	}
	if len(c.Algorithms) == 0 {
		return fmt.Errorf("algorithms: none listed")
	}
	named := make(map[string]AlgoConfig, len(c.Algorithms))
	for i, a := range c.Algorithms {
		key := fmt.Sprintf("%d (%s)", i, a.Name)
		spec, err := algos.Lookup(a.Name)
		if err != nil {
			return fmt.Errorf("algorithms[%s]: %w", key, err)
		}
		if _, dup := named[spec.Name]; dup {
			return fmt.Errorf("algorithms[%s]: %s is listed twice", key, spec.Name)
		}
		if spec.UsesEta && len(a.Eta) == 0 {
			return fmt.Errorf("algorithms[%s].eta: %s has η: give its grid, e.g. [0.01, 0.1, 0.3, 1.0]", key, spec.Name)
		}
		if !spec.UsesEta && len(a.Eta) > 0 {
			return fmt.Errorf("algorithms[%s].eta: %s has no η parameter; remove the grid", key, spec.Name)
		}
		if len(a.Eta) > MaxEtas {
			return fmt.Errorf("algorithms[%s].eta: %d values, above the limit of %d on an η grid (each value is a run per seed; docs/reliability.md, \"Protocol limits\"): give at most %d", key, len(a.Eta), MaxEtas, MaxEtas)
		}
		for i, e := range a.Eta {
			if !(e > 0) || math.IsInf(e, 1) {
				return fmt.Errorf("algorithms[%s].eta[%d] = %v: η must be finite and > 0", key, i, e)
			}
			if j := slices.Index(a.Eta[:i], e); j >= 0 {
				return fmt.Errorf("algorithms[%s].eta[%d] = %v: given twice (also eta[%d]): remove one", key, i, e, j)
			}
		}
		for p, x := range a.Params {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return fmt.Errorf("algorithms[%s].params.%s = %v: must be a finite number", key, p, x)
			}
			j := slices.IndexFunc(spec.Params, func(q algos.Param) bool { return q.Name == p })
			if j < 0 {
				return fmt.Errorf("algorithms[%s].params.%s: %s has no parameter %q (see thv algos)", key, p, spec.Name, p)
			}
			if err := spec.Params[j].Check(x); err != nil {
				return fmt.Errorf("algorithms[%s].params.%s: %w", key, p, err)
			}
		}
		for _, s := range c.SortedSettings() {
			if err := CheckParams(spec.Name, a.Params, s.D, fmt.Sprintf("algorithms[%s].params", key), "settings."+s.Name); err != nil {
				return err
			}
		}
		a.Name = spec.Name
		c.Algorithms[i] = a
		named[spec.Name] = a
	}
	c.byName = named
	if !(c.Statistics.Confidence > 0 && c.Statistics.Confidence < 1) {
		return fmt.Errorf("statistics.confidence = %v: must be in (0, 1)", c.Statistics.Confidence)
	}
	switch r := c.Statistics.Resamples; {
	case r < 1:
		return fmt.Errorf("statistics.bootstrap_resamples = %d: must be ≥ 1", r)
	case r > MaxResamples:
		return fmt.Errorf("statistics.bootstrap_resamples = %d: above the limit of %d (each paired comparison keeps one mean per resample; docs/reliability.md, \"Protocol limits\"): give at most %d", r, MaxResamples, MaxResamples)
	case r*len(c.Seeds) > MaxResampleDraws:
		return fmt.Errorf("statistics.bootstrap_resamples = %d with %d seeds: %d draws per paired comparison, above the limit of %d on bootstrap_resamples·len(seeds) (docs/reliability.md, \"Protocol limits\"): give fewer resamples or seeds", r, len(c.Seeds), r*len(c.Seeds), MaxResampleDraws)
	}
	switch w := c.Figures.MovingAverage; {
	case w < 1:
		return fmt.Errorf("figures.moving_average = %d: must be ≥ 1", w)
	case w > MaxMovingAverage:
		return fmt.Errorf("figures.moving_average = %d: above the limit of %d (the moving average costs T·w per curve; docs/reliability.md, \"Protocol limits\"): give at most %d", w, MaxMovingAverage, MaxMovingAverage)
	}
	if n := c.planBound(); n > MaxTasks {
		return fmt.Errorf("the plan would have up to %d tasks (%d settings × %d geometries × the runs of %d algorithms over %d seeds and %d grid seeds), above the limit of %d (docs/reliability.md, \"Protocol limits\"): give fewer settings, geometries, algorithms, η values or seeds",
			n, len(c.Settings), len(c.Geometries), len(c.Algorithms), len(c.Seeds), len(c.GridSeeds), MaxTasks)
	}
	if c.Outputs.Results == "" {
		return fmt.Errorf("outputs.results: empty path")
	}
	if err := c.Slurm.Validate(); err != nil {
		return fmt.Errorf("slurm.%w", err)
	}
	return nil
}

// checkSeeds refuses an empty list of seeds, more than MaxSeeds, and a seed
// given twice: a seed names its runs, and two inputs of one name would fail
// every task that collects them.
func checkSeeds(key string, seeds []uint64) error {
	switch {
	case len(seeds) == 0:
		return fmt.Errorf("%s: empty list (need at least one seed)", key)
	case len(seeds) > MaxSeeds:
		return fmt.Errorf("%s: %d seeds, above the limit of %d (each seed is a run per setting, geometry, algorithm and η; docs/reliability.md, \"Protocol limits\"): give at most %d", key, len(seeds), MaxSeeds, MaxSeeds)
	}
	at := make(map[uint64]int, len(seeds))
	for i, s := range seeds {
		if j, dup := at[s]; dup {
			return fmt.Errorf("%s[%d] = %d: given twice (also %s[%d]): remove one", key, i, s, key, j)
		}
		at[s] = i
	}
	return nil
}

// SettingFor returns the setting with d objectives.
func (c *Config) SettingFor(d int) (Setting, bool) {
	for _, s := range c.SortedSettings() {
		if s.D == d {
			return s, true
		}
	}
	return Setting{}, false
}

// SortedSettings returns the settings by increasing d, then name.
func (c *Config) SortedSettings() []Setting {
	out := make([]Setting, 0, len(c.Settings))
	for _, s := range c.Settings {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].D != out[j].D {
			return out[i].D < out[j].D
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// SortedAlgorithms returns the configured algorithms in paper order.
func (c *Config) SortedAlgorithms() []AlgoConfig {
	var out []AlgoConfig
	for _, name := range algos.PaperOrder {
		if a, ok := c.byName[name]; ok {
			out = append(out, a)
		}
	}
	return out
}
