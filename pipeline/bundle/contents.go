package bundle

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"unicode"

	"thv/artifacts"
	"thv/pipeline"
	"thv/pipeline/codeid"
)

// What a verification did with a part of a bundle (Check.Status).
const (
	// Reexecuted: the part's bytes are what this thv computed again.
	Reexecuted = "re-executed"
	// Rederived: the part's bytes are what this thv derives from parts it
	// re-executed or checked, compared byte for byte (or, for a figure
	// drawn on another CPU, within the stated tolerance).
	Rederived = "re-derived"
	// NotChecked: nothing this thv computes says whether the part is true;
	// Reason says why, and what it is.
	NotChecked = "not checked"
)

// A Check is one line of a verification's account of a bundle: a part of
// it, what the verification did with it, and how or why not. A complete
// account names every byte of the bundle.
type Check struct {
	Item   string   `json:"item"`
	Status string   `json:"status"`
	Reason string   `json:"reason"`
	Files  []string `json:"files,omitempty"` // the files Item stands for, where it names several
}

// Stated are the crate's values that nothing in a bundle determines: the
// tool's version (its VCS revision, as the writing binary recorded it) and
// the date of publication. CheckContents reads them from the crate,
// checks their form, and regenerates the crate with them; they are the
// author's word.
type Stated struct {
	Version   string
	Published string
}

// Limits on the stated values: short, printable text, a date.
const maxStatedBytes = 256

