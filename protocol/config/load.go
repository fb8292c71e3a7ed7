package config

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/viper"

	"thv"
	"thv/pipeline/userfile"
)

// LoadOptions says where the protocol comes from.
type LoadOptions struct {
	ParamsFile string   // "" means the embedded params.yaml
	Profile    string   // "" or "paper" means no profile
	Set        []string // key=value overrides, applied last
	// Environ holds the THV_* variables, as os.Environ gives them; nil
	// means the process's.
	Environ []string
}

// Load reads params.yaml (embedded or a file) and validates it. Viper
// layers, from the bottom: the file (its defaults), the profile (its
// configuration), THV_* variables (merged into the configuration) and
// --set (its overrides); one Unmarshal decodes them strictly. Keys are
// case-insensitive; every error names the key and the value as written.
func Load(opt LoadOptions) (*Config, error) {
	src, name := thv.DefaultParams, "embedded params.yaml"
	if opt.ParamsFile != "" {
		b, err := userfile.ReadFile(opt.ParamsFile, MaxParamsBytes)
		switch {
		case errors.Is(err, userfile.ErrTooLarge):
			return nil, fmt.Errorf("%s: larger than %s, the limit on a params file", opt.ParamsFile, sizeLimit)
		case err != nil:
			return nil, fmt.Errorf("reading params: %w", err)
		}
		src, name = b, opt.ParamsFile
	}
	return load(src, name, opt)
}

// load is Load on the bytes of a params file.
func load(src []byte, name string, opt LoadOptions) (*Config, error) {
	c, err := layered(src, name, opt)
	if err != nil {
		return nil, err
	}
	if err := c.normalize(); err != nil {
		return nil, fmt.Errorf("%s (profile %s): %w", name, c.Profile, err)
	}
	return c, nil
}

// layered is the Config of a params file as viper layers and decodes it,
// before validation.
func layered(src []byte, name string, opt LoadOptions) (*Config, error) {
	tree, err := parseTree(src, 1, "", true)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	file, ok := tree.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: not a mapping of keys to values (see the embedded params.yaml)", name)
	}
	v := viper.New()
	setDefaults(v, "", file) // key by key: merging a map costs viper the square of its width
	profile := cmp.Or(opt.Profile, "paper")
	if err := mergeProfile(v, file, profile); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	env := opt.Environ
	if env == nil {
		env = os.Environ()
	}
	if err := mergeEnv(v, env); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	var below []string // the keys under the overrides
	if len(opt.Set) > 0 {
		below = v.AllKeys()
	}
	for _, kv := range opt.Set {
		if err := set(v, kv, name, below); err != nil {
			return nil, err
		}
	}
	c, err := decode(v)
	if err != nil {
		return nil, fmt.Errorf("%s (profile %s): %w", name, profile, err)
	}
	c.Profile = profile
	return c, nil
}

func setDefaults(v *viper.Viper, prefix string, m map[string]any) {
	for k, x := range m {
		if sub, ok := x.(map[string]any); ok {
			setDefaults(v, prefix+k+".", sub)
		} else {
			v.SetDefault(prefix+k, x)
		}
	}
}

// mergeProfile merges profiles.<profile> over the file, a mapping into a
// mapping. Viper would ignore a profile's value for a mapping, and let
// its {} for a mapping shadow it: the first is refused, the second
// dropped (profileOver).
func mergeProfile(v *viper.Viper, file map[string]any, profile string) error {
	if strings.EqualFold(profile, "paper") {
		return nil
	}
	profiles, _ := file["profiles"].(map[string]any)
	sub := profiles[strings.ToLower(profile)]
	if !isMapping(sub) {
		names := append([]string{"paper"}, slices.Sorted(maps.Keys(profiles))...)
		if len(names) > 10 {
			names = append(names[:10], "…")
		}
		return fmt.Errorf("unknown profile %q (known: %s)", profile, strings.Join(names, ", "))
	}
	over, ok := deepCopy(sub).(map[string]any)
	if !ok {
		return nil // {}
	}
	if err := profileOver(file, over, ""); err != nil {
		return fmt.Errorf("profile %q: %w", profile, err)
	}
	return v.MergeConfigMap(over)
}

// profileOver refuses a value of over for a mapping of base, and drops
// its {} for one.
func profileOver(base, over map[string]any, path string) error {
	for _, k := range slices.Sorted(maps.Keys(over)) {
		b, ok := base[k].(map[string]any)
		switch o := over[k]; {
		case !isMapping(base[k]): // absent, or a value: the profile's replaces it
		case o == (emptyMapping{}):
			delete(over, k)
		case !isMapping(o):
			return fmt.Errorf("%s%s: want a mapping, as in the protocol; got %s", path, k, kindOf(o))
		case ok:
			if err := profileOver(b, o.(map[string]any), path+k+"."); err != nil {
				return err
			}
		}
	}
	return nil
}

