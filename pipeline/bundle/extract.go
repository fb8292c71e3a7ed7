package bundle

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// Limits bound what Extract accepts. A zero field takes its default.
type Limits struct {
	Entries  int   // entries in the archive; default 1,000,000
	FileSize int64 // bytes of one file; default 4 GiB

	// Total bounds the bytes of the archive once decompressed. Every
	// entry's declared size (with its header and padding) counts against
	// it before its bytes are read, and the decompressed stream itself is
	// capped. Default: TotalRatio × Compressed, at least MinTotal.
	Total int64
	// Compressed is the bundle's size as read (compressed), which bounds
	// the default Total. Zero: the size Extract finds for r (the rest of
	// a regular file, or Len() of a bytes.Reader); unknown, MinTotal.
	Compressed int64
	// Reserve is the space kept free on the target's file system: the
	// entries may declare no more than its free space less Reserve.
	// Default: 5% of the file system, at most 1 GiB; negative: none.
	Reserve int64
	// RaiseTotal tells a user how to raise Total (a flag, say), in the
	// error for a bundle over it; default "bundle.Limits.Total".
	RaiseTotal string
}

// The default bound on a bundle's decompressed size. Measured: a quick
// profile bundle is 3.2 times its compressed size without its image
// (12.0 MB, 38.8 MB of tar) and 2.0 with it; the paper's about 2.5 (120
// MB, 300 MB). TotalRatio leaves five times that for an honest bundle
// and stops a gzip bomb (up to 1,032:1) at 16:1: a 64 MB bundle may
// unpack to 1 GB, not to the 64 GB that would fill a disk.
const (
	TotalRatio = 16
	MinTotal   = 64 << 20
)

const (
	maxManifestBytes = 256 << 20
	// maxTail bounds what may follow the tar archive's end inside the
	// gzip stream (GNU tar pads to 10 KiB records; THV writes none), so
	// that a bomb there is not decompressed for nothing.
	maxTail = 1 << 20
)

func (l Limits) withDefaults() Limits {
	if l.Entries <= 0 {
		l.Entries = 1_000_000
	}
	if l.FileSize <= 0 {
		l.FileSize = 4 << 30
	}
	if l.Total <= 0 {
		l.Total = max(MinTotal, TotalRatio*min(l.Compressed, math.MaxInt64/TotalRatio))
	}
	if l.RaiseTotal == "" {
		l.RaiseTotal = "bundle.Limits.Total"
	}
	return l
}

// totalWhy says where the limit on the total comes from.
func (l Limits) totalWhy(given bool) string {
	switch {
	case given:
		return "the limit given"
	case l.Compressed <= 0:
		return "the least limit; the bundle's compressed size is unknown"
	case l.Total == MinTotal:
		return "the least limit, for a bundle this small"
	}
	return fmt.Sprintf("%d times its compressed size of %s", TotalRatio, sizeText(l.Compressed))
}

// An EntryError is an archive entry that Extract refuses.
type EntryError struct {
	Name   string // as written in the archive
	Reason string
}

func (e *EntryError) Error() string {
	return fmt.Sprintf("bundle entry %q refused: %s", e.Name, e.Reason)
}

// ErrTampered is wrapped by the errors of Extract for a bundle whose files
// disagree with its manifest: a changed, added or missing file.
var ErrTampered = errors.New("the bundle does not match its SHA256SUMS")

