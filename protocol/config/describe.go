package config

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"thv/stages/compare"
)

// Every verdict names the protocol it judged (the paper's, or which values
// differ from the paper's), and a published value this protocol cannot
// reproduce is not judged: Describe is the one description all of them
// use (compare's report, the page, thv repro, show, verify, verify-bundle,
// a bundle's crate).

// sweepKeys are the keys that configure the readings sweep, not the
// results of a pass: they enter no task, so they do not make the results
// another protocol's (thv readings names its own).
const sweepKeys = "readings."

// Describe describes the protocol against the paper's (the embedded
// params.yaml, no profile, no override): the values that differ, how many
// seeds a cell's mean is over when that differs, and the published values
// it cannot reproduce: those of a setting whose d, n, k, T or σ differs
// from the paper's setting of that name, all of them under another
// reference point, and HV_last100 under another HV window. The readings
// of the paper's open points (the instances, the initialisation's ties,
// how the regret is counted, ...) are judged: they are ways to read the
// paper's protocol, and the readings sweep compares them on that ground.
func (c *Config) Describe() (compare.Protocol, error) {
	paper, err := paperConfig()
	if err != nil {
		return compare.Protocol{}, fmt.Errorf("the paper's protocol: %w", err)
	}
	differs, err := c.DiffersFromPaper()
	if err != nil {
		return compare.Protocol{}, err
	}
	var p compare.Protocol
	p.Differs = groupDifferences(differs, paper.Values(), c.Values())
	for i, d := range p.Differs {
		p.Differs[i].Ours = inheritedEtaScale(c, d.Key, d.Ours)
		p.Differs[i].Paper = inheritedEtaScale(paper, d.Key, d.Paper)
	}
	if len(c.Seeds) != len(paper.Seeds) {
		p.Seeds, p.PaperSeeds = len(c.Seeds), len(paper.Seeds)
	}
	if c.Reference != paper.Reference {
		p.NotComparable = append(p.NotComparable, compare.Incomparable{Reason: fmt.Sprintf("reference point %s vs %s", num(c.Reference), num(paper.Reference))})
	}
	if c.Metrics.HVWindow != paper.Metrics.HVWindow {
		p.NotComparable = append(p.NotComparable, compare.Incomparable{Metric: compare.MetricHV,
			Reason: fmt.Sprintf("HV window %d vs %d", c.Metrics.HVWindow, paper.Metrics.HVWindow)})
	}
	for _, ps := range paper.SortedSettings() {
		s, ok := c.Settings[ps.Name]
		if !ok {
			continue // its published values are missing
		}
		var why []string
		for _, f := range []struct {
			name        string
			ours, paper string
		}{
			{"d", strconv.Itoa(s.D), strconv.Itoa(ps.D)}, {"n", strconv.Itoa(s.N), strconv.Itoa(ps.N)},
			{"k", strconv.Itoa(s.K), strconv.Itoa(ps.K)}, {"T", strconv.Itoa(s.T), strconv.Itoa(ps.T)},
			{"σ", num(s.Sigma), num(ps.Sigma)},
		} {
			if f.ours != f.paper {
				why = append(why, fmt.Sprintf("%s %s vs %s", f.name, f.ours, f.paper))
			}
		}
		if len(why) > 0 {
			p.NotComparable = append(p.NotComparable, compare.Incomparable{Setting: ps.Name, Reason: strings.Join(why, ", ")})
		}
	}
	return p, nil
}

// inheritedEtaScale words an algorithm's eta_scale that c leaves unset
// (value "" or "absent") as the protocol's, which it inherits, so that a
// difference never reads as an empty value.
func inheritedEtaScale(c *Config, key, value string) string {
	name, ok := strings.CutPrefix(key, "algorithms.")
	if name, ok = strings.CutSuffix(name, ".eta_scale"); !ok || value != "" && value != "absent" {
		return value
	}
	if _, found := c.Algorithm(name); !found {
		return value
	}
	return c.EtaScale + " (the protocol's eta_scale)"
}

func num(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// seedLists are the keys whose values are lists of seeds: a difference in
// their length is a difference in precision, said as a count.
var seedLists = []string{"seeds", "grid_seeds"}

// groupDifferences words the differing values: a list of seeds by its
// length when that differs ("seeds 3 (paper 10)"), a string without
// quotes, and a part of the protocol that one side lacks whole (a setting,
// an algorithm) as one difference, "settings.d4 absent (paper present)".
// The sweep's keys are left out.
func groupDifferences(differs []Override, paper, ours map[string]string) []compare.Difference {
	var out []compare.Difference
	grouped := map[string]bool{}
	for _, o := range differs {
		if strings.HasPrefix(o.Key, sweepKeys) {
			continue
		}
		if o.Ours == "" || o.Paper == "" {
			lacking, other := ours, paper // the side without the key, and the one with it
			if o.Paper == "" {
				lacking, other = paper, ours
			}
			if g := wholePart(o.Key, lacking, other); g != o.Key {
				if !grouped[g] {
					grouped[g] = true
					d := compare.Difference{Key: g, Ours: "absent", Paper: "present"}
					if o.Paper == "" {
						d.Ours, d.Paper = "present", "absent"
					}
					out = append(out, d)
				}
				continue
			}
		}
		d := compare.Difference{Key: o.Key, Ours: valueWords(o.Ours), Paper: valueWords(o.Paper)}
		if slices.Contains(seedLists, o.Key) {
			if n, m := listLen(o.Ours), listLen(o.Paper); n != m {
				d.Ours, d.Paper = strconv.Itoa(n), strconv.Itoa(m)
			}
		}
		out = append(out, d)
	}
	return out
}

// wholePart is the shortest prefix of key (two segments at least: a
// setting, an algorithm) under which other has keys and lacking none, or
// key itself.
func wholePart(key string, lacking, other map[string]string) string {
	segs := strings.Split(key, ".")
	for n := 2; n < len(segs); n++ {
		prefix := strings.Join(segs[:n], ".") + "."
		has := false
		for k := range lacking {
			if strings.HasPrefix(k, prefix) {
				has = true
				break
			}
		}
		if !has {
			return strings.TrimSuffix(prefix, ".")
		}
	}
	return key
}

// valueWords is a value as Values prints it, a string (or a list's
// strings) without quotes, nothing as "absent".
func valueWords(v string) string {
	if v == "" {
		return "absent"
	}
	if s, err := strconv.Unquote(v); err == nil {
		return s
	}
	if strings.HasPrefix(v, "[") {
		return strings.ReplaceAll(v, `"`, "")
	}
	return v
}

// listLen is the length of a list as Values prints it: "[a, b]" or
// "[a … b] (n values)".
func listLen(v string) int {
	if i := strings.Index(v, "] ("); i >= 0 {
		n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(v[i+3:], ""), " values)"))
		return n
	}
	v = strings.TrimSuffix(strings.TrimPrefix(v, "["), "]")
	if strings.TrimSpace(v) == "" {
		return 0
	}
	return strings.Count(v, ",") + 1
}
