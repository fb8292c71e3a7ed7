package pipeline

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"go/scanner"
	"go/token"
	"io/fs"
	"path"
	"sort"
	"strings"
	"sync"

	"thv"
)

// Code fingerprints. A source unit is a package directory ("algos/paretots")
// or one file ("stages/run.go"), module-relative. Its hash covers the
// non-test Go files as token streams, without comments or layout, so
// comment-only and gofmt-only edits do not rerun anything.

var (
	unitMu    sync.Mutex
	unitCache = map[string]string{}
)

// sourceFS is the tree fingerprints are computed from (tests may swap it).
var sourceFS fs.FS = thv.Sources

// UnitHash returns the hex SHA-256 of a source unit's normalised code.
func UnitHash(unit string) (string, error) {
	unitMu.Lock()
	defer unitMu.Unlock()
	if h, ok := unitCache[unit]; ok {
		return h, nil
	}
	var files []string
	if strings.HasSuffix(unit, ".go") {
		files = []string{unit}
	} else {
		entries, err := fs.ReadDir(sourceFS, unit)
		if err != nil {
			return "", fmt.Errorf("code fingerprint: unit %q: %w", unit, err)
		}
		for _, e := range entries {
			if name := e.Name(); !e.IsDir() && strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go") {
				files = append(files, path.Join(unit, name))
			}
		}
		if len(files) == 0 {
			return "", fmt.Errorf("code fingerprint: unit %q has no Go files", unit)
		}
	}
	sort.Strings(files)
	h := sha256.New()
	for _, f := range files {
		norm, err := normalisedSource(f)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "file %s %d\n", f, len(norm))
		h.Write(norm)
	}
	sum := hex.EncodeToString(h.Sum(nil))
	unitCache[unit] = sum
	return sum, nil
}

// normalisedSource is the file's token stream without comments or layout:
// one token per line, automatic semicolons written like explicit ones.
func normalisedSource(name string) ([]byte, error) {
	src, err := fs.ReadFile(sourceFS, name)
	if err != nil {
		return nil, fmt.Errorf("code fingerprint: %w", err)
	}
	fset := token.NewFileSet()
	file := fset.AddFile(name, fset.Base(), len(src))
	var errs scanner.ErrorList
	var sc scanner.Scanner
	sc.Init(file, src, func(pos token.Position, msg string) { errs.Add(pos, msg) }, 0)
	var buf bytes.Buffer
	for {
		_, tok, lit := sc.Scan()
		if tok == token.EOF {
			break
		}
		if tok == token.SEMICOLON {
			lit = ";"
		}
		buf.WriteString(tok.String())
		if lit != "" && tok.IsLiteral() {
			buf.WriteByte(' ')
			buf.WriteString(lit)
		}
		buf.WriteByte('\n')
	}
	if errs.Len() > 0 {
		return nil, fmt.Errorf("code fingerprint: %w", errs.Err())
	}
	return buf.Bytes(), nil
}

// codeHashes returns the per-unit hashes of units, sorted by unit.
func codeHashes(units []string) (map[string]string, error) {
	out := make(map[string]string, len(units))
	for _, u := range units {
		h, err := UnitHash(u)
		if err != nil {
			return nil, err
		}
		out[u] = h
	}
	return out, nil
}