var datePattern = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}$`)

// statedSlack bounds how far a crate may be longer than the crate this
// thv writes without the stated values, before it is read: two values,
// their keys, and JSON's escapes of them.
const statedSlack = 16 << 10

// CheckContents checks that the bundle extracted in dir, whose manifest m
// Extract checked, holds exactly the files a bundle of p's lock holds —
// the manifest, the crate and its preview, the protocol file, the lock,
// results/, the store's VERSION, the objects the lock's tasks output and
// their index entries, source/ and image/thv-oci.tar, nothing else — and
// that what thv writes deterministically is, byte for byte, what this thv
// writes from the bundle's lock and store: the protocol file's canonical
// form, ro-crate-metadata.json, ro-crate-preview.html and SHA256SUMS.
// p is the bundle's project (its store the bundle's), status its
// Status; opt are the options thv bundle writes such a bundle with (its
// Tool's Name, and no Results, Source or Image: they are the bundle's).
// The contents of results/, source/, the store's objects and the image
// are for other checks: their bytes enter here through their SHA-256 only.
// It returns the values the crate states and the account of the parts it
// checked.
func CheckContents(p *pipeline.Project, status *pipeline.Report, dir string, m Manifest, opt Options) (Stated, []Check, error) {
	d, err := Describe(p, status, dir, m, opt)
	if err != nil {
		return Stated{}, nil, err
	}
	for _, f := range []struct {
		name string
		want []byte
		what string
	}{{CrateName, d.Crate, "crate"}, {PreviewName, d.Preview, "preview"}, {ManifestName, d.Manifest, "manifest"}} {
		got, err := readBounded(filepath.Join(dir, f.name), int64(len(f.want)))
		if err != nil {
			return d.Stated, nil, fmt.Errorf("%s is not the %s thv writes for this bundle: %w", f.name, f.what, err)
		}
		if !bytes.Equal(got, f.want) {
			return d.Stated, nil, fmt.Errorf("%s is not the %s thv writes for this bundle (%s)", f.name, f.what, firstDifference(got, f.want))
		}
	}
	checks := []Check{
		{Item: ManifestName, Status: Rederived, Reason: "it lists exactly the files a bundle of this lock holds, and each file's SHA-256 was recomputed"},
		{Item: opt.Protocol.Path, Status: Rederived, Reason: "the canonical form of the protocol this thv planned the lock's tasks from"},
		{Item: CrateName, Status: Rederived, Reason: "byte for byte the crate this thv writes from the lock, the store and the bundle's files, but for the two values stated below"},
		{Item: PreviewName, Status: Rederived, Reason: "byte for byte the preview this thv writes for the crate"},
		{Item: "the crate's softwareVersion", Status: NotChecked, Reason: fmt.Sprintf("the version of the thv that wrote the bundle, stated by its author: %q", d.Stated.Version)},
		{Item: "the crate's datePublished", Status: NotChecked, Reason: fmt.Sprintf("stated by the bundle's author: %q", d.Stated.Published)},
	}
	if d.ImageDigest != "" {
		checks = append(checks, Check{Item: ImagePath, Status: NotChecked, Reason: "a binary built elsewhere, never run (a forger's binary would agree with its forgery): this thv re-executed every task with its own build; its manifest digest " + d.ImageDigest + " is the crate's"})
	}
	return d.Stated, checks, nil
}

// A Description is what thv writes for the files of a bundle: its crate,
// the crate's preview and its manifest, with the values the crate states.
type Description struct {
	Crate, Preview, Manifest []byte
	Stated                   Stated
	ImageDigest              string // the image's manifest digest, "" without one
}

// Describe returns what thv writes for the bundle extracted in dir (see
// CheckContents, which compares it with the bundle's files), after
// checking that the bundle holds exactly the files of a bundle of p's lock
// and that its protocol file is in canonical form. The crate's stated
// values are read from the bundle's crate, which is read only if it is at
// most a little longer than the crate thv writes without them.
func Describe(p *pipeline.Project, status *pipeline.Report, dir string, m Manifest, opt Options) (*Description, error) {
	file := func(rel string) string { return filepath.Join(dir, filepath.FromSlash(rel)) }
	protocol, err := readBounded(file(opt.Protocol.Path), maxProtocolBytes)
	if err != nil {
		return nil, err
	}
	canonical, err := CanonicalProtocol(protocol)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", opt.Protocol.Path, err)
	}
	if !bytes.Equal(canonical, protocol) {
		return nil, fmt.Errorf("%s is not in the canonical form thv bundle writes (%s): a bundle's protocol holds no text, such as a comment, that no computation checks", opt.Protocol.Path, firstDifference(protocol, canonical))
	}
	opt.Protocol.Data = protocol

	// The files a bundle of this lock holds; results/ and source/ as the
	// bundle has them (checked against the store and the lock elsewhere).
	items := map[string]*item{}
	add := func(rel string, mode int64) error {
		sum, ok := m[rel]
		if !ok {
			return fmt.Errorf("%s is missing: a bundle of this lock holds it", rel)
		}
		fi, err := os.Lstat(file(rel))
		if err != nil {
			return err
		}
		items[rel] = &item{path: rel, size: fi.Size(), sum: sum, mode: mode}
		return nil
	}
	for _, rel := range []string{opt.Protocol.Path, opt.LockName, storeVersion} {
		if err := add(rel, 0o644); err != nil {
			return nil, err
		}
	}
	st := &storeContents{size: map[artifacts.Digest]int64{}, format: map[artifacts.Digest]string{}}
	for _, f := range storeFiles(p, status) {
		if !f.object {
			if err := add(f.path, 0o644); err != nil {
				return nil, fmt.Errorf("task %s: %w", f.task, err)
			}
			continue
		}
		if err := add(f.path, 0o444); err != nil {
			return nil, fmt.Errorf("task %s, output %s: %w", f.task, f.output, err)
		}
		st.size[f.digest] = items[f.path].size
		st.format[f.digest] = sniff(file(f.path), f.output)
		st.objects++
	}
	paths := sortedPaths(m)
	for _, rel := range paths {
		if strings.HasPrefix(rel, ResultsDir+"/") || strings.HasPrefix(rel, SourceDir+"/") {
			if err := add(rel, 0o644); err != nil {
				return nil, err
			}
		}
	}
	d := &Description{}
	if _, ok := m[ImagePath]; ok {
		if err := add(ImagePath, 0o644); err != nil {
			return nil, err
		}
		if d.ImageDigest, err = ociManifestDigest(file(ImagePath)); err != nil {
			return nil, fmt.Errorf("%s: %w", ImagePath, err)
		}
	}
	for _, rel := range paths {
		if _, ok := items[rel]; !ok && rel != CrateName && rel != PreviewName && rel != ManifestName {
			return nil, notPart(rel)
		}
	}

	// The crate and its preview, written afresh. The tool's Go version is
	// the lock's toolchain unit: this thv computes the lock's keys, so it
	// was built by that toolchain.
	opt.Tool.GoVersion = p.Lock.Code[codeid.ToolchainUnit]
	list := make([]*item, 0, len(items))
	for _, rel := range sortedPaths(items) {
		list = append(list, items[rel])
	}
	bare, _, err := newCrate(p, status, st, list, opt, d.ImageDigest).encode()
	if err != nil {
		return nil, err
	}
	crateFile := file(CrateName)
	fi, err := os.Lstat(crateFile)
	if err != nil {
		return nil, fmt.Errorf("%s is missing: %w", CrateName, err)
	}
	if limit := int64(len(bare)) + statedSlack; fi.Size() > limit {
		return nil, fmt.Errorf("%s is %d bytes, and the crate thv writes for this bundle about %d: not read; a bundle's crate is what thv writes", CrateName, fi.Size(), len(bare))
	}
	crateData, err := readBounded(crateFile, int64(len(bare))+statedSlack)
	if err != nil {
		return nil, err
	}
	if d.Stated, err = statedValues(crateData, opt.Tool.Name); err != nil {
		return nil, fmt.Errorf("%s: %w", CrateName, err)
	}
	crateData = nil
	opt.Tool.Version, opt.Published = d.Stated.Version, d.Stated.Published
	if d.Crate, d.Preview, err = newCrate(p, status, st, list, opt, d.ImageDigest).encode(); err != nil {
		return nil, err
	}
	want := Manifest{}
	for rel, it := range items {
		want[rel] = it.sum
	}
	want[CrateName], want[PreviewName] = sha256.Sum256(d.Crate), sha256.Sum256(d.Preview)
	d.Manifest = want.Encode()
	return d, nil
}

// maxProtocolBytes bounds a bundle's protocol file, as the protocol's
// loader does.
const maxProtocolBytes = 1 << 20

// notPart is the error for a file a bundle must not hold.
func notPart(rel string) error {
	if strings.HasPrefix(rel, StoreDir+"/") {
		return fmt.Errorf("%s is not part of the bundle's store: a bundle's store holds VERSION, the objects its lock's tasks output and their index entries, nothing else", rel)
	}
	return fmt.Errorf("%s is not part of a bundle: a bundle holds %s, %s, %s, its protocol file and lock, %s/, %s/, %s/ and %s, nothing else", rel, ManifestName, CrateName, PreviewName, ResultsDir, StoreDir, SourceDir, ImagePath)
}

// statedValues reads the stated values of a crate (of a tool named tool)
// and checks their form: short printable text, a date.
func statedValues(data []byte, tool string) (Stated, error) {
	var c struct {
		Graph []struct {
			ID              string `json:"@id"`
			SoftwareVersion any    `json:"softwareVersion"`
			DatePublished   any    `json:"datePublished"`
		} `json:"@graph"`
	}
	if err := json.Unmarshal(data, &c); err != nil {
		return Stated{}, fmt.Errorf("not the crate thv writes: %v", err)
	}
	var s Stated
	toolID := (&crate{opt: Options{Tool: Tool{Name: tool}}}).toolID()
	for _, e := range c.Graph {
		switch e.ID {
		case toolID:
			v, ok := e.SoftwareVersion.(string)
			if e.SoftwareVersion != nil && (!ok || !plainText(v)) {
				return Stated{}, fmt.Errorf("%s's softwareVersion %.80q is not a short line of plain text", toolID, fmt.Sprint(e.SoftwareVersion))
			}
			s.Version = v
		case "./":
			v, ok := e.DatePublished.(string)
			if e.DatePublished != nil && (!ok || !datePattern.MatchString(v)) {
				return Stated{}, fmt.Errorf("datePublished %.80q is not a date (YYYY-MM-DD)", fmt.Sprint(e.DatePublished))
			}
			s.Published = v
		}
	}
	return s, nil
}

// plainText reports whether s is a short line of printable text without
// markup.
func plainText(s string) bool {
	return len(s) <= maxStatedBytes && !strings.ContainsAny(s, "<>&\"'`") &&
		strings.IndexFunc(s, func(r rune) bool { return !unicode.IsPrint(r) || r == unicode.ReplacementChar }) < 0
}

