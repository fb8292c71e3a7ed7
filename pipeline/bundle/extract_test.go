package bundle

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// entry is one entry of a hand-made archive.
type entry struct {
	hdr  tar.Header
	data string
}

func reg(name, data string) entry {
	return entry{tar.Header{Typeflag: tar.TypeReg, Name: name, Size: int64(len(data)), Mode: 0o644}, data}
}

// archive builds a tar.gz of entries, led by a manifest listing the
// regular files among them when withManifest is set.
func archive(t *testing.T, withManifest bool, entries ...entry) []byte {
	t.Helper()
	if withManifest {
		// The manifest lists a harmless file and every regular entry
		// with a valid name (the first of any repeated name), so that
		// what is refused is the entry itself.
		m := Manifest{"ok": sha256.Sum256(nil)}
		seen := map[string]bool{}
		for _, e := range entries {
			key := strings.ToLower(e.hdr.Name)
			if e.hdr.Typeflag == tar.TypeReg && CheckPath(e.hdr.Name) == nil && !seen[key] {
				seen[key] = true
				m[e.hdr.Name] = sha256.Sum256([]byte(e.data))
			}
		}
		entries = append([]entry{reg(ManifestName, string(m.Encode())), reg("ok", "")}, entries...)
	}
	short := false
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, e := range entries {
		h := e.hdr
		if err := tw.WriteHeader(&h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			if _, err := tw.Write([]byte(e.data)); err != nil {
				t.Fatal(err)
			}
			// A header that declares more bytes than follow (an
			// oversized entry) ends the archive there.
			short = short || int64(len(e.data)) < h.Size
		}
	}
	if !short {
		if err := tw.Close(); err != nil {
			t.Fatal(err)
		}
	} else {
		tw.Flush()
	}
	gz.Close()
	return buf.Bytes()
}

// extractIn extracts data into base/parent/target and returns the error;
// it fails the test if anything is left in base but an empty parent.
func extractIn(t *testing.T, data []byte, lim Limits) error {
	t.Helper()
	base := t.TempDir()
	parent := filepath.Join(base, "parent")
	if err := os.Mkdir(parent, 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := Extract(bytes.NewReader(data), filepath.Join(parent, "target"), lim)
	if err != nil {
		var found []string
		filepath.Walk(base, func(p string, _ os.FileInfo, _ error) error {
			if p != base && p != parent {
				found = append(found, p)
			}
			return nil
		})
		if len(found) > 0 {
			t.Errorf("a refused archive left %v", found)
		}
	}
	return err
}

func TestExtractRefusesHostileEntries(t *testing.T) {
	dev := func(name string, typ byte) entry {
		return entry{hdr: tar.Header{Typeflag: typ, Name: name, Mode: 0o644}}
	}
	link := func(name, target string, typ byte) entry {
		return entry{hdr: tar.Header{Typeflag: typ, Name: name, Linkname: target, Mode: 0o777}}
	}
	huge := reg("big", "")
	huge.hdr.Size = 5 << 30 // declared; refused before any byte is read
	for _, tc := range []struct {
		name    string
		entries []entry
		want    string
	}{
		{"dotdot", []entry{reg("../x", "escape")}, `"../x" refused: "../x": leaves the bundle directory`},
		{"dotdot inside", []entry{reg("a/../../x", "escape")}, `leaves the bundle directory`},
		{"absolute", []entry{reg("/tmp/abs", "escape")}, `"/tmp/abs" refused: "/tmp/abs": an absolute path`},
		{"symlink", []entry{link("s", "/etc", tar.TypeSymlink), reg("s/passwd", "x")}, `"s" refused: a symbolic link (to "/etc")`},
		{"hard link", []entry{link("h", "/etc/passwd", tar.TypeLink)}, `"h" refused: a hard link (to "/etc/passwd")`},
		{"char device", []entry{dev("null", tar.TypeChar)}, `"null" refused: a device file`},
		{"block device", []entry{dev("sda", tar.TypeBlock)}, `"sda" refused: a device file`},
		{"fifo", []entry{dev("pipe", tar.TypeFifo)}, `"pipe" refused: a named pipe`},
		{"duplicate", []entry{reg("a", "1"), reg("a", "2")}, `"a" refused: a duplicate name`},
		{"duplicate by case", []entry{reg("Readme", "1"), reg("README", "2")}, `"README" refused: a duplicate name (also given as "Readme"`},
		{"file below a file", []entry{reg("f", "1"), reg("f/g", "2")}, `"f/g" refused: below "f", which is a file`},
		{"backslash", []entry{reg(`..\x`, "1")}, `contains a backslash`},
		{"empty element", []entry{reg("a//b", "1")}, `an empty path element`},
		{"oversized", []entry{huge}, `"big" refused: 5368709120 bytes, more than the limit`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// After a manifest, and as the archive's first entry: the
			// entry is refused for what it is, either way.
			for _, withManifest := range []bool{true, false} {
				if !withManifest && len(tc.entries) > 1 {
					continue
				}
				err := extractIn(t, archive(t, withManifest, tc.entries...), Limits{FileSize: 1 << 30})
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("manifest %v: got %v, want an error containing %s", withManifest, err, tc.want)
				}
			}
		})
	}
}

