package artifacts

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
)

// digestPrefix names the hash function in the printed form, so that a
// future change of function cannot be confused with the current one.
const digestPrefix = "sha256:"

// Digest is the SHA-256 of an object's bytes. It prints as "sha256:<64 hex>".
type Digest [sha256.Size]byte

// Key identifies a task: the SHA-256 of its kind, code fingerprint, canonical
// params and input digests, computed by the pipeline. It is a distinct type
// from Digest so that the two cannot be mixed up, and prints the same way.
type Key [sha256.Size]byte

// Sum returns the digest of data.
func Sum(data []byte) Digest { return sha256.Sum256(data) }

// String returns "sha256:<64 lowercase hex>".
func (d Digest) String() string { return digestPrefix + hex.EncodeToString(d[:]) }

// Hex returns the 64 lowercase hex digits, as used in file names.
func (d Digest) Hex() string { return hex.EncodeToString(d[:]) }

// IsZero reports whether d is the zero value (no digest).
func (d Digest) IsZero() bool { return d == Digest{} }

// MarshalText implements encoding.TextMarshaler (used by JSON).
func (d Digest) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler with ParseDigest's rules.
func (d *Digest) UnmarshalText(b []byte) error {
	// The well-formed case decodes without converting b to a string: lock
	// files hold tens of thousands of digests.
	if len(b) == len(digestPrefix)+2*len(d) && string(b[:len(digestPrefix)]) == digestPrefix &&
		decodeLowerHex(d[:], b[len(digestPrefix):]) {
		return nil
	}
	v, err := ParseDigest(string(b))
	if err != nil {
		return err
	}
	*d = v
	return nil
}

// ParseDigest parses the form printed by Digest.String: "sha256:" followed by
// exactly 64 lowercase hex digits. Anything else is rejected, so that every
// digest has exactly one spelling.
func ParseDigest(s string) (Digest, error) {
	var d Digest
	if err := parseHash(s, d[:]); err != nil {
		return Digest{}, fmt.Errorf("artifacts: bad digest: %w", err)
	}
	return d, nil
}

// String returns "sha256:<64 lowercase hex>".
func (k Key) String() string { return digestPrefix + hex.EncodeToString(k[:]) }

// Hex returns the 64 lowercase hex digits, as used in file names.
func (k Key) Hex() string { return hex.EncodeToString(k[:]) }

// IsZero reports whether k is the zero value (no key).
func (k Key) IsZero() bool { return k == Key{} }

// MarshalText implements encoding.TextMarshaler (used by JSON).
func (k Key) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler with ParseKey's rules.
func (k *Key) UnmarshalText(b []byte) error {
	if len(b) == len(digestPrefix)+2*len(k) && string(b[:len(digestPrefix)]) == digestPrefix &&
		decodeLowerHex(k[:], b[len(digestPrefix):]) {
		return nil
	}
	v, err := ParseKey(string(b))
	if err != nil {
		return err
	}
	*k = v
	return nil
}

// ParseKey parses "sha256:<64 lowercase hex>", with the same rules as
// ParseDigest.
func ParseKey(s string) (Key, error) {
	var k Key
	if err := parseHash(s, k[:]); err != nil {
		return Key{}, fmt.Errorf("artifacts: bad key: %w", err)
	}
	return k, nil
}

func parseHash(s string, dst []byte) error {
	hexPart, ok := strings.CutPrefix(s, digestPrefix)
	if !ok {
		if len(s) == 2*len(dst) && isLowerHex(s) {
			return fmt.Errorf("%q lacks the %q prefix", s, digestPrefix)
		}
		return fmt.Errorf("%q does not start with %q", s, digestPrefix)
	}
	if len(hexPart) != 2*len(dst) {
		return fmt.Errorf("%q has %d hex digits, want %d", s, len(hexPart), 2*len(dst))
	}
	if !decodeLowerHex(dst, hexPart) {
		return fmt.Errorf("%q: only lowercase hex digits 0-9a-f are allowed after %q", s, digestPrefix)
	}
	return nil
}

// lowerHexValue maps a byte to its value as a lowercase hex digit, or 0xff.
var lowerHexValue = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	for c := byte('0'); c <= '9'; c++ {
		t[c] = c - '0'
	}
	for c := byte('a'); c <= 'f'; c++ {
		t[c] = c - 'a' + 10
	}
	return t
}()

// decodeLowerHex decodes s (exactly 2·len(dst) lowercase hex digits) into
// dst in one pass; it reports false for any other byte. (Lock files and the
// object listing decode tens of thousands of these on the no-op path.)
func decodeLowerHex[S ~string | ~[]byte](dst []byte, s S) bool {
	if len(s) != 2*len(dst) {
		return false
	}
	bad := byte(0)
	for i := range dst {
		hi, lo := lowerHexValue[s[2*i]], lowerHexValue[s[2*i+1]]
		bad |= hi | lo
		dst[i] = hi<<4 | lo&0x0f
	}
	return bad&0xf0 == 0
}

func isLowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// parseHexName decodes a bare 64-hex file name (no prefix), as found under
// objects/ and index/. ok is false for anything else.
func parseHexName(name string) (h [sha256.Size]byte, ok bool) {
	ok = decodeLowerHex(h[:], name)
	return h, ok
}
