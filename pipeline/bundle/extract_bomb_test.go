package bundle

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// zerosSum is the SHA-256 of n zero bytes, as a manifest lists it.
func zerosSum(n int64) [32]byte {
	h := sha256.New()
	io.Copy(h, io.LimitReader(zeroReader{}, n))
	var s [32]byte
	h.Sum(s[:0])
	return s
}

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

var gibZerosSum = sync.OnceValue(func() [32]byte { return zerosSum(1 << 30) })

// sparseBundle is a bundle whose manifest lists each name as a file of
// 1 GiB of zeros, followed by that file as the sparse entry kind makes
// it: all that stands between it and 1 GiB on disk per entry is Extract
// refusing sparse entries.
func sparseBundle(t *testing.T, kind func(string, int64) []byte, names ...string) []byte {
	t.Helper()
	m := Manifest{}
	for _, n := range names {
		m[n] = gibZerosSum()
	}
	parts := [][]byte{rawFile(ManifestName, m.Encode())}
	for _, n := range names {
		parts = append(parts, kind(n, 1<<30))
	}
	return rawTarGz(t, parts...)
}

// generous lifts every limit on sizes, to show what refuses an archive
// is not one.
var generous = Limits{FileSize: 1 << 40, Total: 1 << 40, Reserve: -1}

func TestExtractRefusesSparseEntries(t *testing.T) {
	standIn := func(name string, _ int64) []byte { return rawFile("GNUSparseFile.0/"+name, []byte("x")) }
	for _, tc := range []struct {
		kind string
		make func(string, int64) []byte
		want string
	}{
		{"PAX 1.0", sparsePAX10, `"big" refused: a sparse file (GNU PAX sparse format 1.0: records GNU.sparse.major, GNU.sparse.minor, GNU.sparse.name, GNU.sparse.realsize)`},
		{"PAX 0.1", sparsePAX01, `"big" refused: a sparse file (GNU PAX sparse format 0.0 or 0.1: records GNU.sparse.map, GNU.sparse.name, GNU.sparse.numblocks, GNU.sparse.size)`},
		// archive/tar turns 0.0's offset and numbytes records into a map.
		{"PAX 0.0", sparsePAX00, `"big" refused: a sparse file (GNU PAX sparse format 0.0 or 0.1: records GNU.sparse.map, GNU.sparse.numblocks, GNU.sparse.size)`},
		{"old GNU", sparseGNU, `"big" refused: a sparse file (old GNU format, tar type 'S'): a bundle holds only regular files and directories, and a sparse file declares a size its archive does not hold`},
		{"unknown PAX version", func(name string, size int64) []byte {
			return append(paxHeader("GNU.sparse.major", "7", "GNU.sparse.minor", "0", "GNU.sparse.\x01odd", "x"), rawFile(name, []byte("x"))...)
		}, `"big" refused: a sparse file (GNU PAX sparse format of major version "7": records "GNU.sparse.\x01odd", GNU.sparse.major, GNU.sparse.minor)`},
		{"stand-in name", standIn, `"GNUSparseFile.0/big" refused: a sparse file's stand-in name ("GNUSparseFile.0", which GNU tar gives`},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			data := sparseBundle(t, tc.make, "big")
			for _, lim := range []Limits{{}, generous} {
				start := time.Now()
				err := extractIn(t, data, lim)
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("limits %+v: got %v, want an error containing %s", lim, err, tc.want)
				}
				if d := time.Since(start); d > 5*time.Second {
					t.Errorf("refused after %s: it read the entry", d)
				}
			}
		})
	}
}

// TestExtractRefusesTheAttackersSparseBundle: a bundle of 381 bytes, two
// PAX 1.0 sparse entries of 1 GiB each, listed in the manifest with the
// SHA-256 of 1 GiB of zeros, which archive/tar would expand to 2 GiB. The
// first entry is refused before a byte of it is written: on a 1 MiB file
// system (as root), with every size limit lifted, it is still the sparse
// entry that is refused, not the disk that fills.
func TestExtractRefusesTheAttackersSparseBundle(t *testing.T) {
	data := sparseBundle(t, sparsePAX10, "results/a.parquet", "results/b.parquet")
	t.Logf("the bundle: %d bytes", len(data))
	if len(data) > 512 {
		t.Fatalf("the bundle is %d bytes, the attacker's 381", len(data))
	}
	want := `bundle entry "results/a.parquet" refused: a sparse file (GNU PAX sparse format 1.0`
	for _, lim := range []Limits{{}, generous} {
		if err := extractIn(t, data, lim); err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("limits %+v: got %v, want %s", lim, err, want)
		}
	}
	small := mountTmpfs(t, "size=1m")
	_, err := Extract(bytes.NewReader(data), filepath.Join(small, "target"), generous)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("on a 1 MiB file system: got %v, want %s", err, want)
	}
	assertEmptyDir(t, small)
}

// bombArchive is a bundle of one file, "zeros", of n zero bytes, with
// the manifest that lists it: valid but for its size.
func bombArchive(t *testing.T, n int64) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	tw := tar.NewWriter(gz)
	m := Manifest{"zeros": zerosSum(n)}.Encode()
	tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: ManifestName, Size: int64(len(m)), Mode: 0o644})
	tw.Write(m)
	tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "zeros", Size: n, Mode: 0o644})
	if _, err := io.Copy(tw, io.LimitReader(zeroReader{}, n)); err != nil {
		t.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	gz.Close()
	return buf.Bytes()
}