// OtherVariables are the THV_* variables that are not protocol keys: thv's
// own (the store, the remote cache), and those its scripts and tests set.
var OtherVariables = []string{"THV_STORE", "THV_REMOTE", "THV_TRUSTED_KEYS", "THV_REMOTE_ANONYMOUS",
	"THV_PAPER", "THV_SIGNING_KEY", "THV_SIGN_KEY_FILE", "THV_PUBLIC_CACHE",
	"THV_CROSSARCH", "THV_CROSSARCH_PARAMS", "THV_CROSSARCH_PROFILE"}

var envReplacer = strings.NewReplacer(".", "_", "-", "_", "+", "PLUS")

// envName is the variable of key k, as viper.AutomaticEnv names it with
// prefix THV and envReplacer.
func envName(k string) string { return envReplacer.Replace(strings.ToUpper("THV_" + k)) }

// mergeEnv merges THV_* variables into viper's configuration: THV_<KEY>
// replaces a key whose value is no mapping (THV_SETTINGS_D3_T=300) with
// YAML read under the file's limits (a list may drop its brackets:
// THV_SEEDS=0,1,2); an empty one, or one without a YAML value, changes
// nothing. Viper's AutomaticEnv cannot serve: it reads the process's
// environment, not opt.Environ, and hands over a string after the
// layering, without the limits or the variable's name. A variable naming
// no key (a typo, THV_SETTINGS_D3_TT) is refused, not ignored.
func mergeEnv(v *viper.Viper, env []string) error {
	vars := map[string]string{}
	for _, kv := range env {
		if name, val, _ := strings.Cut(kv, "="); strings.HasPrefix(name, "THV_") && val != "" {
			vars[name] = val // the last of repeated names, as getenv
		}
	}
	keys := v.AllKeys()
	slices.Sort(keys)
	if err := unknownEnv(vars, keys); err != nil {
		return err
	}
	for _, k := range keys {
		name := envName(k)
		val, ok := vars[name]
		old := v.Get(k)
		if !ok || isMapping(old) {
			continue
		}
		if _, list := old.([]any); list && !strings.HasPrefix(strings.TrimSpace(val), "[") {
			val = "[" + val + "]"
		}
		n, err := parseTree([]byte(val), strings.Count(k, ".")+2, name, true)
		if err == nil && n != nil {
			err = v.MergeConfigMap(nest(k, n))
		}
		if err != nil {
			return fmt.Errorf("environment %s: %v", name, err)
		}
	}
	return nil
}

// nest is {a: {b: n}} for the key a.b.
func nest(key string, n any) map[string]any {
	path := strings.Split(key, ".")
	for i := len(path) - 1; i > 0; i-- {
		n = map[string]any{path[i]: n}
	}
	return map[string]any{path[0]: n}
}

