package compare

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Reference is a file of published results: values per (setting,
// geometry, algorithm, metric) with their stated uncertainty, the
// tolerances to judge ours against them, and claims (docs/compare.md).
type Reference struct {
	Source    string    `yaml:"source" json:"source"`
	Tolerance Tolerance `yaml:"tolerance" json:"tolerance"`
	Claims    []Claim   `yaml:"claims" json:"claims"`
	Rows      []RefRow  `yaml:"rows" json:"rows"`

	oneInstance bool // judged for a one-instance protocol (OneInstance)
}

// OneInstance is the reference as a protocol with one instance per
// (setting, geometry) is judged by it: tolerance (a), since the seeds of
// one instance are no sample of instances for (b) to rank among.
func (r Reference) OneInstance() Reference {
	r.Tolerance.Applies = "ci"
	r.oneInstance = true
	return r
}

// Tolerance says when our value agrees with a published one.
type Tolerance struct {
	// Relative: (a) agree within this fraction of the published value
	// (or within the union of both 95% CIs).
	Relative float64 `yaml:"relative" json:"relative"`
	// Percentile: (b) agree if the published value lies in this central
	// band (percentiles, 0–100) of our per-instance outcomes.
	Percentile [2]float64 `yaml:"percentile" json:"percentile"`
	// Applies names the kind a verdict uses: "ci" (a) or "percentile" (b).
	Applies string `yaml:"applies" json:"applies"`
}

// RefRow is one published row of a table for one geometry.
type RefRow struct {
	Setting     string `yaml:"setting" json:"setting"` // e.g. "d2"
	Geometry    string `yaml:"geometry" json:"geometry"`
	Algorithm   string `yaml:"algorithm" json:"algorithm"`
	Line        int    `yaml:"line" json:"line,omitempty"` // where in the paper's source it comes from
	HVLast100   *Value `yaml:"hv_last100" json:"hv_last100,omitempty"`
	FinalRegret *Value `yaml:"final_regret" json:"final_regret,omitempty"`

	at int // its line in the reference file
}

// Value is a published number with its 95% CI half-width.
type Value struct {
	Value *float64 `yaml:"value" json:"value"`
	CI    float64  `yaml:"ci" json:"ci"`
	// CIBound: the paper printed "< CI", an upper bound.
	CIBound bool `yaml:"ci_bound" json:"ci_bound,omitempty"`
}

// Claim is a statement of the paper checked against our results.
type Claim struct {
	ID        string  `yaml:"id" json:"id"`
	Text      string  `yaml:"text" json:"text"`
	Kind      string  `yaml:"kind" json:"kind"` // best | margin_grows | eta_star
	Algorithm string  `yaml:"algorithm" json:"algorithm"`
	Metric    string  `yaml:"metric" json:"metric,omitempty"`
	Geometry  string  `yaml:"geometry" json:"geometry,omitempty"`
	Value     float64 `yaml:"value" json:"value,omitempty"`

	at int
}

// Metric names of a reference and what they mean.
const (
	MetricHV     = "hv_last100"   // mean HV over the last 100 rounds: higher is better
	MetricRegret = "final_regret" // cumulative α-regret (positive part): lower is better
)

// Vocabulary is every name a reference may use, given by the caller (the
// protocol: the algorithms that exist and the geometries of the
// instances), so that this stage depends on no science package. The claims
// are judged over the geometries in this order.
type Vocabulary struct {
	Algorithms []string `json:"algorithms"`
	Geometries []string `json:"geometries"`
}

// MaxReferenceBytes bounds a reference file: it is a table of a paper.
const MaxReferenceBytes = 4 << 20

var settingName = regexp.MustCompile(`^d[1-9][0-9]?$`)

// ParseReference reads a reference file strictly: unknown fields, wrong
// types, missing values, algorithms or geometries that v does not name,
// unknown metrics or claim kinds, and duplicate rows are errors naming
// the line.
func ParseReference(b []byte, v Vocabulary) (*Reference, error) {
	if len(b) > MaxReferenceBytes {
		return nil, fmt.Errorf("reference: larger than %d bytes", MaxReferenceBytes)
	}
	var ref Reference
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&ref); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("reference: empty file")
		}
		return nil, fmt.Errorf("reference: %v", strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if err := dec.Decode(new(any)); !errors.Is(err, io.EOF) {
		return nil, errors.New("reference: more than one YAML document")
	}
	return &ref, ref.validate(v)
}

// UnmarshalYAML decodes a row strictly and records its line.
func (c *RefRow) UnmarshalYAML(n *yaml.Node) error {
	type plain RefRow
	c.at = n.Line
	return strictDecode(n, (*plain)(c))
}

// UnmarshalYAML decodes a claim strictly and records its line.
func (c *Claim) UnmarshalYAML(n *yaml.Node) error {
	type plain Claim
	c.at = n.Line
	return strictDecode(n, (*plain)(c))
}

// UnmarshalYAML decodes a value strictly.
func (v *Value) UnmarshalYAML(n *yaml.Node) error {
	type plain Value
	return strictDecode(n, (*plain)(v))
}

// strictDecode decodes a mapping node into the struct v points to,
// refusing keys that no field's yaml tag names: a custom unmarshaler's
// Node.Decode does not inherit the decoder's KnownFields.
func strictDecode(n *yaml.Node, v any) error {
	if n.Kind == yaml.MappingNode {
		var names []string
		for f := range reflect.TypeOf(v).Elem().Fields() {
			if name, _, _ := strings.Cut(f.Tag.Get("yaml"), ","); name != "" && name != "-" {
				names = append(names, name)
			}
		}
		for i := 0; i < len(n.Content); i += 2 {
			if key := n.Content[i]; !slices.Contains(names, key.Value) {
				return fmt.Errorf("line %d: unknown field %s (known: %s)", key.Line, key.Value, strings.Join(names, ", "))
			}
		}
	}
	return n.Decode(v)
}

