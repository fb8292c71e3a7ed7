package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"thv/artifacts/table"
	"thv/internal/testenv"
	"thv/pipeline/bundle"
)

// tinyBundle is the bundle of the tiny protocol without vendored modules
// (the forgeries of other parts rewrite it whole, many times), made once
// per test process by the binary bin, in the binary's temp directory.
func tinyBundle(t *testing.T) (bin, path string) {
	t.Helper()
	bin = buildThv(t, moduleRoot(t))
	tinyOnce.Do(func() {
		tinyPath = filepath.Join(filepath.Dir(bin), "tiny.tar.gz")
		thv(t, bin, tinyProject(t, bin), "bundle", "--no-image", "--no-vendor", "-o", tinyPath)
	})
	if tinyPath == "" {
		t.Fatal("the tiny bundle could not be made")
	}
	return bin, tinyPath
}

// vendoredTinyBundle is the tiny protocol's bundle as thv bundle writes it
// by default: source/vendor/ holds the modules.
func vendoredTinyBundle(t *testing.T) (bin, path string) {
	t.Helper()
	bin = buildThv(t, moduleRoot(t))
	vendoredOnce.Do(func() {
		vendoredPath = filepath.Join(filepath.Dir(bin), "tiny-vendored.tar.gz")
		thv(t, bin, tinyProject(t, bin), "bundle", "--no-image", "-o", vendoredPath)
	})
	if vendoredPath == "" {
		t.Fatal("the tiny bundle could not be made")
	}
	return bin, vendoredPath
}

// tinyProject is the tiny protocol's project, reproduced once per test
// process by bin.
func tinyProject(t *testing.T, bin string) string {
	t.Helper()
	dir := filepath.Join(filepath.Dir(bin), "tiny-project")
	projectOnce.Do(func() {
		os.Mkdir(dir, 0o755)
		thvRepro(t, bin, dir)
	})
	return dir
}

var (
	projectOnce, tinyOnce, vendoredOnce sync.Once
	tinyPath, vendoredPath              string
)

