package mountinfo

import "testing"

func TestUnescape(t *testing.T) {
	for in, want := range map[string]string{
		`/tmp/a\040b`: "/tmp/a b", `/x\011y\012z\134`: "/x\ty\nz\\", `/plain`: "/plain",
		`/end\04`:  `/end\04`, // too short for an escape
		`/a\777b`:  `/a\777b`, // not a byte
		`/a\08x`:   `/a\08x`,  // not octal
		`\101\102`: "AB",
	} {
		if got := Unescape(in); got != want {
			t.Errorf("Unescape(%q) = %q, want %q", in, got, want)
		}
	}
}
