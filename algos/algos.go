// Package algos defines what a top-k multi-objective bandit policy is, the
// registry of algorithms (the paper's fourteen, in the order of its tables,
// and any other a package registers), the statistics and helpers they share
// (empirical means, Pareto layers, crowding distance), and the single-run
// simulation loop with its metrics.
//
// Each algorithm family lives in its own package under algos/ (thvucb,
// paretoucb, paretots, chebyshev, hvscalar, scalarucb, randomk) and
// registers its algorithms from init; import thv/algos/all to get them all.
// An algorithm is its package and one import line in algos/all: the
// registry accepts any well-formed new name. Keeping families apart lets
// the pipeline fingerprint each family's code separately, so editing one
// family reruns only its experiments.
package algos

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"
)

// Policy chooses a slate of k distinct arms each round and learns from the
// semi-bandit feedback of the arms it played.
type Policy interface {
	// Select fills slate (length k) with k distinct arm indices for round t
	// (1-based). It is called only after the shared forced initialisation.
	Select(t int, slate []int)
	// Observe receives the reward vectors of the arms of slate, in slate
	// order, for every round including the initialisation rounds.
	Observe(slate []int, rewards [][]float64)
}

// Fidelity is a paper's fidelity mark: how closely an algorithm follows the
// work it cites.
type Fidelity string

// The marks of the paper's tables.
const (
	Faithful  Fidelity = "faithful"  // •: faithful top-k adaptation
	Extension Fidelity = "extension" // ∘: modified core, tie-break or diversity mechanism
	Unmarked  Fidelity = "—"         // THV-UCB itself and RandomK
)

// Problem is what a policy is told about the problem it faces.
type Problem struct {
	N, D, K, T int
	Sigma      float64   // the noise level σ (Thompson sampling uses it as σ_obs)
	Ref        []float64 // the hypervolume reference point
}

// Config configures one policy instance.
type Config struct {
	Problem
	Eta    float64            // confidence parameter η; unused by algorithms without η
	Params map[string]float64 // fixed parameters, every Spec.Params entry present
	Rand   *rand.Rand         // the policy's own random stream
	// Source is the generator under Rand when NewPolicyOn was given it
	// (nil otherwise): a hot loop may draw from it directly, the same
	// numbers as through Rand, without a call through the Source
	// interface per draw (fmath.NormFloat64PCG).
	Source *rand.PCG
}

// Param documents a fixed (not grid-searched) parameter of an algorithm.
type Param struct {
	Name    string
	Default float64
	Doc     string
	Values  []float64 // if set, the only values allowed (a switch: 0, 1)
}

// Check reports whether x is an allowed value of the parameter.
func (p Param) Check(x float64) error {
	if len(p.Values) > 0 && !slices.Contains(p.Values, x) {
		return fmt.Errorf("parameter %s = %v: want one of %v", p.Name, x, p.Values)
	}
	return nil
}

// Spec describes a registered algorithm.
type Spec struct {
	Name     string // exactly as printed in the paper
	Family   string // package name under algos/
	Fidelity Fidelity
	UsesEta  bool // whether η is grid-searched for this algorithm
	Params   []Param
	Cite     string // the cited work, as the paper's bibliography key
	// Cost is the relative cost of one round against the other
	// algorithms (measured with go test -bench PaperRun ./algos/all/): a
	// pipeline schedules expensive runs first and weighs its ETA by it.
	Cost float64
	// Learns is false for a policy that ignores its feedback (RandomK):
	// the figures compare learning families only.
	Learns  bool
	Summary string
	New     func(cfg Config) Policy
	// Limit, when set, refuses params with which a run at d objectives
	// would be too large to build (ChebyshevUCB's lattice is built whole
	// for every run). Its error begins with the parameter ("divisions =
	// 1000: …"), names at (where d comes from: "settings.d3", "--d") and
	// ends with the fix; the caller prefixes where the params came from.
	Limit func(params map[string]float64, d int, at string) error
}

// PaperOrder lists the paper's fourteen algorithms in the order of its
// tables. It orders, it does not gate: All lists these first, in this
// order, then any other registered algorithm by name.
var PaperOrder = []string{
	"THV-UCB",
	"ParetoUCB", "ParetoUCB+", "ParetoUCB-Div", "ParetoUCB-Crowd",
	"ParetoTS", "ParetoTS+",
	"ChebyshevUCB", "ChebyshevUCB+",
	"HVScalarUCB", "HVScalarUCB+",
	"ScalarUCB", "ScalarUCB-RandW",
	"RandomK",
}

var registry = map[string]Spec{}

// maxNameLen is the longest algorithm name Register accepts.
const maxNameLen = 64