// run runs bin in dir and returns its combined output and error.
func run(bin, dir string, args ...string) (string, error) {
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestBundleRoundTrip: the tiny project's bundle, made twice, has the
// same bytes; in a fresh directory verify-bundle --all passes, every task
// re-executed identical; the extracted bundle is a project that thv
// verify and sha256sum -c accept, and its store holds no lock seal.
func TestBundleRoundTrip(t *testing.T) {
	bin, path := vendoredTinyBundle(t)
	project := tinyProject(t, bin)
	again := filepath.Join(t.TempDir(), "again.tar.gz")
	thv(t, bin, project, "bundle", "--no-image", "-o", again)
	a, _ := os.ReadFile(path)
	b, _ := os.ReadFile(again)
	if !bytes.Equal(a, b) {
		t.Fatal("the same project bundled twice gave different bytes")
	}

	fresh := t.TempDir()
	out, err := run(bin, fresh, "verify-bundle", path, "--all")
	if err != nil || !strings.Contains(out, "bundle verified") {
		t.Fatalf("verify-bundle --all: %v\n%s", err, out)
	}
	// Every task of the lock: the plan's and the ones expansion added.
	lockBytes, _ := os.ReadFile(filepath.Join(project, tinyLock))
	records := strings.Count(string(lockBytes), "\n"+`{"id":`) // one task per line
	want := fmt.Sprintf("all %d %d %d 0 0", records, records, records)
	if !strings.Contains(strings.Join(strings.Fields(out), " "), want) {
		t.Fatalf("verify-bundle --all: no line %q\n%s", want, out)
	}
	if entries, _ := os.ReadDir(fresh); len(entries) != 0 {
		t.Fatalf("verify-bundle left %s in the working directory", entries[0].Name())
	}

	dir := filepath.Join(t.TempDir(), "x")
	if out, err := run(bin, fresh, "verify-bundle", path, "--sample", "5", "--dir", dir); exitCode(err) != exitSample {
		t.Fatalf("verify-bundle --dir: %v\n%s", err, out)
	}
	for _, f := range []string{"tiny.yaml", "thv-tiny.lock", "SHA256SUMS", "ro-crate-metadata.json", "ro-crate-preview.html",
		"results/tables/all.tex", "results/index.html", "store/VERSION", "source/go.mod", "source/pipeline/bundle/extract.go", "source/cmd/thv/main.go", "source/vendor/modules.txt"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("the bundle has no %s", f)
		}
	}
	if preview := must(os.ReadFile(filepath.Join(dir, "ro-crate-preview.html"))); !bytes.Contains(preview, []byte(`<a href="results/index.html">`)) {
		t.Error("the crate's preview does not link results/index.html")
	}
	// The figures' PNGs are no store objects: the crate bases each on the
	// curves it is drawn from.
	var crate struct {
		Graph []map[string]any `json:"@graph"`
	}
	if err := json.Unmarshal(must(os.ReadFile(filepath.Join(dir, "ro-crate-metadata.json"))), &crate); err != nil {
		t.Fatal(err)
	}
	pngs := 0
	for _, e := range crate.Graph {
		if id, _ := e["@id"].(string); strings.HasPrefix(id, "results/") && strings.HasSuffix(id, ".png") {
			pngs++
			based, _ := e["isBasedOn"].(map[string]any)
			desc, _ := e["description"].(string)
			if based == nil || !strings.HasPrefix(desc, "drawn from output figures/") || !strings.Contains(desc, ".curves.parquet") {
				t.Errorf("crate entity %s: isBasedOn %v, description %q", id, e["isBasedOn"], desc)
			}
		}
	}
	if pngs != 2 {
		t.Errorf("the crate describes %d PNGs of results/, want 2", pngs)
	}
	if lock, _ := os.ReadFile(filepath.Join(project, tinyLock)); !bytes.Equal(lock, must(os.ReadFile(filepath.Join(dir, "thv-tiny.lock")))) {
		t.Error("the bundle's lock is not the project's")
	}
	if out, err := run(bin, dir, "verify", "--params", "tiny.yaml", "--store", "store", "--sample", "10"); exitCode(err) != exitSample || !strings.Contains(out, "every output identical") {
		t.Fatalf("thv verify in the extracted bundle: %v\n%s", err, out)
	}
	sha, err := exec.LookPath("sha256sum")
	if err != nil {
		t.Fatal("sha256sum (coreutils) not found")
	}
	if out, err := run(sha, dir, "-c", "--quiet", "SHA256SUMS"); err != nil {
		t.Fatalf("sha256sum -c: %v\n%s", err, out)
	}
	seals := 0
	filepath.Walk(filepath.Join(dir, "store", "index"), func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() && strings.Contains(string(must(os.ReadFile(p))), `"kind": "lock-seal"`) {
			seals++
		}
		return nil
	})
	if seals != 0 {
		t.Errorf("the bundle's store holds %d lock seals: a bundle must not vouch for itself", seals)
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

// tarEntry is one entry of a bundle read back for tampering.
type tarEntry struct {
	hdr  tar.Header
	data []byte
}

func readBundle(t *testing.T, path string) []tarEntry {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	var es []tarEntry
	for {
		h, err := tr.Next()
		if err != nil {
			break
		}
		var b bytes.Buffer
		b.ReadFrom(tr)
		es = append(es, tarEntry{*h, b.Bytes()})
	}
	return es
}

func writeBundle(t *testing.T, path string, es []tarEntry) {
	t.Helper()
	var buf bytes.Buffer
	gz, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed) // forgeries are many, and large with source/vendor/
	tw := tar.NewWriter(gz)
	for _, e := range es {
		h := e.hdr
		h.Size = int64(len(e.data))
		if err := tw.WriteHeader(&h); err != nil {
			t.Fatal(err)
		}
		tw.Write(e.data)
	}
	tw.Close()
	gz.Close()
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// replaceSum rewrites the manifest's digest of name for data; with crate,
// the crate's too, and then the manifest's digest of the crate: a
// consistent forgery of everything but the store's own names.
func replaceSum(es []tarEntry, name string, data []byte, crate bool) {
	sum := sha256.Sum256(data)
	old := oldSum(es, name)
	if crate {
		for i := range es {
			if es[i].hdr.Name == bundle.CrateName {
				edited := bytes.ReplaceAll(es[i].data, []byte(`"sha256":"`+old+`"`), []byte(`"sha256":"`+hex.EncodeToString(sum[:])+`"`))
				replaceSum(es, bundle.CrateName, edited, false)
				es[i].data = edited
			}
		}
	}
	for i := range es {
		if es[i].hdr.Name == bundle.ManifestName {
			es[i].data = bytes.ReplaceAll(es[i].data, []byte(old+"  "+name+"\n"), []byte(hex.EncodeToString(sum[:])+"  "+name+"\n"))
		}
	}
}

// editEntry edits the bundle's file name, and reseals the bundle.
func editEntry(t *testing.T, es []tarEntry, name string, edit func([]byte) []byte) []tarEntry {
	t.Helper()
	for i, e := range es {
		if e.hdr.Name == name {
			data := edit(bytes.Clone(e.data))
			if bytes.Equal(data, e.data) {
				t.Fatalf("the edit of %s changed nothing", name)
			}
			es[i].data = data
			return reseal(t, es)
		}
	}
	t.Fatalf("no %s in the bundle", name)
	return nil
}

func oldSum(es []tarEntry, name string) string {
	for _, e := range es {
		if e.hdr.Name == name {
			s := sha256.Sum256(e.data)
			return hex.EncodeToString(s[:])
		}
	}
	return "none"
}

// TestVerifyBundleRejectsTampering: one byte of one artifact changed, a
// file added, SHA256SUMS edited: each bundle is rejected, naming the
// file. An artifact changed together with its manifest line and crate
// digest is caught by the store check, naming the task.
func TestVerifyBundleRejectsTampering(t *testing.T) {
	bin, path := tinyBundle(t)
	object := func(es []tarEntry) int {
		for i, e := range es {
			if strings.HasPrefix(e.hdr.Name, "store/objects/") {
				return i
			}
		}
		t.Fatal("no store object in the bundle")
		return -1
	}
	for _, tc := range []struct {
		name   string
		tamper func(es []tarEntry) ([]tarEntry, string)
		want   string // %s: the name tamper returns
	}{
		{"artifact byte", func(es []tarEntry) ([]tarEntry, string) {
			i := object(es)
			es[i].data = bytes.Clone(es[i].data)
			es[i].data[len(es[i].data)/2] ^= 1
			return es, es[i].hdr.Name
		}, "rejected: the bundle does not match its SHA256SUMS: %s has SHA-256"},
		{"file added", func(es []tarEntry) ([]tarEntry, string) {
			extra := tarEntry{tar.Header{Typeflag: tar.TypeReg, Name: "results/tables/extra.tex", Mode: 0o644}, []byte("\\relax\n")}
			return append(es, extra), extra.hdr.Name
		}, "rejected: the bundle does not match its SHA256SUMS: %s is not listed in SHA256SUMS"},
		{"SHA256SUMS edited", func(es []tarEntry) ([]tarEntry, string) {
			replaceSum(es, "results/tables/all.tex", []byte("other"), false)
			return es, "results/tables/all.tex"
		}, "rejected: the bundle does not match its SHA256SUMS: %s has SHA-256"},
		{"PNG and its digests", func(es []tarEntry) ([]tarEntry, string) {
			// A figure's PNG is drawn at export, no store object: its
			// stamp names the curves and hashes its image data.
			for i, e := range es {
				if e.hdr.Name == "results/figures/d2.png" {
					data := bytes.Clone(e.data)
					data[bytes.Index(data, []byte("IDAT"))+100] ^= 1
					es[i].data = data
					return reseal(t, es), "results/figures/d2.png"
				}
			}
			t.Fatal("no results/figures/d2.png in the bundle")
			return nil, ""
		}, "rejected: %s is not the drawing of d2.curves.parquet sha256:"},
		{"page and its digests", func(es []tarEntry) ([]tarEntry, string) {
			// results/index.html: every byte but its run block is the
			// stored outputs' page; a number edited outside it is caught.
			return editEntry(t, es, "results/index.html", func(b []byte) []byte {
				i := bytes.Index(b, []byte(`<td class="n">`)) + len(`<td class="n">`)
				b[i] = '0' + (b[i]-'0'+1)%10
				return b
			}), "results/index.html"
		}, "rejected: results/index.html: it is not the page the stored outputs give (outside its run block)"},
		{"page's run block", func(es []tarEntry) ([]tarEntry, string) {
			// The run block is unchecked text, but only text: markup in
			// it (a script, a link) is refused.
			return editEntry(t, es, "results/index.html", func(b []byte) []byte {
				return bytes.Replace(b, []byte(`<th scope="row">executor</th><td>`), []byte(`<th scope="row">executor</th><td><script>alert(1)</script>`), 1)
			}), "results/index.html"
		}, "rejected: results/index.html: the run block's executor is not plain text"},
		{"artifact and its digests", func(es []tarEntry) ([]tarEntry, string) {
			i := object(es)
			data := bytes.Clone(es[i].data)
			data[len(data)/2] ^= 1
			es[i].data = data
			return reseal(t, es), filepath.Base(es[i].hdr.Name)
		}, "rejected: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			es, name := tc.tamper(readBundle(t, path))
			bad := filepath.Join(t.TempDir(), "bad.tar.gz")
			writeBundle(t, bad, es)
			parent := t.TempDir()
			out, err := run(bin, parent, "verify-bundle", bad, "--all", "--dir", filepath.Join(parent, "x"))
			want := strings.ReplaceAll(tc.want, "%s", name)
			// (A damaged object the page's export reads first is
			// rejected there, named: below.)
			firstByExport := tc.name == "artifact and its digests" && strings.Contains(out, "rejected: results/index.html") && strings.Contains(out, "corrupt object")
			if err == nil || !strings.Contains(out, want) && !firstByExport {
				t.Fatalf("verify-bundle: %v, want %q in\n%s", err, want, out)
			}
			// Found by the store check, or first by the page's export,
			// which reads the runs' trajectories (its regret figure):
			// either names the object.
			if tc.name == "artifact and its digests" && (!strings.Contains(out, name) || !strings.Contains(out, "its store failed the check") && !strings.Contains(out, "corrupt object")) {
				t.Fatalf("the store check does not name the object %s:\n%s", name, out)
			}
			if tc.name != "artifact and its digests" && tc.name != "PNG and its digests" && !strings.HasPrefix(tc.name, "page") {
				if entries, _ := os.ReadDir(parent); len(entries) != 0 {
					t.Fatalf("a rejected bundle left %s", entries[0].Name())
				}
			}
		})
	}
}

