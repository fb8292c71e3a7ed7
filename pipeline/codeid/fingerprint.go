package codeid

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"slices"
	"sync"
)

// fingerprint caches Fingerprint per Module.
type fingerprint struct {
	once sync.Once
	sum  string
	err  error
}

// Fingerprint returns a digest of everything m's identities are computed
// from: every file of Config.Sources (test files and testdata included:
// more than any identity reads; when they are embedded in the binary,
// Config.SourcesInBinary, its build ID stands for them), the module path,
// the toolchain, the build list, the third-party table (its modules and
// package names) and the binary's build ID (which covers the normaliser's
// code). Two Modules with one fingerprint compute
// the same identity for every set of roots; a cache keyed by it (the
// pipeline's no-op certificate) cannot outlive an edit that a fresh
// identity would see, even where Config.Binary stays the same (tests build
// Modules over edited sources in one binary). It reads and hashes all of
// Sources once per Module: about a megabyte for this module.
func (m *Module) Fingerprint() (string, error) {
	m.fp.once.Do(func() { m.fp.sum, m.fp.err = m.fingerprint() })
	return m.fp.sum, m.fp.err
}

func (m *Module) fingerprint() (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "thv code fingerprint v2\nmodule %q\ntoolchain %q\nbinary %q\n", m.c.Path, m.c.Toolchain, m.c.Binary)
	for _, d := range m.c.Modules {
		if d == nil {
			continue
		}
		fmt.Fprintf(h, "dep %q %q %q\n", d.Path, d.Version, d.Sum)
		if r := d.Replace; r != nil {
			fmt.Fprintf(h, "replace %q %q %q\n", r.Path, r.Version, r.Sum)
		}
	}
	for _, imp := range slices.Sorted(maps.Keys(m.c.ThirdParty)) {
		fmt.Fprintf(h, "third-party %q %q\n", imp, m.c.ThirdParty[imp])
	}
	for _, imp := range slices.Sorted(maps.Keys(m.c.PackageNames)) {
		fmt.Fprintf(h, "package name %q %q\n", imp, m.c.PackageNames[imp])
	}
	if m.c.SourcesInBinary && m.c.Binary != "" {
		// The build ID's content hash is of the binary's bytes, the
		// embedded sources among them (a megabyte not read again at
		// every start).
		io.WriteString(h, "sources in the binary\n")
		return hex.EncodeToString(h.Sum(nil)), nil
	}
	if m.c.Sources == nil {
		return "", fmt.Errorf("code fingerprint: no sources")
	}
	buf := make([]byte, 32<<10) // each file streamed through one buffer, not read whole
	err := fs.WalkDir(m.c.Sources, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		f, err := m.c.Sources.Open(name)
		if err != nil {
			return err
		}
		defer f.Close()
		fi, err := f.Stat()
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "file %q %d\n", name, fi.Size())
		n, err := io.CopyBuffer(h, onlyReader{f}, buf)
		if err == nil && n != fi.Size() {
			err = fmt.Errorf("%s: read %d bytes, its size is %d", name, n, fi.Size())
		}
		return err
	})
	if err != nil {
		return "", fmt.Errorf("code fingerprint: %w", err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// onlyReader hides every method but Read (io.CopyBuffer then uses its
// buffer).
type onlyReader struct{ io.Reader }
