package bundle

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"time"

	"thv/artifacts"
	"thv/pipeline"
	"thv/pipeline/tempdir"
)

// Options say what a bundle holds besides the project's store and lock.
type Options struct {
	// Protocol is the protocol file the project was planned from, e.g.
	// params.yaml; the bundle holds its canonical form (CanonicalProtocol).
	Protocol File
	Profile  string // the protocol's profile
	LockName string // the lock's name in the bundle (the one the protocol's name implies)
	// Results are the exported results (tables, figures), put under
	// results/; nil: none.
	Results fs.FS
	// Drawn names the files of Results that are not copies of a store
	// object but drawn from one when the results were exported (a
	// figure's PNG from its curves): path in Results → that object. The
	// crate says so.
	Drawn map[string]artifacts.Digest
	// Source is the module's source, put under source/; nil: none.
	Source fs.FS
	// Vendor is the vendored modules that let Source build offline (see
	// Vendor), put under source/vendor/; nil: none.
	Vendor fs.FS
	// Image writes the OCI image of the running binary as an oci-archive
	// tarball and returns its manifest digest ("sha256:…"); nil: the
	// bundle holds no image, and its crate says so.
	Image func(w io.Writer) (digest string, err error)
	Tool  Tool
	// Published is the crate's datePublished (ISO 8601); "" omits it.
	// It must not be the clock's: the same project gives the same bytes.
	Published string
	// Reproduce is the command that re-runs the protocol in the extracted
	// bundle, shown in the crate and its preview.
	Reproduce string
	Progress  func(done, total int) // called as files are written
	// Verify is the command that checks the bundle, with <this archive>
	// standing for its file; Rebuild, the one that rebuilds the tool from
	// source/ in the extracted bundle. The crate and its preview show both
	// ("": not).
	Verify  string
	Rebuild string
	// Report is the page of Results a reader opens first (its path in
	// Results, e.g. index.html), linked from the crate's preview; "": none.
	Report string
	// Judged names the protocol the results are of, in words ("the
	// paper's protocol", or the values that differ from it), shown by
	// the crate's preview.
	Judged string
}

// File is a file given whole.
type File struct {
	Path string
	Data []byte
}

// Tool describes the program that made the bundle and ran the tasks.
type Tool struct {
	Name, Version, GoVersion string
}

// Summary describes a written bundle.
type Summary struct {
	Path        string
	Bytes       int64
	SHA256      [32]byte // of the bundle file
	Files       int      // files in the bundle
	Tasks       int
	Objects     int    // store objects
	ImageDigest string // "" without an image
}

// epoch is every entry's modification time: a bundle holds no clock.
var epoch = time.Unix(0, 0).UTC()

// item is one file of the bundle: its bytes in data, or read by open.
type item struct {
	path string
	size int64
	sum  [32]byte
	mode int64
	data []byte
	open func() ([]byte, error)
}

