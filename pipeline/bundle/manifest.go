package bundle

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
)

// A Manifest maps every file of a bundle but itself to its SHA-256. Its
// text is sha256sum's: one "<64 hex>  <path>" line per file, sorted by
// path, so that `sha256sum -c SHA256SUMS` in the extracted directory
// checks the bundle without THV.
type Manifest map[string][32]byte

// Encode returns the manifest's text.
func (m Manifest) Encode() []byte {
	var b bytes.Buffer
	for _, p := range sortedPaths(m) {
		sum := m[p]
		b.WriteString(hex.EncodeToString(sum[:]))
		b.WriteString("  ")
		b.WriteString(p)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// ParseManifest reads a manifest strictly: exactly the lines Encode
// writes (text mode, two spaces), each path a safe bundle path given once.
func ParseManifest(data []byte) (Manifest, error) {
	m := Manifest{}
	if len(data) == 0 || data[len(data)-1] != '\n' {
		return nil, fmt.Errorf("%s: empty, or its last line does not end with a newline", ManifestName)
	}
	folded := map[string]string{}
	for i, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		sumHex, path, ok := strings.Cut(line, "  ")
		var sum [32]byte
		if !ok || len(sumHex) != 64 || strings.ToLower(sumHex) != sumHex {
			return nil, fmt.Errorf("%s line %d: want \"<64 lowercase hex>  <path>\", got %.80q", ManifestName, i+1, line)
		}
		if _, err := hex.Decode(sum[:], []byte(sumHex)); err != nil {
			return nil, fmt.Errorf("%s line %d: %v", ManifestName, i+1, err)
		}
		if err := CheckPath(path); err != nil {
			return nil, fmt.Errorf("%s line %d: %w", ManifestName, i+1, err)
		}
		if path == ManifestName {
			return nil, fmt.Errorf("%s line %d: the manifest cannot list itself", ManifestName, i+1)
		}
		if prev, dup := folded[strings.ToLower(path)]; dup {
			return nil, fmt.Errorf("%s line %d: %q is listed twice (also as %q; names may not differ only in case)", ManifestName, i+1, path, prev)
		}
		folded[strings.ToLower(path)] = path
		m[path] = sum
	}
	return m, nil
}

func sortedPaths[V any](m map[string]V) []string {
	ps := make([]string, 0, len(m))
	for p := range m {
		ps = append(ps, p)
	}
	slices.Sort(ps)
	return ps
}
