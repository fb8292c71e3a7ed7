package tables

import (
	"strings"
)

// texName prints an algorithm name as the paper does (a trailing + as a superscript).
func texName(a AlgoInfo, ours bool) string {
	name := a.Name
	if strings.HasSuffix(name, "+") {
		name = strings.TrimSuffix(name, "+") + "\\textsuperscript{+}"
	}
	if ours {
		name += " (ours)"
	}
	if a.Cite != "" {
		name += "~\\citep{" + a.Cite + "}"
	}
	return name
}

// mathPlus prints an algorithm name with a trailing + as a math-mode
// superscript (for the compact η* and tests tables).
func mathPlus(name string) string {
	if strings.HasSuffix(name, "+") {
		return strings.TrimSuffix(name, "+") + "$^+$"
	}
	return name
}

// fidelityMark is the Fid. column's mark of a fidelity.
func fidelityMark(f string) string {
	switch f {
	case "faithful":
		return "$\\bullet$"
	case "extension":
		return "$\\circ$"
	}
	return "---"
}

// titleCase capitalises the first letter of an ASCII name.
func titleCase(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// geometryAbbrev are the η* table's column heads.
var geometryAbbrev = map[string]string{"clusters": "Clust.", "concave": "Conc.", "convex": "Conv.", "linear": "Lin."}