// Write writes the bundle of project p to out, atomically (a temp file in
// out's directory, renamed when complete). Every task of p's plan must be
// up to date in its lock and store: a bundle holds a lock that describes
// its store exactly, every output of every task and each task's index
// entry. It holds no seal of the lock (pipeline/seal.go): a seal is this
// machine's record of its own check, and a bundle's reader checks for
// itself.
func Write(ctx context.Context, p *pipeline.Project, out string, opt Options) (*Summary, error) {
	unlock, err := p.Store.LockShared() // a gc must not remove what is being bundled
	if err != nil {
		return nil, err
	}
	defer unlock()
	status, err := p.Status(ctx)
	if err != nil {
		return nil, err
	}
	if err := Current(p, status); err != nil {
		return nil, err
	}
	lockBytes, err := os.ReadFile(p.LockPath)
	if err != nil {
		return nil, err
	}
	// Working files (a copy of the lock, the image) go to a temp
	// directory that the next thv sweeps if this one is killed.
	work, err := tempdir.New("thv-bundle-")
	if err != nil {
		return nil, err
	}
	defer work.Remove()
	if err := sameLock(p, lockBytes, work.Path()); err != nil {
		return nil, err
	}
	protocol, err := CanonicalProtocol(opt.Protocol.Data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", opt.Protocol.Path, err)
	}
	opt.Protocol.Data = protocol
	b := &builder{}
	for _, f := range []File{opt.Protocol, {opt.LockName, lockBytes}} {
		if err := b.addData(f.Path, f.Data, 0o644); err != nil {
			return nil, err
		}
	}
	for _, sub := range []struct {
		fsys fs.FS
		dir  string
	}{{opt.Results, ResultsDir}, {opt.Source, SourceDir}, {opt.Vendor, SourceDir + "/" + VendorDir}} {
		if err := b.addFS(sub.fsys, sub.dir); err != nil {
			return nil, err
		}
	}
	st, err := b.addStore(p, status)
	if err != nil {
		return nil, err
	}
	var imageDigest string
	if opt.Image != nil {
		tmp, err := os.Create(filepath.Join(work.Path(), "image.tar"))
		if err != nil {
			return nil, err
		}
		defer os.Remove(tmp.Name())
		defer tmp.Close()
		h := sha256.New()
		if imageDigest, err = opt.Image(io.MultiWriter(tmp, h)); err != nil {
			return nil, fmt.Errorf("building the image: %w", err)
		}
		size, err := tmp.Seek(0, io.SeekCurrent)
		if err != nil {
			return nil, err
		}
		it := &item{path: ImagePath, size: size, mode: 0o644, open: func() ([]byte, error) { return os.ReadFile(tmp.Name()) }}
		copy(it.sum[:], h.Sum(nil))
		b.items = append(b.items, it)
	}
	crate, preview, err := newCrate(p, status, st, b.items, opt, imageDigest).encode()
	if err != nil {
		return nil, err
	}
	if err := b.addData(CrateName, crate, 0o644); err != nil {
		return nil, err
	}
	if err := b.addData(PreviewName, preview, 0o644); err != nil {
		return nil, err
	}
	m := Manifest{}
	for _, it := range b.items {
		if _, dup := m[it.path]; dup {
			return nil, fmt.Errorf("bundle: %s given twice", it.path)
		}
		m[it.path] = it.sum
	}
	if err := b.addData(ManifestName, m.Encode(), 0o644); err != nil {
		return nil, err
	}
	sum, size, err := b.writeArchive(ctx, out, opt.Progress)
	if err != nil {
		return nil, err
	}
	return &Summary{Path: out, Bytes: size, SHA256: sum, Files: len(b.items), Tasks: len(status.Results), Objects: st.objects, ImageDigest: imageDigest}, nil
}

// sameLock checks that the lock file's bytes are the lock p read (no repro
// rewrote it since): the bundle's store is chosen from p.Lock.
func sameLock(p *pipeline.Project, data []byte, dir string) error {
	tmp, err := os.Create(filepath.Join(dir, filepath.Base(p.LockPath)))
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(data)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	l, err := pipeline.ReadLock(tmp.Name())
	if err != nil {
		return fmt.Errorf("%s: %w", p.LockPath, err)
	}
	changed := len(l.Tasks) != len(p.Lock.Tasks) || l.Profile != p.Lock.Profile
	for i := 0; !changed && i < len(l.Tasks); i++ {
		a, b := &l.Tasks[i], &p.Lock.Tasks[i]
		changed = a.ID != b.ID || a.Key != b.Key || !a.Outputs.Equal(b.Outputs)
	}
	if changed {
		return fmt.Errorf("%s changed while the bundle was being made: run thv bundle again", p.LockPath)
	}
	return nil
}

// Current checks that the lock describes every task of the plan as up to
// date in the store, as a bundle needs; status is p.Status's report.
func Current(p *pipeline.Project, status *pipeline.Report) error {
	for _, r := range status.Results {
		if r.Status != pipeline.Cached {
			reason := ""
			if r.Reason != "" {
				reason = ": " + r.Reason
			}
			return fmt.Errorf("task %s is not up to date (%s%s): a bundle holds a lock that describes its store; run thv repro first, then bundle", r.Task.ID, r.Status, reason)
		}
		if _, ok := p.Lock.Record(r.Task.ID); !ok {
			return fmt.Errorf("task %s is not in %s: run thv repro first, then bundle", r.Task.ID, p.LockPath)
		}
	}
	if len(p.Lock.Tasks) != len(status.Results) {
		return fmt.Errorf("%s records %d tasks, the plan has %d: run thv repro first, then bundle", p.LockPath, len(p.Lock.Tasks), len(status.Results))
	}
	return nil
}

type builder struct {
	items []*item
}

func (b *builder) addData(p string, data []byte, mode int64) error {
	if err := CheckPath(p); err != nil {
		return fmt.Errorf("bundle: %w", err)
	}
	b.items = append(b.items, &item{path: p, size: int64(len(data)), sum: sha256.Sum256(data), mode: mode, data: data})
	return nil
}

// addFS adds the regular files of fsys below dir.
func (b *builder) addFS(fsys fs.FS, dir string) error {
	if fsys == nil {
		return nil
	}
	return fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !d.Type().IsRegular() {
			return err
		}
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		return b.addData(path.Join(dir, p), data, 0o644)
	})
}

