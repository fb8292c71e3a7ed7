package protocol

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"reflect"
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
}

// LoadConfig reads params.yaml (embedded or a file) and validates it.
// Viper layers, from the bottom: the file (viper's defaults), the profile
// (its configuration), THV_* environment variables (merged into the
// configuration), --set (its overrides). Every error names the offending
// key.
//
// Decoding is strict (config_decode.go): a value of the wrong type, a
// fraction or a boolean where an integer is wanted, a negative seed, a
// number out of range or not finite, an unknown key is an error naming its
// key and value, never coerced. Keys are case-insensitive (viper).
func LoadConfig(opt LoadOptions) (*Config, error) {
	src, name := thv.DefaultParams, "embedded params.yaml"
	if opt.ParamsFile != "" {
		b, err := readParamsFile(opt.ParamsFile)
		if err != nil {
			return nil, err
		}
		src, name = b, opt.ParamsFile
	}
	return loadConfig(src, name, opt, environ(os.Environ()))
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

// environ is an environment, "NAME=value" strings as os.Environ gives
// them.
type environ []string

// lookup is os.LookupEnv in e (the last of repeated names, as getenv).
func (e environ) lookup(name string) (string, bool) {
	for i := len(e) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(e[i], "="); ok && k == name {
			return v, true
		}
	}
	return "", false
}

// loadConfig is LoadConfig on the bytes of a params file, with the THV_*
// variables of env.
func loadConfig(src []byte, name string, opt LoadOptions, env environ) (*Config, error) {
	root, err := parseTree(src, 1, "", true)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	file, ok := root.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: not a mapping of keys to values (see the embedded params.yaml)", name)
	}
	profile := opt.Profile
	if profile == "" {
		profile = "paper"
	}
	v := viper.New()
	// The file: viper's defaults, the layer under all others (params.yaml
	// is the protocol's defaults). One SetDefault per key: merging maps
	// costs viper the square of their width.
	setDefaults(v, "", file)
	// The profile: viper's configuration, over the defaults.
	if lp := strings.ToLower(profile); lp != "paper" {
		profiles, _ := file["profiles"].(map[string]any)
		sub, known := profiles[lp]
		if !known || !isMapping(sub) {
			return nil, fmt.Errorf("%s: unknown profile %q (known: %s)", name, profile, strings.Join(profileNames(profiles), ", "))
		}
		if sub, ok := sub.(map[string]any); ok {
			for _, k := range slices.Sorted(maps.Keys(sub)) {
				if _, ok := fieldByTag(reflect.TypeFor[Config](), k); !ok {
					return nil, fmt.Errorf("%s (profile %s): %w", name, profile, unknownKey("", k, reflect.TypeFor[Config]()))
				}
			}
			over, err := profileOver(file, deepCopy(sub).(map[string]any), "")
			if err != nil {
				return nil, fmt.Errorf("%s: profile %q: %w", name, profile, err)
			}
			if err := v.MergeConfigMap(over); err != nil {
				return nil, fmt.Errorf("%s: profile %q: %w", name, profile, err)
			}
		}
	}
	// THV_* variables, merged over the file and the profile.
	if err := applyEnv(v, env); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	// --set: viper's overrides, on top of everything.
	var below []string // the keys of the layers under the overrides
	if len(opt.Set) > 0 {
		below = v.AllKeys()
	}
	for _, kv := range opt.Set {
		if err := applySet(v, kv, name, below); err != nil {
			return nil, err
		}
	}
	c, err := decodeConfig(v)
	if err != nil {
		return nil, fmt.Errorf("%s (profile %s): %w", name, profile, err)
	}
	c.Profile = profile
	if err := c.normalize(); err != nil {
		return nil, fmt.Errorf("%s (profile %s): %w", name, profile, err)
	}
	return c, nil
}

func profileNames(profiles map[string]any) []string {
	names := []string{"paper"}
	names = append(names, slices.Sorted(maps.Keys(profiles))...)
	if len(names) > 10 {
		names = append(names[:10], "…")
	}
	return names
}

// setDefaults sets every key of m (under prefix) as a default of v.
func setDefaults(v *viper.Viper, prefix string, m map[string]any) {
	for k, x := range m {
		if sub, ok := x.(map[string]any); ok {
			setDefaults(v, prefix+k+".", sub)
			continue
		}
		v.SetDefault(prefix+k, x)
	}
}

