package codeid

import (
	"bytes"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

const testBinary = "testBinaryActionID/testBinaryContentID"

func memoConfig(edits map[string]string) Config {
	c := fakeConfig(edits)
	c.Binary = testBinary
	return c
}

var memoRoots = [][]string{{"ex/a"}, {"ex/b"}, {"ex"}, {"ex/d", "ex/c"}}

func digests(t *testing.T, m *Module) []string {
	t.Helper()
	var out []string
	for _, roots := range memoRoots {
		out = append(out, mustIdentity(t, m, roots...).Digest)
	}
	return out
}

// TestMemo: a Module seeded with another's memo gives the same identities
// and normalises nothing; its own memo is the same bytes.
func TestMemo(t *testing.T) {
	m := New(memoConfig(nil))
	if memo, computed := m.Memo(); computed || !bytes.Contains(memo, []byte(`"packages":[]`)) {
		t.Fatalf("memo of a Module that computed nothing: %s, %v", memo, computed)
	}
	want := digests(t, m)
	memo, computed := m.Memo()
	if !computed {
		t.Fatal("Memo says nothing was computed")
	}
	s, err := m.Seeded(memo)
	if err != nil {
		t.Fatal(err)
	}
	if got := digests(t, s); !slices.Equal(got, want) {
		t.Fatalf("identities from the memo %v, computed %v", got, want)
	}
	again, computed := s.Memo()
	if computed || s.computed != 0 {
		t.Fatalf("the seeded Module normalised %d packages", s.computed)
	}
	if !bytes.Equal(again, memo) {
		t.Fatalf("the seeded Module's memo differs:\n%s\n%s", again, memo)
	}
	// A seeded Module that needs fewer packages keeps the others in its memo.
	s2, _ := m.Seeded(memo)
	mustIdentity(t, s2, "ex/c")
	if m2, _ := s2.Memo(); !bytes.Equal(m2, memo) {
		t.Fatalf("the memo of a Module that used part of its seed lost the rest:\n%s", m2)
	}
	// No build ID: no memo.
	if memo, computed := New(fakeConfig(nil)).Memo(); memo != nil || computed {
		t.Fatal("a Module without Binary has a memo")
	}
	if _, err := New(fakeConfig(nil)).Seeded(memo); err == nil || !strings.Contains(err.Error(), "no build ID") {
		t.Fatalf("Seeded without Binary: %v", err)
	}
}

// TestMemoSourcesChecked: a memo entry is used only for the very files it
// was computed from; an edited package is normalised again, and its users'
// identities are those of a Module without memo.
func TestMemoSourcesChecked(t *testing.T) {
	m := New(memoConfig(nil))
	digests(t, m)
	memo, _ := m.Memo()
	for name, tc := range map[string]struct {
		edits    map[string]string
		computed int
	}{
		"token":      {map[string]string{"c/c.go": strings.Replace(fakeFiles["c/c.go"], `"x", 1`, `"x", 2`, 1)}, 1},
		"comment":    {map[string]string{"c/c.go": strings.Replace(fakeFiles["c/c.go"], "one. */", "one, really. */", 1)}, 1},
		"file added": {map[string]string{"c/c2.go": "package c\n"}, 1},
		"renamed":    {map[string]string{"c/c.go": "", "c/c_linux.go": fakeFiles["c/c.go"]}, 1},
		// ex/b names ex/c by its name: its entry holds no more, it is
		// read again (ex imports ex/c blank, naming it not).
		"package renamed": {map[string]string{"c/c.go": strings.Replace(fakeFiles["c/c.go"], "package c", "package cc", 1)}, 2},
	} {
		s, err := New(memoConfig(tc.edits)).Seeded(memo)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := digests(t, s), digests(t, New(memoConfig(tc.edits))); !slices.Equal(got, want) {
			t.Errorf("%s: identities with the stale memo %v, without %v", name, got, want)
		}
		if s.computed != tc.computed {
			t.Errorf("%s: %d packages normalised, want %d", name, s.computed, tc.computed)
		}
	}
}

// TestSeededRefuses: a memo that is malformed anywhere, or not this
// binary's, is refused as a whole, saying why.
func TestSeededRefuses(t *testing.T) {
	m := New(memoConfig(nil))
	digests(t, m)
	good, _ := m.Memo()
	replace := func(old, new string) []byte {
		if !bytes.Contains(good, []byte(old)) {
			t.Fatalf("the memo has no %q: %s", old, good)
		}
		return bytes.Replace(good, []byte(old), []byte(new), 1)
	}
	cHash := m.pkgs["ex/c"].decls[0].Hash
	for _, tc := range []struct {
		name string
		memo []byte
		want string
	}{
		{"empty", nil, "EOF"},
		{"not JSON", []byte("memo"), "invalid"},
		{"trailing data", append(slices.Clone(good), "{}"...), "after the memo"},
		{"unknown field", replace(`"memo":`, `"extra":1,"memo":`), "unknown field"},
		{"version", replace(memoVersion, "code identity memo 0"), "format"},
		{"binary", replace(testBinary, "otherBinaryActionID/x"), "written by binary"},
		{"module", replace(`"module":"ex"`, `"module":"ey"`), "of module"},
		{"toolchain", replace(`"toolchain":"go1.26.8"`, `"toolchain":"go1.26.9"`), "toolchain"},
		{"path outside", replace(`"path":"ex/c"`, `"path":"fmt"`), "not a package of module ex"},
		{"unsorted", replace(`"path":"ex/c"`, `"path":"ex/zz"`), "not sorted"},
		{"duplicate", replace(`"path":"ex/c"`, `"path":"ex/b"`), "not sorted, or listed twice"},
		{"short hash", replace(cHash, cHash[:60]), "not a hex SHA-256"},
		{"upper-case hash", replace(cHash, strings.ToUpper(cHash)), "not a hex SHA-256"},
		{"cgo import", replace(`"imports":["strings"]`, `"imports":["C"]`), `import "C"`},
		{"relative import", replace(`"imports":["strings"]`, `"imports":["./x"]`), "not a module import path"},
		{"unsorted imports", replace(`"imports":["strings"]`, `"imports":["strings","fmt"]`), "imports not sorted"},
		{"null packages", replace(`"packages":[`, `"packages":null,"x":[`), "unknown field"},
		{"package name", replace(`"name":"c"`, `"name":"c-"`), "not an identifier"},
		{"use of no import", replace(`"uses":["strings strings"]`, `"uses":["fmt fmt"]`), "not an import"},
		{"use without a name", replace(`"uses":["strings strings"]`, `"uses":["strings"]`), "not an import"},
		{"mention of no import", replace(` ex/c.H"`, ` ex/e.H"`), "not a name of an import"},
		{"declared name", replace(cHash+` - H - H -"`, cHash+` - H.x - H -"`), "not an identifier"},
		{"fields", replace(cHash, cHash+" x"), "8 fields, want 7"},
		{"flags", replace(cHash+` - H`, cHash+` b H`), `flags "b"`},
		{"extra unit", replace(`"name":"(blank imports)"`, `"name":"(anything)"`), "not one a package has"},
	} {
		s, err := m.Seeded(tc.memo)
		if err == nil || !strings.Contains(err.Error(), tc.want) || s != nil {
			t.Errorf("%s: Seeded = %v, %v; want an error mentioning %q", tc.name, s, err, tc.want)
		}
	}
}

// TestBuildID reads the build ID of this test binary as the go command
// does.
func TestBuildID(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	got, err := BuildID(exe)
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("go", "tool", "buildid", exe).Output()
	if err != nil {
		t.Fatalf("go tool buildid: %v", err)
	}
	if want := strings.TrimSpace(string(out)); got != want {
		t.Fatalf("BuildID = %q, go tool buildid says %q", got, want)
	}
	m, err := ForBinary(fstest.MapFS{}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if m.Binary() != got {
		t.Fatalf("ForBinary's Binary %q, want %q", m.Binary(), got)
	}

	dir := t.TempDir()
	for name, data := range map[string]string{
		"text":       "#!/bin/sh\necho hello\n",
		"raw":        "junk\xff Go build ID: \"abcdefghijklmnop/qrstuvwxyzABCDEF\"\n \xffmore",
		"hand-set":   "\xff Go build ID: \"v1.0\"\n \xff",
		"empty":      "\xff Go build ID: \"\"\n \xff",
		"one part":   "\xff Go build ID: \"abcdefghijklmnopqrst\"\n \xff",
		"unfinished": "\xff Go build ID: \"abcdefghijklmnop/qrstuvwxyzABCDEF",
		"short ELF":  "\x7fELF\x02\x01\x01",
	} {
		p := dir + "/" + name
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		id, err := BuildID(p)
		if name == "raw" {
			if err != nil || id != "abcdefghijklmnop/qrstuvwxyzABCDEF" {
				t.Errorf("%s: BuildID = %q, %v", name, id, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s: BuildID = %q, want an error", name, id)
		}
	}
}