// storeContents is what addStore put in the bundle's store.
type storeContents struct {
	objects int
	size    map[artifacts.Digest]int64
	format  map[artifacts.Digest]string // media type, from the first bytes
}

// storeFile is one file of a bundle's store: an object a task of the lock
// output (its first output of that digest, in plan order) or a task's
// index entry.
type storeFile struct {
	path   string // in the bundle
	task   string
	object bool
	digest artifacts.Digest // an object's
	output string           // an object's output name
	key    artifacts.Key    // an index entry's
}

// storeVersion is the store's VERSION file in a bundle.
const storeVersion = StoreDir + "/VERSION"

// storeFiles lists the files of the store of a bundle of p's lock, VERSION
// aside: per task of the plan, each output object not listed before, then
// the task's index entry. Writing a bundle and checking one list the same.
func storeFiles(p *pipeline.Project, status *pipeline.Report) []storeFile {
	var out []storeFile
	seen := map[artifacts.Digest]bool{}
	for _, rec := range bundledRecords(p, status) {
		for _, o := range rec.Outputs { // sorted by name, as an index entry's
			if seen[o.Digest] {
				continue
			}
			seen[o.Digest] = true
			out = append(out, storeFile{path: objectBundlePath(o.Digest), task: rec.ID, object: true, digest: o.Digest, output: o.Name})
		}
		h := rec.Key.Hex()
		out = append(out, storeFile{path: StoreDir + "/index/" + h[:2] + "/" + h + ".json", task: rec.ID, key: rec.Key})
	}
	return out
}

// bundledRecords is the lock's records a bundle of p's lock describes (its
// store's files, its crate): the records of status's tasks, in its order
// (a task the lock does not record is skipped: Current refuses such a
// lock before a bundle is written). If a dispute between the lock and the
// store's index left tasks waiting, an expansion downstream of it did not
// run and the tasks it adds (the runs a figure draws) are not in status:
// the lock's other records follow then, in its order. Such a bundle is
// rejected for the dispute, once its files are found to be its lock's.
func bundledRecords(p *pipeline.Project, status *pipeline.Report) []*pipeline.Record {
	var out []*pipeline.Record
	in := map[string]bool{}
	for _, r := range status.Results {
		if rec, ok := p.Lock.Record(r.Task.ID); ok {
			out = append(out, rec)
			in[rec.ID] = true
		}
	}
	if len(status.Disputes) > 0 {
		for i := range p.Lock.Tasks {
			if rec := &p.Lock.Tasks[i]; !in[rec.ID] {
				out = append(out, rec)
			}
		}
	}
	return out
}

// objectBundlePath is the bundle path of a store object: the store in a
// bundle is of loose files.
func objectBundlePath(d artifacts.Digest) string {
	h := d.Hex()
	return StoreDir + "/objects/" + h[:2] + "/" + h
}

// addStore adds a store of loose files (the layout any thv reads, and
// DuckDB, pandas or Arrow read file by file), whatever the layout of the
// project's store: its VERSION (artifacts.LooseLayoutVersion), every
// output object of the lock's tasks (read through Store.Get, which
// verifies it, wherever it lies) and each task's index entry (its exact
// bytes, artifacts.EncodeEntry), after checking that each entry is the
// lock's record.
func (b *builder) addStore(p *pipeline.Project, status *pipeline.Report) (*storeContents, error) {
	st := &storeContents{size: map[artifacts.Digest]int64{}, format: map[artifacts.Digest]string{}}
	if err := b.addData(storeVersion, []byte(artifacts.LooseLayoutVersion+"\n"), 0o644); err != nil {
		return nil, err
	}
	entries := map[string]artifacts.Entry{}
	for _, r := range status.Results {
		rec, _ := p.Lock.Record(r.Task.ID)
		e, ok, err := p.Store.GetEntry(rec.Key)
		if err != nil {
			return nil, fmt.Errorf("task %s: %w", r.Task.ID, err)
		}
		if !ok {
			return nil, fmt.Errorf("task %s: the store has no index entry for its key %s: run thv repro first, then bundle", r.Task.ID, rec.Key)
		}
		if len(e.Outputs) != len(rec.Outputs) {
			return nil, fmt.Errorf("task %s: the store's index entry and the lock list different outputs: run thv repro first, then bundle", r.Task.ID)
		}
		for _, o := range e.Outputs {
			if d, _ := rec.Outputs.Get(o.Name); d != o.Digest {
				return nil, fmt.Errorf("task %s: output %s: the lock records %s, the store's index %s: run thv repro first, then bundle", r.Task.ID, o.Name, d, o.Digest)
			}
		}
		entries[rec.ID] = e
	}
	for _, f := range storeFiles(p, status) {
		if !f.object {
			data, err := artifacts.EncodeEntry(entries[f.task])
			if err != nil {
				return nil, err
			}
			if err := b.addData(f.path, data, 0o644); err != nil {
				return nil, err
			}
			continue
		}
		o, _ := entries[f.task].Output(f.output)
		st.size[f.digest] = o.Size
		st.format[f.digest] = sniffObject(p.Store, f.digest, f.output)
		d := f.digest
		b.items = append(b.items, &item{
			path: f.path, size: o.Size, sum: d, mode: 0o444,
			open: func() ([]byte, error) { return p.Store.Get(d) },
		})
		st.objects++
	}
	return st, nil
}