// validate checks the reference's values and that it names only what v
// names; an error names the reference's line (a reference that came in a
// task's parameters has none).
func (r *Reference) validate(v Vocabulary) error {
	t := r.Tolerance
	if !(t.Relative >= 0 && t.Relative < 1) {
		return fmt.Errorf("reference: tolerance.relative %v: want a fraction in [0, 1)", t.Relative)
	}
	if !(0 <= t.Percentile[0] && t.Percentile[0] < t.Percentile[1] && t.Percentile[1] <= 100) {
		return fmt.Errorf("reference: tolerance.percentile %v: want [low, high] with 0 ≤ low < high ≤ 100", t.Percentile)
	}
	if t.Applies != "ci" && t.Applies != "percentile" {
		return fmt.Errorf("reference: tolerance.applies %q: want ci (within the union of the CIs or the relative tolerance) or percentile (within the band of our per-instance outcomes)", t.Applies)
	}
	if len(r.Rows) == 0 {
		return errors.New("reference: no rows")
	}
	seen := map[string]int{}
	for i := range r.Rows {
		c := &r.Rows[i]
		at := lineOf(c.at)
		if !settingName.MatchString(c.Setting) {
			return fmt.Errorf("%s: setting %q: want d<dimension>, e.g. d2", at, c.Setting)
		}
		if err := v.checkGeometry(c.Geometry); err != nil {
			return fmt.Errorf("%s: %v", at, err)
		}
		if err := v.checkAlgorithm(c.Algorithm); err != nil {
			return fmt.Errorf("%s: %v", at, err)
		}
		if c.HVLast100 == nil && c.FinalRegret == nil {
			return fmt.Errorf("%s: no value: give hv_last100 and/or final_regret", at)
		}
		for _, m := range []struct {
			name string
			v    *Value
		}{{MetricHV, c.HVLast100}, {MetricRegret, c.FinalRegret}} {
			v := m.v
			if v == nil {
				continue
			}
			if v.Value == nil {
				return fmt.Errorf("%s: %s has no value", at, m.name)
			}
			key := fmt.Sprintf("rows[%d].%s", i, m.name)
			if math.IsNaN(*v.Value) || math.IsInf(*v.Value, 0) {
				return fmt.Errorf("%s: %s.value = %v: want a finite number", at, key, *v.Value)
			}
			if !(v.CI >= 0) || math.IsInf(v.CI, 0) {
				return fmt.Errorf("%s: %s.ci = %v: want a finite number ≥ 0 (the 95%% CI's half-width)", at, key, v.CI)
			}
		}
		id := c.Setting + "/" + c.Geometry + "/" + c.Algorithm
		if prev, dup := seen[id]; dup {
			return fmt.Errorf("%s: row %s repeats line %d", at, id, prev)
		}
		seen[id] = c.at
	}
	ids := map[string]bool{}
	for i := range r.Claims {
		c := &r.Claims[i]
		at := lineOf(c.at)
		if c.ID == "" || ids[c.ID] {
			return fmt.Errorf("%s: claim id %q empty or repeated", at, c.ID)
		}
		ids[c.ID] = true
		if math.IsNaN(c.Value) || math.IsInf(c.Value, 0) {
			return fmt.Errorf("%s: claims[%d].value = %v (claim %s): want a finite number", at, i, c.Value, c.ID)
		}
		if err := v.checkAlgorithm(c.Algorithm); err != nil {
			return fmt.Errorf("%s: claim %s: %v", at, c.ID, err)
		}
		switch c.Kind {
		case "best", "margin_grows":
			if c.Metric != MetricHV && c.Metric != MetricRegret {
				return fmt.Errorf("%s: claim %s: metric %q: want %s or %s", at, c.ID, c.Metric, MetricHV, MetricRegret)
			}
			if c.Kind == "margin_grows" {
				if err := v.checkGeometry(c.Geometry); err != nil {
					return fmt.Errorf("%s: claim %s: %v", at, c.ID, err)
				}
			}
		case "eta_star":
			if !(c.Value > 0) {
				return fmt.Errorf("%s: claim %s: value %v: want the claimed η* (> 0)", at, c.ID, c.Value)
			}
		default:
			return fmt.Errorf("%s: claim %s: kind %q: want best, margin_grows or eta_star", at, c.ID, c.Kind)
		}
	}
	return nil
}

// lineOf is where in the reference file a row or claim is.
func lineOf(at int) string {
	if at == 0 {
		return "reference"
	}
	return fmt.Sprintf("reference line %d", at)
}

// checkAlgorithm accepts the algorithms v names.
func (v Vocabulary) checkAlgorithm(name string) error {
	if slices.Contains(v.Algorithms, name) {
		return nil
	}
	return fmt.Errorf("unknown algorithm %q (known: %s)", name, strings.Join(v.Algorithms, ", "))
}

// checkGeometry accepts the geometries v names.
func (v Vocabulary) checkGeometry(g string) error {
	if slices.Contains(v.Geometries, g) {
		return nil
	}
	return fmt.Errorf("geometry %q: want one of %s", g, strings.Join(v.Geometries, ", "))
}

// Settings lists the settings the reference names, in first-seen order.
func (r *Reference) Settings() []string {
	var out []string
	seen := map[string]bool{}
	for _, c := range r.Rows {
		if !seen[c.Setting] {
			seen[c.Setting] = true
			out = append(out, c.Setting)
		}
	}
	return out
}