// TestVerifyBundleRefusesHostileArchives: hand-made archives with ../x,
// an absolute path, a symlink, a hard link, a device, a duplicate name
// and an oversized entry are refused, naming the entry, and nothing
// appears outside the target directory (nor in it: it is removed).
func TestVerifyBundleRefusesHostileArchives(t *testing.T) {
	bin := buildThv(t, moduleRoot(t))
	reg := func(name, data string) tarEntry {
		return tarEntry{tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644}, []byte(data)}
	}
	manifest := func(es ...tarEntry) []tarEntry {
		// It lists the first file, "ok": what is refused is the entry
		// itself, not a gap in the manifest.
		s := sha256.Sum256(es[0].data)
		m := fmt.Sprintf("%x  %s\n", s, es[0].hdr.Name)
		return append([]tarEntry{reg(bundle.ManifestName, m)}, es...)
	}
	special := func(name string, typ byte, link string) tarEntry {
		return tarEntry{tar.Header{Typeflag: typ, Name: name, Linkname: link, Mode: 0o644}, nil}
	}
	for _, tc := range []struct {
		name    string
		entries []tarEntry
		want    string
	}{
		{"dotdot", manifest(reg("ok", "1"), reg("../x", "escape")), `bundle entry "../x" refused: "../x": leaves the bundle directory (..)`},
		{"absolute", manifest(reg("ok", "1"), reg("/tmp/thv-bundle-abs", "escape")), `bundle entry "/tmp/thv-bundle-abs" refused: "/tmp/thv-bundle-abs": an absolute path`},
		{"symlink", manifest(reg("ok", "1"), special("link", tar.TypeSymlink, ".."), reg("link/x", "escape")), `bundle entry "link" refused: a symbolic link (to "..")`},
		{"hard link", manifest(reg("ok", "1"), special("hard", tar.TypeLink, "/etc/passwd")), `bundle entry "hard" refused: a hard link (to "/etc/passwd")`},
		{"device", manifest(reg("ok", "1"), special("null", tar.TypeChar, "")), `bundle entry "null" refused: a device file`},
		{"duplicate", manifest(reg("ok", "1"), reg("ok", "2")), `bundle entry "ok" refused: a duplicate name`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := t.TempDir()
			evil := filepath.Join(t.TempDir(), "evil.tar.gz")
			writeBundle(t, evil, tc.entries)
			out, err := run(bin, base, "verify-bundle", evil, "--dir", filepath.Join(base, "target"))
			if err == nil || !strings.Contains(out, tc.want) {
				t.Fatalf("%v, want %q in\n%s", err, tc.want, out)
			}
			assertEmpty(t, base)
		})
	}
	t.Run("oversized", func(t *testing.T) {
		// A header declaring 5 TiB: refused before a byte is read.
		var buf bytes.Buffer
		gz := gzip.NewWriter(&buf)
		tw := tar.NewWriter(gz)
		tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "big", Size: 5 << 40, Mode: 0o644})
		tw.Write(make([]byte, 4096))
		tw.Flush()
		gz.Close()
		evil := filepath.Join(t.TempDir(), "big.tar.gz")
		os.WriteFile(evil, buf.Bytes(), 0o644)
		base := t.TempDir()
		out, err := run(bin, base, "verify-bundle", evil, "--dir", filepath.Join(base, "target"))
		if want := `bundle entry "big" refused: 5497558138880 bytes, more than the limit`; err == nil || !strings.Contains(out, want) {
			t.Fatalf("%v, want %q in\n%s", err, want, out)
		}
		assertEmpty(t, base)
	})
	if _, err := os.Stat("/tmp/thv-bundle-abs"); err == nil {
		t.Error("an absolute entry was written to /tmp")
	}
}