// sniffObject is sniff of object d of store s: its loose file's first
// bytes, or a packed object's bytes (objects under a megabyte).
func sniffObject(s *artifacts.Store, d artifacts.Digest, name string) string {
	if loc, ok := s.Locate(d); ok && loc.Packed {
		data, _ := s.Get(d)
		return sniffHead(data, name)
	}
	return sniff(s.ObjectPath(d), name)
}

// sniff names the media type of an object from its first bytes (or, for
// text, its output name).
func sniff(file, name string) string {
	var head [8]byte
	n := 0
	if f, err := os.Open(file); err == nil {
		n, _ = io.ReadFull(f, head[:])
		f.Close()
	}
	return sniffHead(head[:n], name)
}

// sniffHead is sniff of an object that begins with head.
func sniffHead(head []byte, name string) string {
	switch {
	case bytes.HasPrefix(head[:], []byte("PAR1")):
		return "application/vnd.apache.parquet"
	case bytes.HasPrefix(head[:], []byte("\x89PNG\r\n\x1a\n")):
		return "image/png"
	case bytes.HasPrefix(head[:], []byte("%PDF")):
		return "application/pdf"
	}
	return mediaTypeOf(name)
}

func mediaTypeOf(name string) string {
	switch path.Ext(name) {
	case ".tex":
		return "text/x-tex"
	case ".md":
		return "text/markdown"
	case ".html":
		return "text/html"
	case ".yaml", ".yml":
		return "application/yaml"
	case ".json", ".lock":
		return "application/json"
	case ".png":
		return "image/png"
	case ".pdf":
		return "application/pdf"
	case ".tar":
		return "application/x-tar"
	}
	return "application/octet-stream"
}

// writeArchive writes the items, the manifest and the crate first and the
// rest sorted by path, to out, atomically (artifacts.WriteFileAtomicFunc).
// It returns the archive's SHA-256 and size.
func (b *builder) writeArchive(ctx context.Context, out string, progress func(done, total int)) (sum [32]byte, size int64, err error) {
	rank := func(p string) int {
		if i := slices.Index(metaFirst, p); i >= 0 {
			return i
		}
		return len(metaFirst)
	}
	slices.SortFunc(b.items, func(x, y *item) int {
		if rx, ry := rank(x.path), rank(y.path); rx != ry {
			return rx - ry
		}
		switch {
		case x.path < y.path:
			return -1
		case x.path > y.path:
			return 1
		}
		return 0
	})
	// A killed writer's temp file is removed by the next bundle to out.
	artifacts.RemoveAbandonedTemps(filepath.Dir(out), filepath.Base(out))
	var counted *countWriter
	h := sha256.New()
	err = artifacts.WriteFileAtomicFunc(out, func(w io.Writer) error {
		h.Reset()
		counted = &countWriter{w: io.MultiWriter(w, h)}
		gz, err := gzip.NewWriterLevel(counted, gzip.DefaultCompression)
		if err != nil {
			return err
		}
		tw := tar.NewWriter(gz)
		for i, it := range b.items {
			if err := ctx.Err(); err != nil {
				return err
			}
			data := it.data
			if data == nil && it.open != nil {
				if data, err = it.open(); err != nil {
					return fmt.Errorf("bundle: %s: %w", it.path, err)
				}
				if int64(len(data)) != it.size || sha256.Sum256(data) != it.sum {
					return fmt.Errorf("bundle: %s changed while the bundle was being made", it.path)
				}
			}
			hdr := &tar.Header{Typeflag: tar.TypeReg, Name: it.path, Size: it.size, Mode: it.mode, ModTime: epoch}
			if err := tw.WriteHeader(hdr); err != nil {
				return err
			}
			if _, err := tw.Write(data); err != nil {
				return err
			}
			if progress != nil {
				progress(i+1, len(b.items))
			}
		}
		if err := tw.Close(); err != nil {
			return err
		}
		return gz.Close()
	})
	if err != nil {
		return sum, 0, err
	}
	copy(sum[:], h.Sum(nil))
	return sum, counted.n, nil
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