// profileOver checks a profile against the mapping it is merged over and
// returns what viper is to merge: a profile may not replace a mapping of
// the protocol by another kind of value (viper would ignore it silently),
// and an empty mapping given for a mapping adds nothing.
func profileOver(base, over map[string]any, path string) (map[string]any, error) {
	for _, k := range slices.Sorted(maps.Keys(over)) {
		b, o := base[k], over[k]
		if !isMapping(b) {
			continue // absent, or a value: the profile's replaces it
		}
		switch o := o.(type) {
		case emptyMapping:
			delete(over, k)
		case map[string]any:
			if b, ok := b.(map[string]any); ok {
				if _, err := profileOver(b, o, join(path, k)); err != nil {
					return nil, err
				}
			}
		default:
			return nil, fmt.Errorf("%s: want a mapping, as in the protocol; got %s", join(path, k), kindOf(o))
		}
	}
	return over, nil
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// applyEnv applies THV_* environment variables as viper's AutomaticEnv
// names them: every leaf key of the protocol (a key whose value is not a
// mapping) can be overridden by THV_<KEY> with dots and dashes as
// underscores and + as PLUS, e.g. THV_SETTINGS_D3_T=300. The value is YAML,
// read under the same limits as the file, and replaces the key's value;
// for a list, a bare comma-separated list (THV_SEEDS=0,1,2) is read as
// [0,1,2]. Empty variables, and those that hold no YAML value, are
// ignored.
//
// The variables are merged into viper's configuration, below --set, rather
// than bound with viper.BindEnv: viper hands a bound variable over as a
// string, after the layering, where neither the limits nor the variable's
// name for an error can be had, and AutomaticEnv would let THV_SETTINGS
// hide every key under settings.
func applyEnv(v *viper.Viper, env environ) error {
	keys := v.AllKeys()
	slices.Sort(keys)
	if err := unknownEnv(keys, env); err != nil {
		return err
	}
	for _, k := range keys {
		name := envName(k)
		val, ok := env.lookup(name)
		if !ok || val == "" {
			continue
		}
		old := v.Get(k)
		if isMapping(old) {
			continue // not a leaf once the profile is merged
		}
		if _, list := old.([]any); list && !strings.HasPrefix(strings.TrimSpace(val), "[") {
			val = "[" + val + "]"
		}
		n, err := parseTree([]byte(val), strings.Count(k, ".")+2, name, true)
		if err != nil {
			return fmt.Errorf("environment %s: %v", name, err)
		}
		if n == nil {
			continue
		}
		if err := v.MergeConfigMap(nest(k, n)); err != nil {
			return fmt.Errorf("environment %s: %v", name, err)
		}
	}
	return nil
}

// OtherVariables are the THV_* variables that are not protocol keys: those
// thv reads (the store, the remote cache and its keys), and those its own
// scripts and tests set around it (the paper's source, the signing key of
// the CI template, the cross-architecture check), which a thv they start
// inherits.
var OtherVariables = []string{"THV_STORE", "THV_REMOTE", "THV_TRUSTED_KEYS", "THV_REMOTE_ANONYMOUS",
	"THV_PAPER", "THV_SIGNING_KEY", "THV_SIGN_KEY_FILE", "THV_PUBLIC_CACHE",
	"THV_CROSSARCH", "THV_CROSSARCH_PARAMS", "THV_CROSSARCH_PROFILE"}

// unknownEnv refuses a set THV_* variable that names no key of the
// protocol (keys: its leaf keys and mappings) and is none of
// OtherVariables, as --set refuses an unknown key: a typo
// (THV_SETTINGS_D3_TT) would otherwise change nothing, silently. An
// empty variable is ignored, as for a key.
func unknownEnv(keys []string, env environ) error {
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
	for _, kv := range env {
		name, val, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "THV_") && val != "" && !known[name] && !slices.Contains(unknown, name) {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	slices.Sort(unknown)
	name := unknown[0]
	if leaf, ok := mappings[name]; ok {
		return fmt.Errorf("environment %s names a mapping of the protocol, which a variable cannot replace: set one of its keys, e.g. %s", name, envName(leaf))
	}
	hint := ""
	if near := nearest(name, slices.Sorted(maps.Keys(known))); near != "" {
		hint = fmt.Sprintf(" (did you mean %s?)", near)
	}
	more := ""
	if len(unknown) > 1 {
		more = fmt.Sprintf(" (and %d more: %s)", len(unknown)-1, strings.Join(unknown[1:], ", "))
	}
	return fmt.Errorf("environment %s is not a key of the protocol%s%s: a THV_* variable overrides the key it names, e.g. THV_SETTINGS_D3_T=300 for settings.d3.T, and thv also reads %s; unset it",
		name, hint, more, strings.Join(OtherVariables[:4], ", "))
}

// nearest is the name of names within two edits of name, or "".
func nearest(name string, names []string) string {
	best, dist := "", 3
	for _, n := range names {
		if d := editDistance(name, n); d < dist {
			best, dist = n, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance of a and b, byte by byte.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

var envReplacer = strings.NewReplacer(".", "_", "-", "_", "+", "PLUS")

// envName is the variable of key k, as viper.AutomaticEnv with prefix THV
// and envReplacer names it.
func envName(k string) string { return envReplacer.Replace(strings.ToUpper("THV_" + k)) }

// nest returns {a: {b: v}} for the key a.b.
func nest(key string, v any) map[string]any {
	path := strings.Split(key, ".")
	for i := len(path) - 1; i > 0; i-- {
		v = map[string]any{path[i]: v}
	}
	return map[string]any{path[0]: v}
}

// applySet applies one --set key=value: the key is a path of mapping keys
// (case-insensitive) and list indices, which must exist; the value is YAML.
// A mapping given for a mapping is merged into it (as a profile is), any
// other value replaces the old one. A list element is named by its index
// or, for a mapping with a name, by that name (algorithms.THV-UCB.eta).
//
// Viper's overrides hold the values: one Set per leaf of a mapping (so
// that it merges), or, inside a list, the whole list with the element
// changed (viper's keys stop at lists).
func applySet(v *viper.Viper, kv, name string, below []string) error {
	key, val, ok := strings.Cut(kv, "=")
	label := clipN(kv, 80) // a --set value may be long: never echo it whole
	if !ok || key == "" {
		return fmt.Errorf("--set %s: want key=value, e.g. --set settings.d3.T=300", label)
	}
	path := strings.Split(strings.ToLower(key), ".")
	listAt, list, old := lookup(v, path)
	if old == nil {
		return fmt.Errorf("--set %s: %s is not a key of %s", label, clip(key), name)
	}
	n, err := parseTree([]byte(val), strings.Count(key, ".")+2, "--set "+cut(kv, 80), listAt < 0)
	if err != nil {
		return fmt.Errorf("--set %s: %v", label, err)
	}
	if n == nil {
		return fmt.Errorf("--set %s: no value after =", label)
	}
	if listAt < 0 {
		setOver(v, strings.Join(path, "."), old, n, below)
		return nil
	}
	// Inside the copy of the list: the element's parent, then the element.
	parent := list
	for _, seg := range path[listAt : len(path)-1] {
		parent = child(parent, seg)
	}
	last := path[len(path)-1]
	switch p := parent.(type) {
	case []any:
		j := index(p, last)
		p[j] = mergeValue(p[j], n)
	case map[string]any:
		p[last] = mergeValue(p[last], n)
	}
	v.Set(strings.Join(path[:listAt], "."), list)
	return nil
}

// lookup follows a path of keys and list indices through viper's layers:
// the value found (nil if there is none) and, if the path goes through a
// list, the index in path of its first element (listAt, else -1) and a
// copy of that list.
func lookup(v *viper.Viper, path []string) (listAt int, list, old any) {
	for i := 1; i <= len(path); i++ {
		x := get(v, strings.Join(path[:i], "."))
		if i == len(path) {
			return -1, nil, x
		}
		switch x.(type) {
		case map[string]any:
			continue
		case []any:
			list = deepCopy(x)
			cur := list
			for _, seg := range path[i:] {
				if cur = child(cur, seg); cur == nil {
					return i, list, nil
				}
			}
			return i, list, cur
		}
		return -1, nil, nil // none, or a value with no keys
	}
	return -1, nil, nil
}

// child is the element of a list or the value of a mapping that seg
// names, or nil.
func child(v any, seg string) any {
	switch v := v.(type) {
	case []any:
		if j := index(v, seg); j >= 0 {
			return v[j]
		}
	case map[string]any:
		return v[seg]
	}
	return nil
}

// index is the element of list that seg names: an index, or the name of
// a mapping with a name (ignoring case); -1 if none.
func index(list []any, seg string) int {
	if i, err := strconv.Atoi(seg); err == nil && i >= 0 && i < len(list) && strconv.Itoa(i) == seg {
		return i
	}
	return slices.IndexFunc(list, func(item any) bool {
		m, ok := item.(map[string]any)
		if !ok {
			return false
		}
		s, ok := m["name"].(*scalar)
		return ok && strings.ToLower(s.text) == seg
	})
}

// setOver sets key to n in viper's overrides, merging a mapping into a
// mapping: one Set per leaf, so that the keys n does not give keep their
// values from below. A mapping given for a value replaces it, so the keys
// of the layers below (below) that it does not give are unset.
func setOver(v *viper.Viper, key string, old, n any, below []string) {
	switch nv := n.(type) {
	case emptyMapping:
		if isMapping(old) {
			return // merges nothing
		}
	case map[string]any:
		if isMapping(old) {
			for k, x := range nv {
				setOver(v, key+"."+k, get(v, key+"."+k), x, below)
			}
			return
		}
	}
	v.Set(key, unsetBelow(key, n, below))
}

// unsetBelow is mapping n given for key, with unset for every key of
// below under key that n does not give.
func unsetBelow(key string, n any, below []string) any {
	if !isMapping(n) {
		return n
	}
	var out map[string]any
	for _, k := range below {
		rest, ok := strings.CutPrefix(k, key+".")
		if !ok {
			continue
		}
		if out == nil {
			out, _ = deepCopy(n).(map[string]any)
			if out == nil {
				out = map[string]any{} // n is an emptyMapping
			}
		}
		m := out
		for _, seg := range strings.Split(rest, ".") {
			x, ok := m[seg]
			if !ok {
				m[seg] = unset{}
				break
			}
			if m, ok = x.(map[string]any); !ok {
				break // a value of n's hides the rest
			}
		}
	}
	if out == nil {
		return n
	}
	return out
}

// get is v.Get(key), or nil where a key is unset.
func get(v *viper.Viper, key string) any {
	x := v.Get(key)
	if _, ok := x.(unset); ok {
		return nil
	}
	return x
}

// mergeValue is n merged into old, inside a list: a mapping into a mapping
// recursively, any other value replaces.
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
