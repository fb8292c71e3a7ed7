package export

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
)

// A PNG of results/ is drawn at export, outside any task, so no lock
// records its bytes. It records its own provenance instead, in a tEXt
// chunk (pngStampKey, which any PNG reader shows and ignores): the curves
// output it is drawn from and the SHA-256 of its image data. The export
// then redraws a PNG only when its stamp names other curves or its image
// data no longer hashes to the stamp (an edited file), and verify-bundle
// checks that a bundle's PNG names the curves in the bundle's lock.

// pngStampKey is the keyword of the stamp's tEXt chunk.
const pngStampKey = "thv-source"

var pngSignature = []byte("\x89PNG\r\n\x1a\n")

// pngChunk is one chunk of a PNG file: its type and data, and where the
// whole chunk (length, type, data, CRC) sits in the file.
type pngChunk struct {
	typ        string
	data       []byte
	start, end int
}

// pngChunks splits a PNG file into its chunks (CRCs unchecked: the image
// decoder checks them), ending at IEND.
func pngChunks(b []byte) ([]pngChunk, error) {
	if !bytes.HasPrefix(b, pngSignature) {
		return nil, errors.New("not a PNG file")
	}
	var out []pngChunk
	for at := len(pngSignature); ; {
		if len(b)-at < 12 {
			return nil, errors.New("PNG file truncated (no IEND chunk)")
		}
		n := binary.BigEndian.Uint32(b[at:])
		if uint64(n) > uint64(len(b)-at-12) {
			return nil, fmt.Errorf("PNG chunk at byte %d: length %d past the end of the file", at, n)
		}
		c := pngChunk{typ: string(b[at+4 : at+8]), data: b[at+8 : at+8+int(n)], start: at, end: at + 12 + int(n)}
		out = append(out, c)
		if c.typ == "IEND" {
			return out, nil
		}
		at = c.end
	}
}

// pngStamp is the stamp text of a PNG drawn from source whose image data
// (its IDAT chunks in order) hashes to idat.
func pngStamp(source string, idat [32]byte) string {
	return fmt.Sprintf("drawn by thv from %s; image data sha256:%x", source, idat)
}

// imageDataSum is the SHA-256 of the IDAT chunks' data, in order.
func imageDataSum(chunks []pngChunk) [32]byte {
	h := sha256.New()
	for _, c := range chunks {
		if c.typ == "IDAT" {
			h.Write(c.data)
		}
	}
	var sum [32]byte
	h.Sum(sum[:0])
	return sum
}

// stampPNG returns the PNG with a stamp naming source inserted before its
// IEND chunk.
func stampPNG(png []byte, source string) ([]byte, error) {
	chunks, err := pngChunks(png)
	if err != nil {
		return nil, err
	}
	text := append([]byte(pngStampKey+"\x00"), pngStamp(source, imageDataSum(chunks))...)
	iend := chunks[len(chunks)-1].start
	out := make([]byte, 0, len(png)+12+len(text))
	out = append(out, png[:iend]...)
	out = binary.BigEndian.AppendUint32(out, uint32(len(text)))
	typed := append([]byte("tEXt"), text...)
	out = append(out, typed...)
	out = binary.BigEndian.AppendUint32(out, crc32.ChecksumIEEE(typed))
	return append(out, png[iend:]...), nil
}

// readPNGStamp returns the stamp text of a PNG ("" if it has none) and the
// text a stamp of its current image data drawn from source would have: the
// two are equal exactly when the PNG is drawn from source and unedited.
func readPNGStamp(png []byte, source string) (stamp, want string, err error) {
	stamp, idat, err := pngStampParts(png)
	if err != nil {
		return "", "", err
	}
	return stamp, pngStamp(source, idat), nil
}

// pngStampParts returns what readPNGStamp compares, before the source is
// known: the stamp text, and the SHA-256 of the image data.
func pngStampParts(png []byte) (stamp string, idat [32]byte, err error) {
	chunks, err := pngChunks(png)
	if err != nil {
		return "", idat, err
	}
	for _, c := range chunks {
		if key, text, ok := bytes.Cut(c.data, []byte{0}); c.typ == "tEXt" && ok && string(key) == pngStampKey {
			stamp = string(text)
		}
	}
	return stamp, imageDataSum(chunks), nil
}
