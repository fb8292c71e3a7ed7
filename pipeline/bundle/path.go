package bundle

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Limits on a path inside a bundle.
const (
	maxPathBytes    = 1024
	maxElementBytes = 255
)

// CheckPath reports whether p may name a file in a bundle: relative,
// slash-separated, clean (no empty, "." or ".." element), valid UTF-8,
// without backslashes, colons or control characters, and short. Every
// path a bundle is written with or read from passes it, so an extracted
// bundle lands below its directory on any system, whatever it holds.
func CheckPath(p string) error {
	switch {
	case p == "":
		return fmt.Errorf("an empty name")
	case len(p) > maxPathBytes:
		return fmt.Errorf("%.60q…: longer than %d bytes", p, maxPathBytes)
	case !utf8.ValidString(p):
		return fmt.Errorf("%q: not valid UTF-8", p)
	case strings.HasPrefix(p, "/"):
		return fmt.Errorf("%q: an absolute path", p)
	case strings.ContainsRune(p, '\\'):
		return fmt.Errorf("%q: contains a backslash", p)
	case strings.ContainsRune(p, ':'):
		return fmt.Errorf("%q: contains a colon (a drive letter or stream name elsewhere)", p)
	}
	if i := strings.IndexFunc(p, func(r rune) bool { return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) }); i >= 0 {
		return fmt.Errorf("%q: contains a control or invisible character", p)
	}
	for _, el := range strings.Split(p, "/") {
		switch {
		case el == "":
			return fmt.Errorf("%q: an empty path element (// or a trailing /)", p)
		case el == "..":
			return fmt.Errorf("%q: leaves the bundle directory (..)", p)
		case el == ".":
			return fmt.Errorf("%q: not a clean path (.)", p)
		case len(el) > maxElementBytes:
			return fmt.Errorf("%.60q…: a path element longer than %d bytes", p, maxElementBytes)
		}
	}
	return nil
}
