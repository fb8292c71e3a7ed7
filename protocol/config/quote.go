package config

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// clip quotes what a user wrote for an error, cut to 40 bytes; clipN to
// max.
func clip(s string) string { return clipN(s, 40) }

func clipN(s string, max int) string {
	if c := cut(s, max); c != s {
		return strconv.Quote(strings.TrimSuffix(c, "…")) + "…"
	}
	return strconv.Quote(s)
}

// cut cuts s to at most max bytes at a rune boundary, marking a cut
// with …
func cut(s string, max int) string {
	if len(s) <= max {
		return s
	}
	for max > 0 && !utf8.RuneStart(s[max]) {
		max--
	}
	return s[:max] + "…"
}
