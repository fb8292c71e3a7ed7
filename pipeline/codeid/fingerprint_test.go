package codeid

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"maps"
	"runtime"
	"slices"
	"testing"
	"testing/fstest"

	"thv"
)

// TestFingerprint: the fingerprint is the digest of its documented
// inputs, computed here the plain way (each file read whole), over this
// module's sources and over a tree whose files are larger than the
// fingerprint's buffer; an edited file changes it.
func TestFingerprint(t *testing.T) {
	big := make([]byte, 100<<10+7)
	for i := range big {
		big[i] = byte(i * 7)
	}
	trees := map[string]fs.FS{
		"thv": thv.Sources,
		"big": fstest.MapFS{"a/a.go": {Data: []byte("package a\n")}, "a/big.bin": {Data: big}, "b/empty.go": {Data: nil}},
	}
	for name, fsys := range trees {
		c := Config{Path: "m", Sources: fsys, ThirdParty: thv.ThirdParty, PackageNames: thv.ThirdPartyNames, Toolchain: runtime.Version(), Binary: "bin/id"}
		got, err := New(c).Fingerprint()
		if err != nil {
			t.Fatal(err)
		}
		if want := plainFingerprint(t, c); got != want {
			t.Errorf("%s: %s, want %s", name, got, want)
		}
	}
	edited := fstest.MapFS{"a/a.go": {Data: []byte("package a\n")}}
	one, _ := New(Config{Path: "m", Sources: edited}).Fingerprint()
	edited["a/a.go"] = &fstest.MapFile{Data: []byte("package a \n")}
	two, _ := New(Config{Path: "m", Sources: edited}).Fingerprint()
	if one == two {
		t.Error("an edited file left the fingerprint alone")
	}
}

func plainFingerprint(t *testing.T, c Config) string {
	h := sha256.New()
	fmt.Fprintf(h, "thv code fingerprint v2\nmodule %q\ntoolchain %q\nbinary %q\n", c.Path, c.Toolchain, c.Binary)
	for _, imp := range slices.Sorted(maps.Keys(c.ThirdParty)) {
		fmt.Fprintf(h, "third-party %q %q\n", imp, c.ThirdParty[imp])
	}
	for _, imp := range slices.Sorted(maps.Keys(c.PackageNames)) {
		fmt.Fprintf(h, "package name %q %q\n", imp, c.PackageNames[imp])
	}
	err := fs.WalkDir(c.Sources, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(c.Sources, name)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "file %q %d\n", name, len(b))
		h.Write(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// TestFingerprintSourcesInBinary: with the sources embedded in the binary
// its build ID stands for them (another tree under the same build ID
// gives the same fingerprint, another build ID another); without a build
// ID the sources are read as ever.
func TestFingerprintSourcesInBinary(t *testing.T) {
	fp := func(c Config) string {
		t.Helper()
		s, err := New(c).Fingerprint()
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	a := fstest.MapFS{"a/a.go": {Data: []byte("package a\n")}}
	b := fstest.MapFS{"a/a.go": {Data: []byte("package a \n")}}
	in := Config{Path: "m", Sources: a, Binary: "bin/id", SourcesInBinary: true}
	other := in
	other.Sources = b
	if fp(in) != fp(other) {
		t.Error("embedded sources: the build ID does not stand for them")
	}
	other.Binary = "bin/other"
	if fp(in) == fp(other) {
		t.Error("embedded sources: another build ID, the same fingerprint")
	}
	read := in
	read.SourcesInBinary = false
	if fp(read) != plainFingerprint(t, read) || fp(read) == fp(in) {
		t.Error("sources not embedded: not read, or read into the embedded form")
	}
	noID := in
	noID.Binary = ""
	if fp(noID) != plainFingerprint(t, noID) {
		t.Error("embedded sources without a build ID: not read")
	}
}
