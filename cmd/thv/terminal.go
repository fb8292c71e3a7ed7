package main

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// Strings from outside thv's own code — a bundle's protocol, lock and
// page, a store's index, a remote's entries, a file's name — are
// untrusted: a control character in one could rewrite what a terminal
// shows (a carriage return and an escape sequence can make a rejected
// bundle read "bundle verified"). thv prints such a string through
// terminalText, which escapes what is not plain printable text as Go's %q
// does, and prints every error message through terminalLines.

// terminalText is s with every rune that is not printable (control
// characters, line breaks included; format characters such as the
// bidirectional overrides; invalid UTF-8) escaped as strconv.Quote
// escapes it, without the quotes: "a\x1b[2Kb".
func terminalText(s string) string {
	if printable(s, false) {
		return s
	}
	return escapeRunes(s, false)
}

// terminalLines is terminalText keeping line breaks and tabs: for a
// message of several lines.
func terminalLines(s string) string {
	if printable(s, true) {
		return s
	}
	return escapeRunes(s, true)
}

func plainRune(r rune, lines bool) bool {
	if lines && (r == '\n' || r == '\t') {
		return true
	}
	return r != unicode.ReplacementChar && unicode.IsPrint(r) || r == ' '
}

func printable(s string, lines bool) bool {
	for _, r := range s {
		if !plainRune(r, lines) {
			return false
		}
	}
	return true
}

func escapeRunes(s string, lines bool) string {
	var b strings.Builder
	for i, r := range s {
		if r == unicode.ReplacementChar && !strings.HasPrefix(s[i:], string(unicode.ReplacementChar)) {
			b.WriteString(fmt.Sprintf(`\x%02x`, s[i])) // a byte that is no UTF-8
			continue
		}
		if plainRune(r, lines) {
			b.WriteRune(r)
			continue
		}
		q := strconv.QuoteRune(r)
		b.WriteString(q[1 : len(q)-1])
	}
	return b.String()
}