func unknownEnv(vars map[string]string, keys []string) error {
	known, mappings := map[string]bool{}, map[string]string{}
	for _, k := range keys {
		known[envName(k)] = true
		for i := strings.LastIndexByte(k, '.'); i > 0; i = strings.LastIndexByte(k[:i], '.') {
			mappings[envName(k[:i])] = k
		}
	}
	for _, name := range OtherVariables {
		known[name] = true
	}
	var unknown []string
	for _, name := range slices.Sorted(maps.Keys(vars)) {
		if !known[name] {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	name := unknown[0]
	if leaf, ok := mappings[name]; ok {
		return fmt.Errorf("environment %s names a mapping of the protocol, which a variable cannot replace: set one of its keys, e.g. %s", name, envName(leaf))
	}
	hint, best := "", 3 // the nearest known name within two edits
	for _, n := range slices.Sorted(maps.Keys(known)) {
		if d := editDistance(name, n); d < best {
			hint, best = fmt.Sprintf(" (did you mean %s?)", n), d
		}
	}
	if len(unknown) > 1 {
		hint += fmt.Sprintf(" (and %d more: %s)", len(unknown)-1, strings.Join(unknown[1:], ", "))
	}
	return fmt.Errorf("environment %s is not a key of the protocol%s: a THV_* variable overrides the key it names, e.g. THV_SETTINGS_D3_T=300 for settings.d3.T, and thv also reads %s; unset it",
		name, hint, strings.Join(OtherVariables[:4], ", "))
}

// editDistance is the Levenshtein distance of a and b, byte by byte.
func editDistance(a, b string) int {
	row := make([]int, len(b)+1) // the distances of a[:i] to each b[:j]
	for j := range row {
		row[j] = j
	}
	for i := range len(a) {
		diag := row[0]
		row[0] = i + 1
		for j := range len(b) {
			cost := 1
			if a[i] == b[j] {
				cost = 0
			}
			diag, row[j+1] = row[j+1], min(row[j+1]+1, row[j]+1, diag+cost)
		}
	}
	return row[len(b)]
}

// set applies --set key=value: key is a path of mapping keys and list
// elements (by index, or by a mapping's name: algorithms.THV-UCB.eta) that
// must exist; value is YAML. A mapping given for a mapping is merged into
// it, any other value replaces. Viper's overrides hold it: a Set per leaf
// of a mapping, or the whole list with the element changed (viper's keys
// stop at lists).
func set(v *viper.Viper, kv, name string, below []string) error {
	key, val, ok := strings.Cut(kv, "=")
	label := clipN(kv, 80) // a --set value may be long: never echo it whole
	if !ok || key == "" {
		return fmt.Errorf("--set %s: want key=value, e.g. --set settings.d3.T=300", label)
	}
	path := strings.Split(strings.ToLower(key), ".")
	i := 1 // path[:i] is the longest prefix that is a key of viper's
	for i < len(path) && isMapping(get(v, strings.Join(path[:i], "."))) {
		i++
	}
	top := strings.Join(path[:i], ".")
	old, list := get(v, top), any(nil)
	if i < len(path) {
		if _, ok := old.([]any); ok {
			list = deepCopy(old)
			old = element(list, path[i:])
		} else {
			old = nil // a value has no keys
		}
	}
	if old == nil {
		return fmt.Errorf("--set %s: %s is not a key of %s", label, clip(key), name)
	}
	n, err := parseTree([]byte(val), strings.Count(key, ".")+2, "--set "+cut(kv, 80), list == nil)
	switch {
	case err != nil:
		return fmt.Errorf("--set %s: %v", label, err)
	case n == nil:
		return fmt.Errorf("--set %s: no value after =", label)
	case list == nil:
		setOver(v, top, old, n, below)
		return nil
	}
	parent, last := element(list, path[i:len(path)-1]), path[len(path)-1]
	switch p := parent.(type) {
	case []any:
		j := index(p, last)
		p[j] = mergeValue(p[j], n)
	case map[string]any:
		p[last] = mergeValue(p[last], n)
	}
	v.Set(top, list)
	return nil
}

// element is the value at path below v (through lists and mappings), or nil.
func element(v any, path []string) any {
	for _, seg := range path {
		switch x := v.(type) {
		case []any:
			if j := index(x, seg); j >= 0 {
				v = x[j]
				continue
			}
		case map[string]any:
			if v = x[seg]; v != nil {
				continue
			}
		}
		return nil
	}
	return v
}

// index is the element of list that seg names: its index, or its name; -1 if none.
func index(list []any, seg string) int {
	if i, err := strconv.Atoi(seg); err == nil && i >= 0 && i < len(list) && strconv.Itoa(i) == seg {
		return i
	}
	return slices.IndexFunc(list, func(item any) bool {
		m, _ := item.(map[string]any)
		s, ok := m["name"].(*scalar)
		return ok && strings.ToLower(s.text) == seg
	})
}

// setOver sets key to n in viper's overrides: a mapping into a mapping
// leaf by leaf (so that the keys n does not give keep their values), a
// mapping for a value with the keys below it unset (viper would merge).
func setOver(v *viper.Viper, key string, old, n any, below []string) {
	switch nv := n.(type) {
	case emptyMapping:
		if isMapping(old) {
			return
		}
	case map[string]any:
		if isMapping(old) {
			for k, x := range nv {
				setOver(v, key+"."+k, get(v, key+"."+k), x, below)
			}
			return
		}
	}
	for _, k := range below {
		if rest, ok := strings.CutPrefix(k, key+"."); ok && isMapping(n) {
			m, _ := n.(map[string]any) // nil for an emptyMapping
			n = unsetAt(m, strings.Split(rest, "."))
		}
	}
	v.Set(key, n)
}

// unsetAt is m (copied) with unset at path, unless a value is on the way.
func unsetAt(m map[string]any, path []string) map[string]any {
	m = maps.Clone(m)
	if m == nil {
		m = map[string]any{}
	}
	switch x, ok := m[path[0]]; {
	case !ok:
		m[path[0]] = unset{}
	case len(path) > 1:
		if sub, ok := x.(map[string]any); ok {
			m[path[0]] = unsetAt(sub, path[1:])
		}
	}
	return m
}

// get is v.Get(key), or nil where a key is unset.
func get(v *viper.Viper, key string) any {
	if x := v.Get(key); x != (unset{}) {
		return x
	}
	return nil
}

// mergeValue is n merged into old: a mapping into a mapping, else n.
func mergeValue(old, n any) any {
	om, ok1 := old.(map[string]any)
	nm, ok2 := n.(map[string]any)
	if !ok1 || !ok2 {
		return n
	}
	for k, x := range nm {
		om[k] = mergeValue(om[k], x)
	}
	return om
}