// readBounded reads the regular file at path if it has at most limit
// bytes.
func readBounded(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	if fi.Size() > limit {
		return nil, fmt.Errorf("%s is %d bytes, more than the %d expected", filepath.Base(path), fi.Size(), limit)
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err == nil && int64(len(data)) > limit {
		err = fmt.Errorf("%s grew while it was read", path)
	}
	return data, err
}

// firstDifference describes where got first differs from want.
func firstDifference(got, want []byte) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	excerpt := func(b []byte) string {
		from, to := max(0, i-20), min(len(b), i+40)
		return fmt.Sprintf("%q", b[from:to])
	}
	if i == len(got) && i == len(want) {
		return "equal"
	}
	return fmt.Sprintf("they differ from byte %d: the bundle's has %s where thv writes %s", i, excerpt(got), excerpt(want))
}

// Limits on what ociManifestDigest reads of an image archive.
const (
	maxOCIIndex   = 64 << 10
	maxOCIEntries = 64
)

// ociManifestDigest reads the digest of the one image manifest of an
// oci-archive from its index.json, reading no other entry's bytes.
func ociManifestDigest(archive string) (string, error) {
	f, err := os.Open(archive)
	if err != nil {
		return "", err
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for n := 0; n < maxOCIEntries; n++ {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", fmt.Errorf("not an oci-archive: %v", err)
		}
		if path.Clean(h.Name) != "index.json" {
			continue
		}
		if h.Typeflag != tar.TypeReg || h.Size > maxOCIIndex {
			return "", fmt.Errorf("index.json: not a regular file of at most %d bytes", maxOCIIndex)
		}
		var index struct {
			Manifests []struct {
				Digest string `json:"digest"`
			} `json:"manifests"`
		}
		if err := json.NewDecoder(io.LimitReader(tr, maxOCIIndex)).Decode(&index); err != nil {
			return "", fmt.Errorf("index.json: %v", err)
		}
		if len(index.Manifests) != 1 || !ociDigest.MatchString(index.Manifests[0].Digest) {
			return "", errors.New("index.json: want exactly one manifest, named by its sha256 digest")
		}
		return index.Manifests[0].Digest, nil
	}
	return "", fmt.Errorf("no index.json among its first %d entries: not the oci-archive thv writes", maxOCIEntries)
}

var ociDigest = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)