// Extract unpacks the bundle read from r into dir, which must not exist
// (its parent must), checking every entry against the manifest as it
// streams past. Only directories and regular files are accepted (no
// links, devices or sparse files of any kind), at safe paths (CheckPath),
// each once (names differing only in case count as the same), within the
// limits, which every entry's declared size is counted against before
// its bytes are read; the manifest must come first and list every file,
// each with its SHA-256. On any error dir is removed, and nothing is ever
// written outside it: files are created through an os.Root on dir, never
// over an existing file. It returns the manifest.
//
// A fault of this machine — the target's file system full, over quota,
// read-only, not writable, failing; the bundle unreadable — is not the
// bundle's: its error wraps ErrLocal (and the system's error), and says
// that the bundle was not judged.
func Extract(r io.Reader, dir string, lim Limits) (m Manifest, err error) {
	if lim.Compressed <= 0 {
		lim.Compressed = compressedSize(r)
	}
	given := lim.Total > 0
	lim = lim.withDefaults()
	x := &extractor{dir: dir, lim: lim, totalWhy: lim.totalWhy(given), seen: map[string]string{}, dirs: map[string]bool{}}
	if err := os.Mkdir(dir, 0o755); err != nil {
		if errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("%s already exists: extract a bundle into a new directory", dir)
		}
		return nil, x.local(filepath.Dir(dir), "creating "+dir, err)
	}
	defer func() {
		if err != nil {
			os.RemoveAll(dir)
		}
	}()
	if fs, ok := statFS(dir); ok {
		x.space = fs.avail
		x.block = max(fs.block, 1)
		reserve := lim.Reserve
		if reserve == 0 {
			reserve = min(1<<30, fs.size/20)
		}
		x.reserve = max(reserve, 0)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, x.local(dir, "opening "+dir, err)
	}
	defer root.Close()
	x.root = root
	return x.run(r)
}

type extractor struct {
	dir      string
	root     *os.Root
	lim      Limits
	totalWhy string
	manifest Manifest
	seen     map[string]string // case-folded path → path, of files and directories
	dirs     map[string]bool   // case-folded directories, given or implied
	entries  int

	src      *sourceReader
	declared int64 // bytes of the tar stream the entries so far declare
	// The target's file system: its free bytes when Extract began (0:
	// unknown, not bounded), the reserve kept, its block size, and the
	// bytes the files so far declare, each rounded up to whole blocks.
	space, reserve, block, disk int64
}

func (x *extractor) run(r io.Reader) (Manifest, error) {
	x.src = &sourceReader{r: r}
	br := bufio.NewReader(x.src)
	gz, err := gzip.NewReader(br)
	if err != nil {
		if x.src.err != nil {
			return nil, x.readErr(nil, err)
		}
		return nil, fmt.Errorf("not a bundle (a gzip-compressed tar): %v", err)
	}
	gz.Multistream(false)
	total := &capReader{r: gz, left: x.lim.Total}
	tr := tar.NewReader(total)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, x.readErr(total, err)
		}
		if err := x.entry(h, tr); err != nil {
			return nil, x.readErr(total, err)
		}
	}
	// Reading to the end of the gzip stream checks its CRC and length.
	if n, err := io.Copy(io.Discard, io.LimitReader(total, maxTail+1)); err != nil {
		return nil, x.readErr(total, fmt.Errorf("the compressed stream is damaged: %v", err))
	} else if n > maxTail {
		return nil, fmt.Errorf("not a bundle: more than %s of data after the end of the tar archive", sizeText(maxTail))
	}
	if _, err := br.Peek(1); err != io.EOF {
		if x.src.err != nil {
			return nil, x.readErr(total, err)
		}
		return nil, fmt.Errorf("not a bundle: data after the end of the compressed archive")
	}
	if x.manifest == nil {
		return nil, fmt.Errorf("not a bundle: an empty archive (no %s)", ManifestName)
	}
	for _, p := range sortedPaths(x.manifest) {
		if _, ok := x.seen[strings.ToLower(p)]; !ok {
			return nil, fmt.Errorf("%w: %s lists %s, which the bundle does not hold", ErrTampered, ManifestName, p)
		}
	}
	return x.manifest, nil
}

