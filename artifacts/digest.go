package artifacts

import (
	"crypto/sha256"
	"encoding/binary"
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
// dst; it reports false for any other byte. (Lock files and the object
// listing decode hundreds of thousands of these on the no-op path, so
// eight digits are decoded at a time, in the bytes of a uint64:
// decodeHex8.)
func decodeLowerHex[S ~string | ~[]byte](dst []byte, s S) bool {
	if len(s) != 2*len(dst) {
		return false
	}
	var bad uint64
	i := 0
	for ; i+4 <= len(dst); i += 4 {
		v, b := decodeHex8(le64(s[2*i : 2*i+8]))
		bad |= b
		binary.LittleEndian.PutUint32(dst[i:i+4], v)
	}
	for ; i < len(dst); i++ {
		hi, lo := lowerHexValue[s[2*i]], lowerHexValue[s[2*i+1]]
		bad |= uint64((hi | lo) & 0xf0) // a value 0xff marks a non-digit
		dst[i] = hi<<4 | lo&0x0f
	}
	return bad == 0
}

// le64 is the little-endian uint64 of s's first 8 bytes (one load).
func le64[S ~string | ~[]byte](s S) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// decodeHex8 decodes the 8 hex digits in the bytes of x (the first in the
// lowest byte) into 4 bytes (the first in the lowest); bad is 0 exactly
// when every byte is a lowercase hex digit. Per byte c, without a carry
// between bytes: n = (c & 0xf) + 9·bit 6 of c is the digit's value for
// '0'–'9' and 'a'–'f'; c is such a digit exactly when n ≤ 15 and n
// encodes back to c (n + '0', or n + 'a' − 10 from 10 on).
func decodeHex8(x uint64) (v uint32, bad uint64) {
	const ones = 0x0101010101010101
	n := x&(0x0f*ones) + (x>>6&ones)*9      // ≤ 24 per byte
	over := (n + 0x70*ones) & (0x80 * ones) // n ≥ 16
	letter := (n + 0x06*ones) >> 4 & ones   // n ≥ 10 (n < 16)
	back := n + 0x30*ones + letter*0x27
	// Pair the nibbles: byte 2j holds n(2j)·16 + n(2j+1), then pack.
	w := (n<<4 | n>>8) & 0x00ff00ff00ff00ff
	w = (w | w>>8) & 0x0000ffff0000ffff
	w = w | w>>16
	return uint32(w), over | (back ^ x)
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