// assertEmpty fails unless dir holds nothing, and nothing new appeared
// beside it.
func assertEmpty(t *testing.T, dir string) {
	t.Helper()
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("a refused archive left %s in %s", entries[0].Name(), dir)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(dir), "x")); err == nil {
		t.Errorf("a refused archive wrote %s", filepath.Join(filepath.Dir(dir), "x"))
	}
}

// TestBundleConsumers: independent consumers read the bundle. The
// ro-crate library (npm) finds the root dataset, the actions, their
// instruments and every result file with its SHA-256; DuckDB
// (@duckdb/node-api) reads every Parquet artifact, and the rows, columns
// and first row it sees are what thv's reader sees. In CI a missing node
// or node_modules fails.
func TestBundleConsumers(t *testing.T) {
	consumers, _ := filepath.Abs(filepath.Join("testdata", "consumers"))
	node, err := exec.LookPath("node")
	missing := ""
	switch {
	case err != nil:
		missing = "node is not installed"
	case !exists(filepath.Join(consumers, "node_modules", "ro-crate")) || !exists(filepath.Join(consumers, "node_modules", "@duckdb", "node-api")):
		missing = "the consumers' npm packages are not installed: npm install --prefix cmd/thv/testdata/consumers"
	}
	if missing != "" {
		testenv.Missing(t, "%s", missing)
	}
	bin, path := tinyBundle(t)
	dir := filepath.Join(t.TempDir(), "x")
	if out, err := run(bin, t.TempDir(), "verify-bundle", path, "--sample", "1", "--dir", dir); exitCode(err) != exitSample {
		t.Fatalf("verify-bundle: %v\n%s", err, out)
	}
	cmd := exec.Command(node, "check.mjs", dir)
	cmd.Dir = consumers
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node check.mjs: %v\n%s%s", err, out, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if !strings.HasPrefix(lines[len(lines)-1], "ok: ") {
		t.Fatalf("node check.mjs did not end with ok:\n%s", out)
	}
	parquet := 0
	for _, line := range lines[:len(lines)-1] {
		var seen struct {
			Path    string         `json:"path"`
			Rows    int            `json:"rows"`
			Columns []string       `json:"columns"`
			First   map[string]any `json:"first"`
		}
		if err := json.Unmarshal([]byte(line), &seen); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		tab, err := table.Decode(must(os.ReadFile(filepath.Join(dir, seen.Path))))
		if err != nil {
			t.Fatalf("%s: %v", seen.Path, err)
		}
		if tab.NumRows() != seen.Rows || strings.Join(tab.Names(), ",") != strings.Join(seen.Columns, ",") {
			t.Errorf("%s: DuckDB sees %d rows %v, thv %d rows %v", seen.Path, seen.Rows, seen.Columns, tab.NumRows(), tab.Names())
			continue
		}
		for _, c := range tab.Columns {
			var want any
			switch {
			case len(c.Int64) > 0:
				want = float64(c.Int64[0])
			case len(c.Float64) > 0:
				want = c.Float64[0]
			case len(c.String) > 0:
				want = c.String[0]
			default:
				continue
			}
			if f, ok := want.(float64); ok && math.IsNaN(f) && seen.First[c.Name] == nil {
				continue // JSON has no NaN: the script's output turns DuckDB's NaN into null
			}
			if seen.First[c.Name] != want {
				t.Errorf("%s: column %s, first row: DuckDB %v, thv %v", seen.Path, c.Name, seen.First[c.Name], want)
			}
		}
		parquet++
	}
	if parquet == 0 {
		t.Fatal("DuckDB read no Parquet artifact")
	}
	t.Logf("%s; %d Parquet artifacts agree with thv's reader", lines[len(lines)-1], parquet)
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// TestBundleSourceRebuilds: thv built from the bundle's own source/ with
// the bundle's command (rebuildCommand), offline — the module proxy off
// and an empty module cache, so that only source/vendor/ can serve the
// modules — computes the bundle's keys: verify-bundle with it passes. A
// binary built that way records no module hashes; it takes them from
// go.sum (codeid.WithGoSumHashes).
func TestBundleSourceRebuilds(t *testing.T) {
	bin, path := vendoredTinyBundle(t)
	dir := filepath.Join(t.TempDir(), "x")
	out, err := run(bin, t.TempDir(), "verify-bundle", path, "--sample", "1", "--dir", dir)
	if exitCode(err) != exitSample {
		t.Fatalf("verify-bundle: %v\n%s", err, out)
	}
	if !strings.Contains(out, "source/vendor/: ") || !strings.Contains(out, "files of the") {
		t.Errorf("verify-bundle does not account for source/ and source/vendor/:\n%s", out)
	}
	rebuilt := filepath.Join(t.TempDir(), "thv")
	command := strings.Fields(strings.TrimPrefix(rebuildCommand, "cd source && "))
	if command[0] != "CGO_ENABLED=0" || command[1] != "go" || !slices.Contains(command, "-mod=vendor") {
		t.Fatalf("the rebuild command %q is not the one this test runs", rebuildCommand)
	}
	build := exec.Command("go", append(command[2:len(command)-1], "-o", rebuilt, command[len(command)-1])...)
	build.Dir = filepath.Join(dir, "source")
	emptyCache := t.TempDir()
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=-mod=vendor", "GOPROXY=off", "GOMODCACHE="+emptyCache, "GOWORK=off", "GOTOOLCHAIN=local")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("%s in the bundle's source/, offline: %v\n%s", rebuildCommand, err, out)
	}
	if ents, _ := os.ReadDir(emptyCache); len(ents) != 0 {
		t.Errorf("the offline build filled the module cache: %v", ents)
	}
	out, err = run(rebuilt, t.TempDir(), "verify-bundle", path)
	if err != nil || !strings.Contains(out, "bundle verified") {
		t.Fatalf("verify-bundle with thv rebuilt from source/: %v\n%s", err, out)
	}
	if !strings.Contains(out, "other files: re-derived: byte for byte this thv's own source") {
		t.Errorf("the rebuilt thv does not find source/ to be its own source:\n%s", out)
	}
}