func (x *extractor) readErr(total *capReader, err error) error {
	if x.src.err != nil {
		// The bundle could not be read: whatever the archive holds, this
		// machine failed first.
		return &localError{x.src.err, fmt.Sprintf("reading the bundle failed on this machine: %v; the bundle was not judged", x.src.err)}
	}
	if total != nil && total.over {
		return fmt.Errorf("bundle refused: larger than %d bytes once decompressed (the limit: %s; a decompression bomb?); if the bundle is honest, raise the limit (%s)",
			x.lim.Total, x.totalWhy, x.lim.RaiseTotal)
	}
	var ee *EntryError
	var te *totalError
	if errors.As(err, &ee) || errors.As(err, &te) || errors.Is(err, ErrTampered) || errors.Is(err, ErrLocal) {
		return err
	}
	return fmt.Errorf("not a valid bundle: %v", err)
}

// A totalError refuses entries that declare more than the limit on the
// total.
type totalError struct{ msg string }

func (e *totalError) Error() string { return e.msg }

// entry checks one header and writes its file.
func (x *extractor) entry(h *tar.Header, tr io.Reader) error {
	x.entries++
	if x.entries > x.lim.Entries {
		return &EntryError{h.Name, fmt.Sprintf("more than %d entries in the archive (the limit)", x.lim.Entries)}
	}
	// Before the name and the type: archive/tar has already expanded a
	// sparse file into a regular one of its declared size.
	if kind := sparseKind(h); kind != "" {
		return &EntryError{h.Name, kind + ": a bundle holds only regular files and directories, and a sparse file declares a size its archive does not hold"}
	}
	name := h.Name
	isDir := h.Typeflag == tar.TypeDir
	if isDir {
		name = strings.TrimSuffix(name, "/")
	}
	if err := CheckPath(name); err != nil {
		return &EntryError{h.Name, err.Error()}
	}
	switch h.Typeflag {
	case tar.TypeReg, tar.TypeDir:
	case tar.TypeSymlink:
		return &EntryError{h.Name, fmt.Sprintf("a symbolic link (to %q): a bundle holds only files and directories", h.Linkname)}
	case tar.TypeLink:
		return &EntryError{h.Name, fmt.Sprintf("a hard link (to %q): a bundle holds only files and directories", h.Linkname)}
	case tar.TypeChar, tar.TypeBlock:
		return &EntryError{h.Name, "a device file: a bundle holds only files and directories"}
	case tar.TypeFifo:
		return &EntryError{h.Name, "a named pipe (FIFO): a bundle holds only files and directories"}
	default:
		return &EntryError{h.Name, fmt.Sprintf("an entry of tar type %q: a bundle holds only files and directories", h.Typeflag)}
	}
	if h.Size < 0 || h.Size > x.lim.FileSize {
		return &EntryError{h.Name, fmt.Sprintf("%d bytes, more than the limit of %d bytes per file", h.Size, x.lim.FileSize)}
	}
	if err := x.count(h, isDir); err != nil {
		return err
	}
	if err := x.claim(name, isDir, h.Name); err != nil {
		return err
	}
	if isDir {
		return x.local(x.dir, "creating "+name, x.root.MkdirAll(name, 0o755))
	}
	if x.manifest == nil {
		// The manifest leads, so that every later file is checked as it
		// is written.
		if name != ManifestName {
			return fmt.Errorf("not a bundle: its first file is %q, not %s", name, ManifestName)
		}
		data, err := io.ReadAll(io.LimitReader(tr, min(h.Size, maxManifestBytes)+1))
		if err != nil {
			return err
		}
		if int64(len(data)) > maxManifestBytes {
			return &EntryError{h.Name, fmt.Sprintf("a manifest larger than %d bytes", maxManifestBytes)}
		}
		if x.manifest, err = ParseManifest(data); err != nil {
			return fmt.Errorf("%w: %v", ErrTampered, err)
		}
		return x.write(name, h, bytes.NewReader(data), nil)
	}
	want, ok := x.manifest[name]
	if !ok {
		return fmt.Errorf("%w: %s is not listed in %s (a file was added)", ErrTampered, name, ManifestName)
	}
	return x.write(name, h, tr, &want)
}