// checkName reports why name cannot name an algorithm. A name becomes a
// component of task IDs (run/<setting>/<geometry>/<algorithm>/eta=…/seed=…),
// of file names and of LaTeX tables, so it is an ASCII letter followed by
// letters, digits and the characters + - . (as the paper's ParetoUCB+ and
// ScalarUCB-RandW), at most maxNameLen bytes.
func checkName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("empty algorithm name")
	case len(name) > maxNameLen:
		return fmt.Errorf("algorithm name %.40q… is %d bytes long, more than %d", name, len(name), maxNameLen)
	case !isLetter(name[0]):
		return fmt.Errorf("algorithm name %q: want an ASCII letter first", name)
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; !isLetter(c) && !('0' <= c && c <= '9') && c != '+' && c != '-' && c != '.' {
			r, _ := utf8.DecodeRuneInString(name[i:])
			return fmt.Errorf("algorithm name %q contains %q: want only ASCII letters, digits and + - . (it becomes part of task IDs, file names and LaTeX)", name, r)
		}
	}
	return nil
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// Register adds an algorithm under any well-formed name (checkName) not yet
// taken, also up to case (Lookup suggests names up to case, and files
// differing only in case collide on some file systems). It panics
// otherwise, or without a constructor: a programming error, caught when the
// binary starts.
func Register(s Spec) {
	if err := checkName(s.Name); err != nil {
		panic("algos: Register: " + err.Error())
	}
	if _, dup := registry[s.Name]; dup {
		panic("algos: duplicate registration of " + s.Name)
	}
	for n := range registry {
		if strings.EqualFold(n, s.Name) {
			panic("algos: Register: " + s.Name + " differs from the registered " + n + " only in case")
		}
	}
	if s.New == nil {
		panic("algos: Register: " + s.Name + " has no constructor (Spec.New)")
	}
	registry[s.Name] = s
}

// All returns the registered algorithms: the paper's in PaperOrder, then
// the others sorted by name.
func All() []Spec {
	out := make([]Spec, 0, len(registry))
	for _, name := range PaperOrder {
		if s, ok := registry[name]; ok {
			out = append(out, s)
		}
	}
	paper := len(out)
	for name, s := range registry {
		if !slices.Contains(PaperOrder, name) {
			out = append(out, s)
		}
	}
	slices.SortFunc(out[paper:], func(a, b Spec) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Lookup returns the algorithm registered under name.
func Lookup(name string) (Spec, error) {
	if s, ok := registry[name]; ok {
		return s, nil
	}
	for n, s := range registry {
		if strings.EqualFold(n, name) {
			return Spec{}, fmt.Errorf("unknown algorithm %q (did you mean %q?)", name, s.Name)
		}
	}
	names := make([]string, 0, len(registry))
	for _, s := range All() {
		names = append(names, s.Name)
	}
	return Spec{}, fmt.Errorf("unknown algorithm %q (known: %s)", name, strings.Join(names, ", "))
}

// NewPolicy validates the configuration against the spec and builds the
// policy: η must be positive for algorithms that use it, unknown fixed
// parameters are rejected and missing ones take their defaults.
func (s Spec) NewPolicy(prob Problem, eta float64, params map[string]float64, rng *rand.Rand) (Policy, error) {
	return s.newPolicy(prob, eta, params, rng, nil)
}

// NewPolicyOn is NewPolicy with the random stream rand.New(src), whose
// generator the policy may also draw from directly (Config.Source): the
// same policy, drawing the same numbers, as NewPolicy's on that stream.
func (s Spec) NewPolicyOn(prob Problem, eta float64, params map[string]float64, src *rand.PCG) (Policy, error) {
	return s.newPolicy(prob, eta, params, rand.New(src), src)
}

func (s Spec) newPolicy(prob Problem, eta float64, params map[string]float64, rng *rand.Rand, src *rand.PCG) (Policy, error) {
	if s.UsesEta && !(eta > 0) {
		return nil, fmt.Errorf("%s: η = %v, must be > 0", s.Name, eta)
	}
	full := make(map[string]float64, len(s.Params))
	for _, p := range s.Params {
		full[p.Name] = p.Default
	}
	keys := make([]string, 0, len(params))
	for k := range params {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if _, ok := full[k]; !ok {
			return nil, fmt.Errorf("%s has no parameter %q (it has: %s)", s.Name, k, s.paramNames())
		}
		if err := s.Params[slices.IndexFunc(s.Params, func(p Param) bool { return p.Name == k })].Check(params[k]); err != nil {
			return nil, fmt.Errorf("%s: %w", s.Name, err)
		}
		full[k] = params[k]
	}
	return s.New(Config{Problem: prob, Eta: eta, Params: full, Rand: rng, Source: src}), nil
}

func (s Spec) paramNames() string {
	if len(s.Params) == 0 {
		return "none"
	}
	var names []string
	for _, p := range s.Params {
		names = append(names, p.Name)
	}
	return strings.Join(names, ", ")
}
