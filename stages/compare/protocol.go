package compare

import (
	"fmt"
	"strings"
)

// Protocol is the protocol a comparison judges, described against the
// paper's (the embedded params.yaml without a profile): the values that
// differ, the precision they change, and the published values it cannot
// reproduce. The zero value is the paper's own protocol. The caller
// computes it from the configuration (stages/protocol: Config.Describe);
// it travels in the compare task's parameters, so that every verdict
// names the protocol it judged.
type Protocol struct {
	// Differs lists the values that differ from the paper's, by key.
	Differs []Difference `json:"differs,omitempty"`
	// Seeds and PaperSeeds are how many seeds a cell's mean is over,
	// this protocol's and the paper's, when they differ (0: the same).
	// Fewer seeds judge with less precision: wider intervals agree more
	// easily.
	Seeds      int `json:"seeds,omitempty"`
	PaperSeeds int `json:"paper_seeds,omitempty"`
	// NotComparable lists the published values this protocol cannot
	// reproduce (another T, n, k, d, σ, reference point or HV window):
	// they are not judged.
	NotComparable []Incomparable `json:"not_comparable,omitempty"`
}

// Difference is a value of the protocol that differs from the paper's,
// in words: its key (params.yaml's name), this protocol's value and the
// paper's ("none" where one has no such key).
type Difference struct {
	Key   string `json:"key"`
	Ours  string `json:"ours"`
	Paper string `json:"paper"`
}

// String is "seeds 3 (paper 10)".
func (d Difference) String() string { return d.Key + " " + d.Ours + " (paper " + d.Paper + ")" }

// Incomparable names published values the protocol cannot reproduce:
// those of a setting (every setting if ""), for one metric (both if ""),
// and why ("T 300 vs 2000": ours, then the paper's).
type Incomparable struct {
	Setting string `json:"setting,omitempty"`
	Metric  string `json:"metric,omitempty"`
	Reason  string `json:"reason"`
}

// IsPaper reports whether the protocol is the paper's.
func (p Protocol) IsPaper() bool { return len(p.Differs) == 0 && len(p.NotComparable) == 0 }

// Name names the protocol: "the paper's protocol", or "a modified
// protocol: " and every value that differs.
func (p Protocol) Name() string { return p.ShortName(0) }

// ShortName is Name listing at most limit differences (0: all), then how
// many more.
func (p Protocol) ShortName(limit int) string {
	if p.IsPaper() {
		return "the paper's protocol"
	}
	if len(p.Differs) == 0 {
		return "a modified protocol"
	}
	var parts []string
	for i, d := range p.Differs {
		if limit > 0 && i == limit {
			parts = append(parts, fmt.Sprintf("and %d more", len(p.Differs)-limit))
			break
		}
		parts = append(parts, d.String())
	}
	return "a modified protocol: " + strings.Join(parts, ", ")
}

// Reason is why the published value of metric in setting is not
// comparable, or "" if it is judged.
func (p Protocol) Reason(setting, metric string) string {
	var reasons []string
	for _, x := range p.NotComparable {
		if (x.Setting == "" || x.Setting == setting) && (x.Metric == "" || x.Metric == metric) {
			reasons = append(reasons, x.Reason)
		}
	}
	return strings.Join(reasons, ", ")
}

// Precision says how the number of seeds changes the judgement, or "".
func (p Protocol) Precision() string {
	switch {
	case p.Seeds == 0 || p.Seeds == p.PaperSeeds:
		return ""
	case p.Seeds < p.PaperSeeds:
		return fmt.Sprintf("judged with %d seeds per cell instead of the paper's %d: wider intervals agree more easily", p.Seeds, p.PaperSeeds)
	}
	return fmt.Sprintf("judged with %d seeds per cell instead of the paper's %d: narrower intervals agree less easily", p.Seeds, p.PaperSeeds)
}

// Incomparability lists what makes published values not comparable, or
// "": "T 300 vs 2000 (d2), T 300 vs 3000 (d3)".
func (p Protocol) Incomparability() string {
	var parts []string
	for _, x := range p.NotComparable {
		var where []string
		if x.Setting != "" {
			where = append(where, x.Setting)
		}
		if x.Metric != "" {
			where = append(where, x.Metric)
		}
		s := x.Reason
		if len(where) > 0 {
			s += " (" + strings.Join(where, " ") + ")"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}

// claimReason is why a claim is not judged: it ranges over every setting
// of the results, so any published value the protocol cannot reproduce
// for its metric leaves it unjudged. "" if it is judged.
func (p Protocol) claimReason(metric string) string {
	var reasons []string
	for _, x := range p.NotComparable {
		if metric == "" || x.Metric == "" || x.Metric == metric {
			s := x.Reason
			if x.Setting != "" {
				s += " (" + x.Setting + ")"
			}
			reasons = append(reasons, s)
		}
	}
	if len(reasons) == 0 {
		return ""
	}
	return "it ranges over every setting, and this protocol's differ from the paper's: " + strings.Join(reasons, ", ")
}