// count adds the entry's declared size to the totals, before a byte of
// it is read: to the archive's, against the limit (too much is the
// bundle's fault), then to the disk's, against the free space (the
// machine's).
func (x *extractor) count(h *tar.Header, isDir bool) error {
	size := h.Size
	if isDir {
		size = 0 // archive/tar reads no data for a directory
	}
	x.declared += blockSize + roundUp(size, blockSize)
	if x.declared > x.lim.Total {
		return &totalError{fmt.Sprintf("bundle refused: larger than %d bytes once decompressed: its entries up to %q (of %d bytes) declare %d bytes (the limit: %s; a decompression bomb?); if the bundle is honest, raise the limit (%s)",
			x.lim.Total, h.Name, size, x.declared, x.totalWhy, x.lim.RaiseTotal)}
	}
	if x.space <= 0 {
		return nil
	}
	x.disk += roundUp(size, x.block)
	if free := x.space - x.reserve; x.disk > free {
		return &localError{syscall.ENOSPC, fmt.Sprintf("this machine's file system at %s is too full: %s free, %s of it kept in reserve, and the bundle's files up to %q need %s: "+
			"free space, or extract with --dir on a larger disk; the bundle was not judged",
			x.dir, sizeText(x.space), sizeText(x.reserve), h.Name, sizeText(x.disk))}
	}
	return nil
}

const blockSize = 512 // of a tar archive

func roundUp(n, b int64) int64 { return (n + b - 1) / b * b }

// claim records a path, refusing one given twice or a file where a
// directory is (or the other way round).
func (x *extractor) claim(name string, isDir bool, raw string) error {
	key := strings.ToLower(name)
	if prev, dup := x.seen[key]; dup {
		if isDir && x.dirs[key] {
			return nil // a directory named again is harmless
		}
		return &EntryError{raw, fmt.Sprintf("a duplicate name (also given as %q; names may not differ only in case)", prev)}
	}
	if !isDir && x.dirs[key] {
		return &EntryError{raw, "a file where the archive has a directory"}
	}
	for d := path.Dir(key); d != "."; d = path.Dir(d) {
		if p, ok := x.seen[d]; ok && !x.dirs[d] {
			return &EntryError{raw, fmt.Sprintf("below %q, which is a file", p)}
		}
		x.dirs[d] = true
	}
	x.seen[key] = name
	if isDir {
		x.dirs[key] = true
	}
	return nil
}

// write creates name (never over an existing file) with the entry's bytes
// and checks their SHA-256 against want.
func (x *extractor) write(name string, h *tar.Header, r io.Reader, want *[32]byte) (err error) {
	if d := path.Dir(name); d != "." {
		if err := x.root.MkdirAll(d, 0o755); err != nil {
			return x.local(x.dir, "creating "+d, err)
		}
	}
	mode := os.FileMode(0o644)
	if h.Mode&0o222 == 0 {
		mode = 0o444 // the store's objects are read-only files
	}
	f, err := x.root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		if isLocal(err) {
			return x.local(x.dir, "creating "+name, err)
		}
		return &EntryError{h.Name, err.Error()}
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = x.local(x.dir, "writing "+name, cerr)
		}
	}()
	w := &fileWriter{f: f}
	sum := sha256.New()
	n, err := io.Copy(io.MultiWriter(w, sum), io.LimitReader(r, h.Size))
	if w.err != nil {
		// The file could not be written: this machine's fault.
		if isLocal(w.err) {
			return x.local(x.dir, "writing "+name, w.err)
		}
		return fmt.Errorf("writing %s: %w", name, w.err)
	}
	if err != nil {
		return err
	}
	if n != h.Size {
		return &EntryError{h.Name, fmt.Sprintf("truncated: %d of %d bytes", n, h.Size)}
	}
	if want != nil {
		if got := sum.Sum(nil); !bytes.Equal(got, want[:]) {
			return fmt.Errorf("%w: %s has SHA-256 %s, %s says %s (the file was changed, or the manifest)",
				ErrTampered, name, hex.EncodeToString(got), ManifestName, hex.EncodeToString(want[:]))
		}
	}
	return nil
}

