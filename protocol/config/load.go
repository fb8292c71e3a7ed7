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

// Load reads params.yaml (embedded or a file), layers its profile, THV_*
// variables and --set overrides on it in that order, decodes the result
// strictly and validates it. Keys are case-insensitive.
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

// layered is the Config of a params file and its layers, before
// validation: the layers are merged on the file's tree (doc.go says why
// not by viper), then decoded in one UnmarshalExact.
func layered(src []byte, name string, opt LoadOptions) (*Config, error) {
	tree, err := parseTree(src, 1, "", true)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	root, ok := tree.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: not a mapping of keys to values (see the embedded params.yaml)", name)
	}
	profile := cmp.Or(opt.Profile, "paper")
	if err := mergeProfile(root, profile); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	env := opt.Environ
	if env == nil {
		env = os.Environ()
	}
	if err := mergeEnv(root, env); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	for _, kv := range opt.Set {
		if err := set(root, kv, name); err != nil {
			return nil, err
		}
	}
	c, err := decode(root)
	if err != nil {
		return nil, fmt.Errorf("%s (profile %s): %w", name, profile, err)
	}
	c.Profile = profile
	return c, nil
}

// mergeProfile merges profiles.<profile> into the file.
func mergeProfile(root map[string]any, profile string) error {
	if strings.EqualFold(profile, "paper") {
		return nil
	}
	profiles, _ := root["profiles"].(map[string]any)
	sub := profiles[strings.ToLower(profile)]
	if !isMapping(sub) {
		names := append([]string{"paper"}, slices.Sorted(maps.Keys(profiles))...)
		if len(names) > 10 {
			names = append(names[:10], "…")
		}
		return fmt.Errorf("unknown profile %q (known: %s)", profile, strings.Join(names, ", "))
	}
	if _, err := overlay(root, deepCopy(sub), true, ""); err != nil {
		return fmt.Errorf("profile %q: %w", profile, err)
	}
	return nil
}

// overlay is over given for base: a mapping is merged into a mapping key by
// key, {} for a mapping adds nothing, any other value replaces. A profile
// (strict) may not replace a mapping by a value: it changes the
// protocol's values, not its shape. path names base, for the error.
func overlay(base, over any, strict bool, path string) (any, error) {
	bm, baseMap := base.(map[string]any)
	om, overMap := over.(map[string]any)
	switch {
	case !isMapping(base):
		return over, nil
	case over == emptyMapping{}:
		return base, nil
	case !isMapping(over) && strict:
		return nil, fmt.Errorf("%s: want a mapping, as in the protocol; got %s", path, kindOf(over))
	case !baseMap || !overMap:
		return over, nil
	}
	for _, k := range slices.Sorted(maps.Keys(om)) { // the first error, always the same
		var err error
		if bm[k], err = overlay(bm[k], om[k], strict, strings.TrimPrefix(path+"."+k, ".")); err != nil {
			return nil, err
		}
	}
	return bm, nil
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

// mergeEnv merges THV_* variables into the tree: THV_<KEY> replaces a key
// that is no mapping (THV_SETTINGS_D3_T=300) with YAML read under the
// file's limits (a list may drop its brackets: THV_SEEDS=0,1,2); an empty
// one, or one without a YAML value, changes nothing. A variable naming no
// key (a typo, THV_SETTINGS_D3_TT) is refused, not ignored.
func mergeEnv(root map[string]any, env []string) error {
	vars := map[string]string{}
	for _, kv := range env {
		if name, val, _ := strings.Cut(kv, "="); strings.HasPrefix(name, "THV_") && val != "" {
			vars[name] = val // the last of repeated names, as getenv
		}
	}
	leaves := map[string]map[string]any{}
	collectLeaves(root, "", leaves)
	keys := slices.Sorted(maps.Keys(leaves))
	if err := unknownEnv(vars, keys); err != nil {
		return err
	}
	for _, k := range keys {
		name, m, last := envName(k), leaves[k], k[strings.LastIndexByte(k, '.')+1:]
		val, ok := vars[name]
		if !ok || isMapping(m[last]) {
			continue
		}
		if _, list := m[last].([]any); list && !strings.HasPrefix(strings.TrimSpace(val), "[") {
			val = "[" + val + "]"
		}
		n, err := parseTree([]byte(val), strings.Count(k, ".")+2, name, true)
		if err != nil {
			return fmt.Errorf("environment %s: %v", name, err)
		}
		if n != nil {
			m[last] = n
		}
	}
	return nil
}

// collectLeaves adds to out each key of m (a.b for m[a][b]) whose value is
// no mapping, or {}, with the mapping that holds it.
func collectLeaves(m map[string]any, prefix string, out map[string]map[string]any) {
	for k, x := range m {
		if sub, ok := x.(map[string]any); ok {
			collectLeaves(sub, prefix+k+".", out)
		} else {
			out[prefix+k] = m
		}
	}
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
	unknown := slices.DeleteFunc(slices.Sorted(maps.Keys(vars)), func(name string) bool { return known[name] })
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
// it, any other value replaces.
func set(root map[string]any, kv, name string) error {
	key, val, ok := strings.Cut(kv, "=")
	label := clipN(kv, 80) // a --set value may be long: never echo it whole
	if !ok || key == "" {
		return fmt.Errorf("--set %s: want key=value, e.g. --set settings.d3.T=300", label)
	}
	path := strings.Split(strings.ToLower(key), ".")
	var parent, old any = nil, root
	inList := false // below a list, {} is a value (an empty map), as in parseTree
	for _, seg := range path {
		_, list := old.([]any)
		inList = inList || list
		if parent, old = old, child(old, seg); old == nil {
			return fmt.Errorf("--set %s: %s is not a key of %s", label, clip(key), name)
		}
	}
	n, err := parseTree([]byte(val), len(path)+1, "--set "+cut(kv, 80), !inList)
	switch {
	case err != nil:
		return fmt.Errorf("--set %s: %v", label, err)
	case n == nil:
		return fmt.Errorf("--set %s: no value after =", label)
	}
	last := path[len(path)-1]
	switch p := parent.(type) {
	case map[string]any:
		p[last], _ = overlay(old, n, false, "")
	case []any:
		p[index(p, last)], _ = overlay(old, n, false, "")
	}
	return nil
}

// child is the value seg names below v: a mapping's key, or a list's
// element by index or by its mapping's name; nil if none.
func child(v any, seg string) any {
	switch v := v.(type) {
	case map[string]any:
		return v[seg]
	case []any:
		if j := index(v, seg); j >= 0 {
			return v[j]
		}
	}
	return nil
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
