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
	"os"
	"path"
	"strings"
)

// Limits bound what Extract accepts. A zero field takes its default.
type Limits struct {
	Entries  int   // entries in the archive; default 1,000,000
	FileSize int64 // bytes of one file; default 4 GiB
	Total    int64 // bytes of the whole archive once decompressed; default 64 GiB
}

const maxManifestBytes = 256 << 20

func (l Limits) withDefaults() Limits {
	if l.Entries <= 0 {
		l.Entries = 1_000_000
	}
	if l.FileSize <= 0 {
		l.FileSize = 4 << 30
	}
	if l.Total <= 0 {
		l.Total = 64 << 30
	}
	return l
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
// streams past. Only directories and regular files are accepted, at safe
// paths (CheckPath), each once (names differing only in case count as
// the same), within the limits; the manifest must come first and list
// every file, each with its SHA-256. On any error dir is removed, and
// nothing is ever written outside it: files are created through an
// os.Root on dir, never over an existing file. It returns the manifest.
func Extract(r io.Reader, dir string, lim Limits) (m Manifest, err error) {
	lim = lim.withDefaults()
	if err := os.Mkdir(dir, 0o755); err != nil {
		if errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("%s already exists: extract a bundle into a new directory", dir)
		}
		return nil, err
	}
	defer func() {
		if err != nil {
			os.RemoveAll(dir)
		}
	}()
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	x := &extractor{root: root, lim: lim, seen: map[string]string{}, dirs: map[string]bool{}}
	return x.run(r)
}

type extractor struct {
	root     *os.Root
	lim      Limits
	manifest Manifest
	seen     map[string]string // case-folded path → path, of files and directories
	dirs     map[string]bool   // case-folded directories, given or implied
	entries  int
}

func (x *extractor) run(r io.Reader) (Manifest, error) {
	br := bufio.NewReader(r)
	gz, err := gzip.NewReader(br)
	if err != nil {
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
	if _, err := io.Copy(io.Discard, total); err != nil {
		return nil, x.readErr(total, fmt.Errorf("the compressed stream is damaged: %v", err))
	}
	if _, err := br.Peek(1); err != io.EOF {
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
	if total.over {
		return fmt.Errorf("bundle refused: larger than %d bytes once decompressed (the limit; a decompression bomb?)", x.lim.Total)
	}
	var ee *EntryError
	if errors.As(err, &ee) || errors.Is(err, ErrTampered) {
		return err
	}
	return fmt.Errorf("not a valid bundle: %v", err)
}

// entry checks one header and writes its file.
func (x *extractor) entry(h *tar.Header, tr io.Reader) error {
	x.entries++
	if x.entries > x.lim.Entries {
		return &EntryError{h.Name, fmt.Sprintf("more than %d entries in the archive (the limit)", x.lim.Entries)}
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
	if err := x.claim(name, isDir, h.Name); err != nil {
		return err
	}
	if isDir {
		return x.root.MkdirAll(name, 0o755)
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
			return err
		}
	}
	mode := os.FileMode(0o644)
	if h.Mode&0o222 == 0 {
		mode = 0o444 // the store's objects are read-only files
	}
	f, err := x.root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return &EntryError{h.Name, err.Error()}
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	sum := sha256.New()
	n, err := io.Copy(io.MultiWriter(f, sum), io.LimitReader(r, h.Size))
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
