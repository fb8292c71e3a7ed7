// Package mountinfo decodes the paths of /proc/self/mountinfo (proc(5)),
// for the two readers of that file: the temp directories' unmounting
// (pipeline/tempdir) and a worker's check of its confinement (thv
// exec-task --self-check).
package mountinfo

import (
	"strconv"
	"strings"
)

// Unescape decodes mountinfo's octal escapes (\040 for a space, \011,
// \012, \134 for a backslash); a backslash without three octal digits of
// a byte after it stays as it is.
func Unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
