package bundle

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"strconv"
	"testing"
)

// Go's tar.Writer will not write a sparse file, so the sparse archives of
// the tests are written by hand, block by block.

// rawHeader is one 512-byte tar header: ustar, or GNU (for type 'S') when
// gnu is set; edit may fill more fields before the checksum is computed.
func rawHeader(name string, typ byte, size int64, gnu bool, edit func(b []byte)) []byte {
	b := make([]byte, 512)
	copy(b[0:100], name)
	copy(b[100:], "0000644\x00")
	copy(b[108:], "0000000\x00")
	copy(b[116:], "0000000\x00")
	copy(b[124:], fmt.Sprintf("%011o\x00", size))
	copy(b[136:], fmt.Sprintf("%011o\x00", 0))
	b[156] = typ
	if gnu {
		copy(b[257:], "ustar  \x00")
	} else {
		copy(b[257:], "ustar\x0000")
	}
	if edit != nil {
		edit(b)
	}
	copy(b[148:156], "        ")
	sum := 0
	for _, c := range b {
		sum += int(c)
	}
	copy(b[148:], fmt.Sprintf("%06o\x00 ", sum))
	return b
}

// padded is data followed by zeros to a whole number of blocks.
func padded(data []byte) []byte {
	return append(append([]byte(nil), data...), make([]byte, roundUp(int64(len(data)), 512)-int64(len(data)))...)
}

// rawFile is a regular file's header and its data.
func rawFile(name string, data []byte) []byte {
	return append(rawHeader(name, '0', int64(len(data)), false, nil), padded(data)...)
}

// paxHeader is an extended header ('x') holding the records, given as
// key, value pairs, for the next entry.
func paxHeader(kv ...string) []byte {
	var recs []byte
	for i := 0; i+1 < len(kv); i += 2 {
		rec := " " + kv[i] + "=" + kv[i+1] + "\n"
		// The length counts its own digits.
		n := len(rec)
		for n != len(rec)+len(strconv.Itoa(n)) {
			n = len(rec) + len(strconv.Itoa(n))
		}
		recs = append(recs, strconv.Itoa(n)+rec...)
	}
	return append(rawHeader("PaxHeaders/x", 'x', int64(len(recs)), false, nil), padded(recs)...)
}

// rawTarGz ends the parts with two zero blocks and compresses them.
func rawTarGz(t *testing.T, parts ...[]byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	for _, p := range parts {
		gz.Write(p)
	}
	gz.Write(make([]byte, 1024))
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// Sparse entries of every kind GNU tar writes, each a file of size bytes
// that is all hole: its one data segment, at the end, is empty. They
// match what GNU tar 1.34 writes for a file made by truncate -s 1G
// (tar --format=posix --sparse-version=0.0, 0.1, 1.0; --format=gnu),
// which archive/tar reads the same.

// sparsePAX10 is GNU PAX sparse format 1.0 (tar --sparse-version=1.0,
// GNU tar's default with --posix): the records name the real file and
// size, the stand-in name hides it from other readers, and the data
// starts with the sparse map.
func sparsePAX10(name string, size int64) []byte {
	sz := strconv.FormatInt(size, 10)
	m := padded([]byte("1\n" + sz + "\n0\n"))
	return append(append(paxHeader("GNU.sparse.major", "1", "GNU.sparse.minor", "0", "GNU.sparse.name", name, "GNU.sparse.realsize", sz),
		rawHeader("GNUSparseFile.0/"+name, '0', int64(len(m)), false, nil)...), m...)
}

// sparsePAX01 is format 0.1: the map is one record.
func sparsePAX01(name string, size int64) []byte {
	sz := strconv.FormatInt(size, 10)
	return append(paxHeader("GNU.sparse.size", sz, "GNU.sparse.numblocks", "1", "GNU.sparse.name", name, "GNU.sparse.map", sz+",0"),
		rawHeader("GNUSparseFile.0/"+name, '0', 0, false, nil)...)
}

// sparsePAX00 is format 0.0: the map is a record per offset and length.
func sparsePAX00(name string, size int64) []byte {
	sz := strconv.FormatInt(size, 10)
	return append(paxHeader("GNU.sparse.size", sz, "GNU.sparse.numblocks", "1", "GNU.sparse.offset", sz, "GNU.sparse.numbytes", "0"),
		rawHeader(name, '0', 0, false, nil)...)
}

// sparseGNU is the old GNU format: type 'S', the real size and the map
// in the header.
func sparseGNU(name string, size int64) []byte {
	return rawHeader(name, 'S', 0, true, func(b []byte) {
		copy(b[386:], fmt.Sprintf("%011o\x00", size)) // the first entry's offset
		copy(b[398:], fmt.Sprintf("%011o\x00", 0))    // and length
		copy(b[483:], fmt.Sprintf("%011o\x00", size)) // the real size
	})
}
