package compare

import (
	"fmt"
	"strings"

	"thv/stages/formats"
)

// Verdict is the one headline of a reproduction against the paper, the
// same sentence wherever a result is shown (the terminal, the page, a
// bundle's verdict, a job summary): the protocol judged, then the
// judgement across many fixed instances (thv readings) when there is one,
// with this run's own judgement as detail, or this run's alone.
type Verdict struct {
	Protocol Protocol
	// Run counts this run's comparison (its compare task).
	Run Counts
	// OneInstance: this run has one instance per (setting, geometry), so
	// its own verdicts use tolerance (a).
	OneInstance bool
	// Across is the judgement across the fixed instances of the readings
	// sweep's default reading, if thv readings computed it for this
	// protocol; nil otherwise.
	Across *formats.ReadingRow
	// Relative and Band are the reference's tolerances, for the words.
	Relative float64
	Band     [2]float64
}

// Sentence is the headline in plain words.
func (v Verdict) Sentence() string {
	var b strings.Builder
	name := v.Protocol.Name()
	b.WriteString(strings.ToUpper(name[:1]) + name[1:] + ".")
	n := v.Run
	if p := v.Protocol.Precision(); p != "" && n.Judged > 0 {
		b.WriteString(" " + upper(p) + ".")
	}
	if n.NotComparable > 0 {
		fmt.Fprintf(&b, " %d of the %d published values are not comparable with this protocol (%s), so they are not judged", n.NotComparable, n.Values, v.Protocol.Incomparability())
		if n.Judged == 0 && n.Missing == 0 {
			b.WriteString(", nor are the paper's claims; no agreement is counted.")
			return b.String()
		}
		b.WriteString(".")
	}
	if n.Judged == 0 {
		fmt.Fprintf(&b, " No published value is judged (%d missing from this protocol's results); %s; no agreement is counted.", n.Missing, v.claims())
		return b.String()
	}
	of := "published values"
	if n.NotComparable > 0 {
		of = "comparable published values"
	}
	if a := v.Across; a != nil && a.InstanceSeeds > 0 {
		fmt.Fprintf(&b, " Across %d instances, %d of %d %s agree with ours (the published value lies in the [%g, %g] percentile band of our %d instances' means).",
			a.InstanceSeeds, a.Agree, a.Values, of, v.Band[0], v.Band[1], a.InstanceSeeds)
		fmt.Fprintf(&b, " On this run's one instance, %d of %d agree (within the 95%% CIs or %g%%); %s.", n.Agree, n.Judged, 100*v.Relative, v.claims())
		return b.String()
	}
	how := "under the reference's tolerance"
	if v.OneInstance {
		how = fmt.Sprintf("within the 95%% CIs or %g%%, on one instance per setting and geometry", 100*v.Relative)
	}
	fmt.Fprintf(&b, " %d of %d %s agree with ours (%s)", n.Agree, n.Judged, of, how)
	if n.Missing > 0 {
		fmt.Fprintf(&b, ", %d missing", n.Missing)
	}
	fmt.Fprintf(&b, "; %s.", v.claims())
	return b.String()
}

// claims is "2 of 3 of the paper's claims hold", or why none is judged.
func (v Verdict) claims() string {
	n := v.Run
	switch {
	case n.Claims == 0:
		return "the reference states no claim"
	case n.ClaimsJudged == 0:
		return "the paper's claims are not judged"
	case n.ClaimsJudged < n.Claims:
		return fmt.Sprintf("%d of the %d claims judged hold (%d not judged)", n.Hold, n.ClaimsJudged, n.Claims-n.ClaimsJudged)
	}
	return fmt.Sprintf("%d of the paper's %d claims hold", n.Hold, n.Claims)
}

func upper(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