// fileWriter keeps the error of writing the file, to tell it from one of
// reading the archive.
type fileWriter struct {
	f   *os.File
	err error
}

func (w *fileWriter) Write(p []byte) (int, error) {
	n, err := w.f.Write(p)
	if err != nil {
		w.err = err
	}
	return n, err
}

// sparseKind describes h if it is a sparse file in any of GNU tar's
// formats, else returns "". archive/tar expands those transparently into
// regular files of their declared size, so a few hundred bytes of archive
// can declare gigabytes of holes (381 bytes can declare 2 GiB).
func sparseKind(h *tar.Header) string {
	if h.Typeflag == tar.TypeGNUSparse {
		return "a sparse file (old GNU format, tar type 'S')"
	}
	var keys []string
	for k := range h.PAXRecords {
		if strings.HasPrefix(k, "GNU.sparse.") {
			keys = append(keys, k)
		}
	}
	if len(keys) > 0 {
		slices.Sort(keys)
		const shown = 6 // the records are the archive's: bound the message
		for i, k := range keys[:min(len(keys), shown)] {
			if len(k) > 40 || strings.ContainsFunc(k, func(r rune) bool { return r < ' ' || r > '~' }) {
				keys[i] = fmt.Sprintf("%.40q", k)
			}
		}
		list := strings.Join(keys[:min(len(keys), shown)], ", ")
		if len(keys) > shown {
			list += fmt.Sprintf(" and %d more", len(keys)-shown)
		}
		format := "0.0 or 0.1"
		switch major := h.PAXRecords["GNU.sparse.major"]; {
		case major == "1" && h.PAXRecords["GNU.sparse.minor"] == "0":
			format = "1.0"
		case major != "":
			format = fmt.Sprintf("of major version %.20q", major)
		}
		return fmt.Sprintf("a sparse file (GNU PAX sparse format %s: records %s)", format, list)
	}
	// GNU tar (PAX formats 0.1 and 1.0) stores a sparse file under a
	// stand-in name, which a reader that ignores the records extracts.
	for el := range strings.SplitSeq(h.Name, "/") {
		if strings.HasPrefix(el, "GNUSparseFile.") {
			return fmt.Sprintf("a sparse file's stand-in name (%.40q, which GNU tar gives a sparse file in PAX formats 0.1 and 1.0)", el)
		}
	}
	return ""
}

// compressedSize is what is left to read of r, if r tells: a regular
// file, or a reader with a Len (bytes.Reader, strings.Reader); else 0.
func compressedSize(r io.Reader) int64 {
	switch v := r.(type) {
	case *os.File:
		fi, err := v.Stat()
		if err != nil || !fi.Mode().IsRegular() {
			return 0
		}
		off, err := v.Seek(0, io.SeekCurrent)
		if err != nil {
			return 0
		}
		return max(fi.Size()-off, 0)
	case interface{ Len() int }:
		return int64(v.Len())
	}
	return 0
}

// sizeText writes n bytes for a person: "3.2 MiB (3355443 bytes)".
func sizeText(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d bytes", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 5; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB (%d bytes)", float64(n)/float64(div), "KMGTPE"[exp], n)
}

// capReader fails once more than left bytes have been read through it.
type capReader struct {
	r    io.Reader
	left int64
	over bool
}

func (c *capReader) Read(p []byte) (int, error) {
	if c.left <= 0 {
		// One more byte tells a stream of exactly the limit from a longer one.
		var b [1]byte
		if _, err := io.ReadFull(c.r, b[:]); err != nil {
			return 0, err // io.EOF: the stream was exactly the limit
		}
		c.over = true
		return 0, errors.New("decompressed size limit exceeded")
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
}