func TestExtractLimits(t *testing.T) {
	zeros := strings.Repeat("\x00", 4<<20)
	t.Run("decompression bomb", func(t *testing.T) {
		err := extractIn(t, archive(t, true, reg("zeros", zeros)), Limits{Total: 1 << 20})
		if err == nil || !strings.Contains(err.Error(), "larger than 1048576 bytes once decompressed") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("file size", func(t *testing.T) {
		err := extractIn(t, archive(t, true, reg("zeros", zeros)), Limits{FileSize: 1 << 20})
		if err == nil || !strings.Contains(err.Error(), `"zeros" refused: 4194304 bytes, more than the limit of 1048576`) {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("entries", func(t *testing.T) {
		err := extractIn(t, archive(t, true, reg("a", "1"), reg("b", "2"), reg("c", "3")), Limits{Entries: 3})
		if err == nil || !strings.Contains(err.Error(), "more than 3 entries") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("within the limits", func(t *testing.T) {
		if err := extractIn(t, archive(t, true, reg("zeros", zeros)), Limits{Total: 5 << 20, FileSize: 4 << 20}); err != nil {
			t.Fatal(err)
		}
	})
}

func TestExtractChecksTheManifest(t *testing.T) {
	good := archive(t, true, reg("a", "alpha"), reg("d/b", "beta"))
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"changed file", swapData(t, good, "d/b", "BETA"), "d/b has SHA-256 "},
		{"added file", appendEntry(t, good, reg("extra", "x")), "extra is not listed in SHA256SUMS (a file was added)"},
		{"missing file", archive(t, false, reg(ManifestName, string(Manifest{"a": sha256.Sum256([]byte("alpha")), "gone": {}}.Encode())), reg("a", "alpha")), "SHA256SUMS lists gone, which the bundle does not hold"},
		{"manifest not first", archive(t, false, reg("a", "alpha"), reg(ManifestName, "")), `its first file is "a", not SHA256SUMS`},
		{"bad manifest line", archive(t, false, reg(ManifestName, "zz  a\n"), reg("a", "alpha")), "SHA256SUMS line 1"},
		{"manifest names an escape", archive(t, false, reg(ManifestName, strings.Repeat("0", 64)+"  ../a\n")), "leaves the bundle directory"},
		{"not gzip", []byte("plain text"), "not a bundle (a gzip-compressed tar)"},
		{"trailing data", append(append([]byte(nil), good...), "junk"...), "data after the end"},
		{"empty archive", archive(t, false), "an empty archive"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := extractIn(t, tc.data, Limits{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
	t.Run("good", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "x")
		m, err := Extract(bytes.NewReader(good), dir, Limits{})
		if err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(filepath.Join(dir, "d", "b")); string(b) != "beta" || len(m) != 3 {
			t.Fatalf("extracted %q, manifest %v", b, m)
		}
		if _, err := Extract(bytes.NewReader(good), dir, Limits{}); err == nil || !strings.Contains(err.Error(), "already exists") {
			t.Fatalf("extracting over an existing directory: %v", err)
		}
		if b, _ := os.ReadFile(filepath.Join(dir, "a")); string(b) != "alpha" {
			t.Fatal("a refused extraction removed the existing directory")
		}
	})
}

// rewrite re-packs a tar.gz after f changes its entries.
func rewrite(t *testing.T, data []byte, f func([]entry) []entry) []byte {
	t.Helper()
	gz, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	var es []entry
	for {
		h, err := tr.Next()
		if err != nil {
			break
		}
		var b bytes.Buffer
		b.ReadFrom(tr)
		es = append(es, entry{*h, b.String()})
	}
	return archive(t, false, f(es)...)
}

func swapData(t *testing.T, data []byte, name, with string) []byte {
	return rewrite(t, data, func(es []entry) []entry {
		for i := range es {
			if es[i].hdr.Name == name {
				es[i].data, es[i].hdr.Size = with, int64(len(with))
			}
		}
		return es
	})
}

func appendEntry(t *testing.T, data []byte, e entry) []byte {
	return rewrite(t, data, func(es []entry) []entry { return append(es, e) })
}

func TestCheckPath(t *testing.T) {
	for _, ok := range []string{"a", "store/objects/ab/ab12", "results/tables/summary_d2.tex", "thv-tiny.lock", "é/ü"} {
		if err := CheckPath(ok); err != nil {
			t.Errorf("CheckPath(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"", ".", "..", "./a", "a/.", "a/..", "/a", "a/", "a//b", `a\b`, "c:x", "a\x00b", "a\nb", "a\u200bb", "\xff", strings.Repeat("a", 256), strings.Repeat("a/", 600)} {
		if err := CheckPath(bad); err == nil {
			t.Errorf("CheckPath(%q) accepted", bad)
		}
	}
}

func TestManifestRoundTrip(t *testing.T) {
	m := Manifest{"b": sha256.Sum256([]byte("b")), "a/c": sha256.Sum256([]byte("c"))}
	text := m.Encode()
	if !strings.HasPrefix(string(text), "") || strings.Index(string(text), "  a/c\n") > strings.Index(string(text), "  b\n") {
		t.Fatalf("not sorted:\n%s", text)
	}
	back, err := ParseManifest(text)
	if err != nil || len(back) != 2 || back["a/c"] != m["a/c"] {
		t.Fatalf("ParseManifest: %v %v", back, err)
	}
	for _, bad := range []string{"", "x", strings.Repeat("0", 64) + " a\n", strings.Repeat("A", 64) + "  a\n",
		strings.Repeat("0", 64) + "  a\n" + strings.Repeat("1", 64) + "  A\n", strings.Repeat("0", 64) + "  SHA256SUMS\n",
		strings.Repeat("0", 64) + "  a"} {
		if _, err := ParseManifest([]byte(bad)); err == nil {
			t.Errorf("ParseManifest(%q) accepted", bad)
		}
	}
}

func TestExtractErrorsAreTyped(t *testing.T) {
	err := extractIn(t, archive(t, false, reg("../x", "")), Limits{})
	var ee *EntryError
	if !errors.As(err, &ee) || ee.Name != "../x" {
		t.Fatalf("got %v, want an *EntryError naming ../x", err)
	}
	err = extractIn(t, appendEntry(t, archive(t, true, reg("a", "1")), reg("b", "2")), Limits{})
	if !errors.Is(err, ErrTampered) {
		t.Fatalf("got %v, want ErrTampered", err)
	}
	// What the bundle holds is never this machine's fault.
	for _, data := range [][]byte{
		archive(t, false, reg("../x", "")),
		appendEntry(t, archive(t, true, reg("a", "1")), reg("b", "2")),
		sparseBundle(t, sparsePAX01, "big"),
		bombArchive(t, 100<<20),
		[]byte("plain text"),
	} {
		if err := extractIn(t, data, Limits{}); err == nil || errors.Is(err, ErrLocal) {
			t.Errorf("got %v, want an error that is not ErrLocal", err)
		}
	}
}