// TestExtractRefusesGzipBombs: the default limit on the total follows the
// bundle's compressed size (TotalRatio times it, at least MinTotal), and
// every entry's declared size counts against it before its bytes are
// read; the decompressed stream is capped too.
func TestExtractRefusesGzipBombs(t *testing.T) {
	t.Run("200 MB of zeros", func(t *testing.T) {
		data := bombArchive(t, 200e6)
		t.Logf("200 MB of zeros: a bundle of %d bytes", len(data))
		err := extractIn(t, data, Limits{})
		want := `bundle refused: larger than 67108864 bytes once decompressed: its entries up to "zeros" (of 200000000 bytes) declare 200001536 bytes (the limit: the least limit, for a bundle this small; a decompression bomb?); if the bundle is honest, raise the limit (bundle.Limits.Total)`
		if err == nil || err.Error() != want {
			t.Fatalf("got %v, want %s", err, want)
		}
		err = extractIn(t, data, Limits{RaiseTotal: "--max-unpacked"})
		if err == nil || !strings.HasSuffix(err.Error(), "raise the limit (--max-unpacked)") {
			t.Fatalf("got %v, want the caller's way to raise the limit", err)
		}
	})

	// A bundle above MinTotal / TotalRatio: 5 MiB that do not compress,
	// then a header declaring 100 MB, more than 16 times that; no byte
	// follows it, so reading it would fail otherwise ("truncated").
	random := make([]byte, 5<<20)
	rand.Read(random)
	over := rawTarGz(t, rawFile(ManifestName, Manifest{"random": sha256.Sum256(random), "zeros": zerosSum(100e6)}.Encode()),
		rawFile("random", random), rawHeader("zeros", '0', 100e6, false, nil))
	over = over[:len(over)-8] // no gzip trailer either
	file := filepath.Join(t.TempDir(), "over.tar.gz")
	if err := os.WriteFile(file, over, 0o644); err != nil {
		t.Fatal(err)
	}
	ratio := fmt.Sprintf(`its entries up to "zeros" (of 100000000 bytes) declare 105245184 bytes (the limit: 16 times its compressed size of 5.0 MiB (%d bytes)`, len(over))
	for _, tc := range []struct {
		name string
		open func() io.Reader
		lim  Limits
		want string
	}{
		{"ratio, of a bytes.Reader", func() io.Reader { return bytes.NewReader(over) }, Limits{}, ratio},
		{"ratio, of a file", func() io.Reader {
			f, err := os.Open(file)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { f.Close() })
			return f
		}, Limits{}, ratio},
		{"ratio, of the size given", func() io.Reader { return io.MultiReader(bytes.NewReader(over)) }, Limits{Compressed: int64(len(over))}, ratio},
		{"size unknown", func() io.Reader { return io.MultiReader(bytes.NewReader(over)) }, Limits{},
			`bundle refused: larger than 67108864 bytes once decompressed: its entries up to "zeros" (of 100000000 bytes) declare 105245184 bytes (the limit: the least limit; the bundle's compressed size is unknown`},
		{"limit given", func() io.Reader { return bytes.NewReader(over) }, Limits{Total: 6 << 20},
			`bundle refused: larger than 6291456 bytes once decompressed: its entries up to "zeros" (of 100000000 bytes) declare 105245184 bytes (the limit: the limit given`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := t.TempDir()
			_, err := Extract(tc.open(), filepath.Join(base, "target"), tc.lim)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want %s", err, tc.want)
			}
			assertEmptyDir(t, base)
		})
	}

	t.Run("declared sizes add up", func(t *testing.T) {
		// Three files of 400 KiB, with a limit of 1 MiB: the third is
		// refused on its header (no byte of it follows).
		a, b := bytes.Repeat([]byte("a"), 400<<10), bytes.Repeat([]byte("b"), 400<<10)
		m := Manifest{"a": sha256.Sum256(a), "b": sha256.Sum256(b), "c": zerosSum(400 << 10)}.Encode()
		data := rawTarGz(t, rawFile(ManifestName, m), rawFile("a", a), rawFile("b", b), rawHeader("c", '0', 400<<10, false, nil))
		err := extractIn(t, data, Limits{Total: 1 << 20})
		want := `bundle refused: larger than 1048576 bytes once decompressed: its entries up to "c" (of 409600 bytes) declare 1231360 bytes`
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("got %v, want %s", err, want)
		}
	})

	t.Run("the stream is capped", func(t *testing.T) {
		// Entries that declare little in a large stream: a PAX record
		// of 512 KiB, over a limit of 256 KiB.
		data := rawTarGz(t, rawFile(ManifestName, Manifest{"a": sha256.Sum256(nil)}.Encode()),
			paxHeader("comment", strings.Repeat("x", 512<<10)), rawFile("a", nil))
		err := extractIn(t, data, Limits{Total: 256 << 10})
		want := "bundle refused: larger than 262144 bytes once decompressed (the limit: the limit given; a decompression bomb?)"
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("got %v, want %s", err, want)
		}
	})

	t.Run("data after the archive", func(t *testing.T) {
		good := rawFile(ManifestName, Manifest{"a": sha256.Sum256(nil)}.Encode())
		good = append(good, rawFile("a", nil)...)
		ok := rawTarGz(t, good, make([]byte, 1<<20-1024)) // 1 MiB after the last entry: allowed
		if err := extractIn(t, ok, Limits{}); err != nil {
			t.Fatalf("1 MiB of padding: %v", err)
		}
		bomb := rawTarGz(t, good, make([]byte, 64<<20))
		want := "not a bundle: more than 1.0 MiB (1048576 bytes) of data after the end of the tar archive"
		if err := extractIn(t, bomb, Limits{}); err == nil || err.Error() != want {
			t.Fatalf("64 MiB of zeros after the archive: got %v, want %s", err, want)
		}
	})
}

// assertEmptyDir fails unless dir holds nothing.
func assertEmptyDir(t *testing.T, dir string) {
	t.Helper()
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("a refused archive left %s in %s", entries[0].Name(), dir)
	}
}
