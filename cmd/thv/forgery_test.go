package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"thv/artifacts"
	"thv/pipeline"
	"thv/pipeline/bundle"
	"thv/protocol"
	"thv/protocol/config"
	"thv/protocol/export"
	"thv/protocol/export/report"
)

// The forgery corpus of verification: each forgery is built here, from the
// tiny project's honest bundle or store, the way an attacker would (a few
// edits, then SHA256SUMS and the crate's digests recomputed so that the
// manifest agrees), and each must fail safely: a non-zero exit naming the
// task or file, the lock and results/ untouched unless re-execution
// justified a change, and no code of the bundle run.

// addFile adds a file to a bundle and its line to the manifest.
func addFile(es []tarEntry, name string, data []byte, mode int64) []tarEntry {
	sum := sha256.Sum256(data)
	for i := range es {
		if es[i].hdr.Name == bundle.ManifestName {
			es[i].data = append(bytes.Clone(es[i].data), []byte(hex.EncodeToString(sum[:])+"  "+name+"\n")...)
		}
	}
	return append(es, tarEntry{tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: mode}, data})
}

// entryData returns the data of the bundle entry name.
func entryData(t *testing.T, es []tarEntry, name string) []byte {
	t.Helper()
	for _, e := range es {
		if e.hdr.Name == name {
			return e.data
		}
	}
	t.Fatalf("the bundle has no %s", name)
	return nil
}

// setFile replaces the data of a bundle entry, with its manifest line and
// the crate's digest of that entity (by its @id, as a forger would edit it).
func setFile(t *testing.T, es []tarEntry, name string, data []byte) {
	t.Helper()
	replaceSum(es, name, data, false)
	for i := range es {
		if es[i].hdr.Name == name {
			es[i].data = data
		}
	}
	var crate map[string]any
	if err := json.Unmarshal(entryData(t, es, bundle.CrateName), &crate); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	for _, e := range crate["@graph"].([]any) {
		if e := e.(map[string]any); e["@id"] == name && e["sha256"] != nil {
			e["sha256"] = hex.EncodeToString(sum[:])
		}
	}
	edited, _ := json.Marshal(crate)
	replaceSum(es, bundle.CrateName, edited, false)
	for i := range es {
		if es[i].hdr.Name == bundle.CrateName {
			es[i].data = edited
		}
	}
}

// reseal makes a forged bundle consistent the way a forger with thv's
// own code would: the crate, its preview and SHA256SUMS rewritten as thv
// writes them for the forged files (bundle.Describe), the crate's stated
// values kept. Only what re-derives or re-executes can then tell.
func reseal(t *testing.T, es []tarEntry) []tarEntry {
	t.Helper()
	dir := t.TempDir()
	m := bundle.Manifest{}
	for _, e := range es {
		if e.hdr.Name == bundle.ManifestName {
			continue
		}
		m[e.hdr.Name] = sha256.Sum256(e.data)
		p := filepath.Join(dir, filepath.FromSlash(e.hdr.Name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, e.data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	params, lockFile, err := m.Protocol()
	if err != nil {
		t.Fatal(err)
	}
	lock, err := pipeline.ReadLock(filepath.Join(dir, lockFile))
	if err != nil {
		t.Fatal(err)
	}
	proj, err := protocol.Open(protocol.Options{
		LoadOptions: config.LoadOptions{ParamsFile: filepath.Join(dir, params), Profile: lock.Profile},
		StoreDir:    filepath.Join(dir, bundle.StoreDir), Dir: dir,
	})
	if err != nil {
		t.Fatal(err)
	}
	status, err := proj.Status(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	described, err := proj.Describe()
	if err != nil {
		t.Fatal(err)
	}
	opt := bundleOptions(params, lock.Profile, described.Name())
	if opt.Drawn, err = export.DrawnResults(status); err != nil {
		t.Fatal(err)
	}
	d, err := bundle.Describe(proj.Project, status, dir, m, opt)
	if err != nil {
		t.Fatalf("the forgery cannot be resealed: %v", err)
	}
	for i := range es {
		switch es[i].hdr.Name {
		case bundle.CrateName:
			es[i].data = d.Crate
		case bundle.PreviewName:
			es[i].data = d.Preview
		case bundle.ManifestName:
			es[i].data = d.Manifest
		}
	}
	return es
}

// dropFile removes a bundle entry (its manifest line goes with reseal).
func dropFile(es []tarEntry, name string) []tarEntry {
	return slices.DeleteFunc(es, func(e tarEntry) bool { return e.hdr.Name == name })
}

func objectPath(digest string) string {
	h := strings.TrimPrefix(digest, "sha256:")
	return path.Join("store", "objects", h[:2], h)
}

func entryPath(key string) string {
	h := strings.TrimPrefix(key, "sha256:")
	return path.Join("store", "index", h[:2], h+".json")
}

// lockKey returns the key of a task's line in lock bytes.
func lockKey(t *testing.T, lock []byte, task string) string {
	t.Helper()
	m := regexp.MustCompile(`\{"id":"` + regexp.QuoteMeta(task) + `","kind":"[^"]*","key":"(sha256:[0-9a-f]{64})"`).FindSubmatch(lock)
	if m == nil {
		t.Fatalf("task %s not in the lock", task)
	}
	return string(m[1])
}

// sealEntry is a lock seal for lock bytes, as anyone can compute it
// (pipeline/seal.go).
func sealEntry(lock []byte) (name string, data []byte) {
	d := sha256.Sum256(lock)
	digest := "sha256:" + hex.EncodeToString(d[:])
	k := sha256.Sum256([]byte("thv lock seal v1\n" + digest))
	key := "sha256:" + hex.EncodeToString(k[:])
	data, _ = json.MarshalIndent(map[string]any{"key": key, "kind": "lock-seal", "outputs": []any{}, "meta": map[string]string{"lock": digest}}, "", "  ")
	return entryPath(key), append(data, '\n')
}

// forgePDF replaces figures/d2's d2.pdf in the lock, the store and
// results/ of a bundle; with index, in the task's index entry too (a
// forgery consistent everywhere), otherwise the lock gets a seal.
func forgePDF(t *testing.T, es []tarEntry, index bool) []tarEntry {
	t.Helper()
	const task = "figures/d2"
	lockName := tinyLock
	lock := entryData(t, es, lockName)
	old := lockOutput(t, lock, task, "d2.pdf")
	forged := append(bytes.Clone(entryData(t, es, objectPath(old))), "% forged\n"...)
	fd := sha256.Sum256(forged)
	newDigest := "sha256:" + hex.EncodeToString(fd[:])
	es = addFile(es, objectPath(newDigest), forged, 0o444)
	setFile(t, es, "results/figures/d2.pdf", forged)
	newLock := bytes.Replace(lock, []byte(old), []byte(newDigest), 1)
	setFile(t, es, lockName, newLock)
	// The page names the lock's digest: a consistent forger updates it.
	oldSum, newSum := sha256.Sum256(lock), sha256.Sum256(newLock)
	page := entryData(t, es, "results/index.html")
	setFile(t, es, "results/index.html", bytes.Replace(page, []byte(hex.EncodeToString(oldSum[:])), []byte(hex.EncodeToString(newSum[:])), 1))
	if index {
		ep := entryPath(lockKey(t, lock, task))
		entry := entryData(t, es, ep)
		var e map[string]any
		if err := json.Unmarshal(entry, &e); err != nil {
			t.Fatal(err)
		}
		for _, o := range e["outputs"].([]any) {
			if o := o.(map[string]any); o["name"] == "d2.pdf" {
				o["digest"], o["size"] = newDigest, len(forged)
			}
		}
		edited, _ := json.MarshalIndent(e, "", "  ")
		setFile(t, es, ep, append(edited, '\n'))
		// Consistent everywhere: the old object is no output of the
		// lock any more, so it leaves the bundle.
		return reseal(t, dropFile(es, objectPath(old)))
	}
	name, data := sealEntry(newLock)
	return addFile(es, name, data, 0o644)
}

// TestForgedBundlesAreRejected: forgeries 2 (a bundle brings its own lock
// seal), its consistent variant (the index entry rewritten too: only
// re-executing catches it, and the default re-executes every task) and a
// laundered index entry inside a bundle. Each is rejected, naming the task.
func TestForgedBundlesAreRejected(t *testing.T) {
	bin, honest := tinyBundle(t)
	for _, tc := range []struct {
		name   string
		forge  func([]tarEntry) []tarEntry
		expect []string
	}{
		{"sealed forged lock", func(es []tarEntry) []tarEntry { return forgePDF(t, es, false) },
			[]string{"rejected: store/index/", "is not part of the bundle's store"}},
		{"consistent forgery", func(es []tarEntry) []tarEntry { return forgePDF(t, es, true) },
			[]string{"rejected: 1 tasks did not reproduce; first: figures/d2: output d2.pdf: the lock records sha256:"}},
		{"laundered index entry", func(es []tarEntry) []tarEntry {
			lock := entryData(t, es, tinyLock)
			victim := entryPath(lockKey(t, lock, "run/d2/concave/THV-UCB/eta=0.1/seed=0"))
			donor := entryData(t, es, entryPath(lockKey(t, lock, "run/d2/concave/RandomK/eta=0/seed=0")))
			var v, d map[string]any
			json.Unmarshal(entryData(t, es, victim), &v)
			json.Unmarshal(donor, &d)
			v["outputs"] = d["outputs"]
			edited, _ := json.MarshalIndent(v, "", "  ")
			setFile(t, es, victim, append(edited, '\n'))
			return reseal(t, es)
		}, []string{"rejected: 1 of its lock records disagree with its store's index; first: run/d2/concave/THV-UCB/eta=0.1/seed=0:", "the index entry was wrong"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := filepath.Join(t.TempDir(), "forged.tar.gz")
			writeBundle(t, bad, tc.forge(readBundle(t, honest)))
			parent := t.TempDir()
			out, err := run(bin, parent, "verify-bundle", bad, "--dir", filepath.Join(parent, "x"))
			if err == nil {
				t.Fatalf("a forged bundle was accepted:\n%s", out)
			}
			for _, want := range tc.expect {
				if !strings.Contains(out, want) {
					t.Fatalf("want %q in\n%s", want, out)
				}
			}
			if ents, _ := os.ReadDir(parent); len(ents) != 1 || ents[0].Name() != "x" {
				t.Fatalf("verify-bundle wrote beside its directory: %v", ents)
			}
		})
	}
}

// TestBundleBinaryNeverRuns is forgery 1: a bundle whose image holds a
// script as /thv. --use-bundle-binary is refused, saying why; the default
// check verifies with this thv only, says the image was neither checked
// nor run, and the script never runs. A thv built from other code is told
// to build from the bundle's source, not to run the bundle's binary.
func TestBundleBinaryNeverRuns(t *testing.T) {
	bin, honest := tinyBundle(t)
	marker := filepath.Join(t.TempDir(), "the-bundle-ran")
	script := fmt.Sprintf("#!/bin/sh\ntouch %s\necho bundle verified\n", marker)
	bad := filepath.Join(t.TempDir(), "evil.tar.gz")
	writeBundle(t, bad, reseal(t, addFile(readBundle(t, honest), bundle.ImagePath, scriptImage(t, script), 0o644)))

	out, err := run(bin, t.TempDir(), "verify-bundle", bad, "--use-bundle-binary")
	if err == nil || !strings.Contains(out, "--use-bundle-binary was removed") || !strings.Contains(out, "build thv from the bundle's source/") {
		t.Fatalf("--use-bundle-binary: %v\n%s", err, out)
	}
	out, err = run(bin, t.TempDir(), "verify-bundle", bad)
	if err != nil || !strings.Contains(out, "bundle verified: this thv re-executed all") || !strings.Contains(out, bundle.ImagePath+": not checked and never run") {
		t.Fatalf("verify-bundle of a bundle with a foreign image: %v\n%s", err, out)
	}
	checker := thvWithEditedRandomK(t)
	out, err = run(checker, t.TempDir(), "verify-bundle", bad)
	if err == nil || !strings.Contains(out, "this thv was built from other code than the bundle's thv") || !strings.Contains(out, "code changed in thv/algos/randomk") ||
		!strings.Contains(out, "the bundle's source/ is the code its lock records, so it is this thv's code that differs") ||
		!strings.Contains(out, "build thv from the bundle's source/") || strings.Contains(out, "--use-bundle-binary") {
		t.Fatalf("verify-bundle with other code: %v\n%s", err, out)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the bundle's /thv ran on the verifier's host")
	}
}

// scriptImage is an oci-archive whose one layer holds script as /thv.
func scriptImage(t *testing.T, script string) []byte {
	t.Helper()
	blobs := map[string][]byte{}
	var order []string
	put := func(b []byte) (string, int) {
		d := fmt.Sprintf("sha256:%x", sha256.Sum256(b))
		blobs[d] = b
		order = append(order, d)
		return d, len(b)
	}
	var layer bytes.Buffer
	gz := gzip.NewWriter(&layer)
	tw := tar.NewWriter(gz)
	tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "thv", Size: int64(len(script)), Mode: 0o755})
	tw.Write([]byte(script))
	tw.Close()
	gz.Close()
	ld, ls := put(layer.Bytes())
	config, _ := json.Marshal(map[string]any{"os": "linux", "architecture": "amd64"})
	cd, cs := put(config)
	manifest, _ := json.Marshal(map[string]any{"schemaVersion": 2,
		"config": map[string]any{"mediaType": "application/vnd.oci.image.config.v1+json", "digest": cd, "size": cs},
		"layers": []any{map[string]any{"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip", "digest": ld, "size": ls}}})
	md, ms := put(manifest)
	index, _ := json.Marshal(map[string]any{"schemaVersion": 2, "manifests": []any{map[string]any{"digest": md, "size": ms}}})
	var out bytes.Buffer
	otw := tar.NewWriter(&out)
	add := func(name string, b []byte) {
		otw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Size: int64(len(b)), Mode: 0o644})
		otw.Write(b)
	}
	add("index.json", index)
	for _, d := range order {
		add("blobs/sha256/"+d[len("sha256:"):], blobs[d])
	}
	otw.Close()
	return out.Bytes()
}

// TestSampleIsUnpredictable: the default re-executes every task, so no
// forger can know which ones escape; --sample N draws its seed from the
// system's random source, prints it with the command that repeats it, and
// says what a sample cannot show.
func TestSampleIsUnpredictable(t *testing.T) {
	bin, honest := tinyBundle(t)
	seedLine := regexp.MustCompile(`sample: 12 tasks \(and at least one of each kind\) drawn with seed (\d+) \(repeat it: thv verify-bundle \S+ --sample 12 --seed (\d+)\)`)
	var seeds []string
	for range 2 {
		out, err := run(bin, t.TempDir(), "verify-bundle", honest, "--sample", "12")
		m := seedLine.FindStringSubmatch(out)
		if exitCode(err) != exitSample || m == nil || m[1] != m[2] || !strings.Contains(out, "bundle NOT verified: a sample of") || !strings.Contains(out, "escapes a sample like this with probability up to") {
			t.Fatalf("verify-bundle --sample: %v\n%s", err, out)
		}
		seeds = append(seeds, m[1])
	}
	if seeds[0] == seeds[1] {
		t.Fatalf("two samples drew the same seed %s", seeds[0])
	}
	out, err := run(bin, t.TempDir(), "verify-bundle", honest, "--sample", "12", "--seed", seeds[0])
	if exitCode(err) != exitSample || !strings.Contains(out, "drawn with seed "+seeds[0]+" ") {
		t.Fatalf("--seed does not repeat the sample: %v\n%s", err, out)
	}
}

// TestLaunderedStoreCannotRewriteTheLock is forgery 3: whoever can write
// the store's index points a run's entry at another run's (valid) objects.
// Without the seal, the next repro re-executes the disputed task, keeps the
// lock (the computation sides with it), replaces the entry, exits 1 naming
// the task, and leaves the lock and results/ byte for byte as they were;
// the repro after it has nothing to settle. With the seal left in place,
// repro never reads the entry, but thv verify finds it, names the task,
// and lets the next repro settle it.
func TestLaunderedStoreCannotRewriteTheLock(t *testing.T) {
	bin := buildThv(t, moduleRoot(t))
	const victim, donor = "run/d2/concave/THV-UCB/eta=0.1/seed=0", "run/d2/concave/RandomK/eta=0/seed=0"
	for _, keepSeal := range []bool{false, true} {
		t.Run(fmt.Sprintf("seal kept %v", keepSeal), func(t *testing.T) {
			dir := t.TempDir()
			thvRepro(t, bin, dir)
			lock := must(os.ReadFile(filepath.Join(dir, tinyLock)))
			results := readTree(t, filepath.Join(dir, "results"))
			store := filepath.Join(dir, ".thv")
			// The victim's entry rewritten (packed, the old one killed),
			// as anyone who can write the store can.
			st, err := artifacts.Open(store, artifacts.Create)
			if err != nil {
				t.Fatal(err)
			}
			entryOf := func(task string) artifacts.Entry {
				k, err := artifacts.ParseDigest(lockKey(t, lock, task))
				if err != nil {
					t.Fatal(err)
				}
				e, ok, err := st.GetEntry(artifacts.Key(k))
				if !ok || err != nil {
					t.Fatalf("the entry of %s: %v %v", task, ok, err)
				}
				return e
			}
			v := entryOf(victim)
			v.Outputs = entryOf(donor).Outputs
			if err := st.PutEntry(v); err != nil {
				t.Fatal(err)
			}
			if err := st.Sync(); err != nil {
				t.Fatal(err)
			}
			if keepSeal {
				out := thvFails(t, bin, dir, "verify")
				if !strings.Contains(out, "DISPUTE "+victim+": ") || !strings.Contains(out, "the index entry was wrong") {
					t.Fatalf("verify of a laundered store:\n%s", out)
				}
			} else {
				seal, _ := sealEntry(lock)
				if err := os.Remove(filepath.Join(store, filepath.FromSlash(strings.TrimPrefix(seal, "store/")))); err != nil {
					t.Fatal(err)
				}
			}
			out := thvFails(t, bin, dir, "repro")
			if !strings.Contains(out, "DISPUTE "+victim+": ") || !strings.Contains(out, "the index entry was wrong and is replaced") || !strings.Contains(out, "1 tasks: the lock and the store disagreed") {
				t.Fatalf("repro of a laundered store:\n%s", out)
			}
			if !bytes.Equal(lock, must(os.ReadFile(filepath.Join(dir, tinyLock)))) {
				t.Fatal("the lock was rewritten from the store's word")
			}
			if got := readTree(t, filepath.Join(dir, "results")); !maps.Equal(got, results) {
				t.Fatal("results/ changed")
			}
			if r := thvRepro(t, bin, dir); r.Executed != 0 {
				t.Fatalf("the repro after the settlement executed %d tasks", r.Executed)
			}
			thv(t, bin, dir, "verify")
		})
	}
}

// readTree maps every file under root to its bytes, results/index.html
// without its run block (what differs between two runs of the same results).
func readTree(t *testing.T, root string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		b := must(os.ReadFile(p))
		if rel == export.ReportName {
			// The page's run block says what thv verify last showed:
			// the results are the rest of it.
			if b, err = report.WithRun(b, report.Run{}); err != nil {
				return err
			}
		}
		m[filepath.ToSlash(rel)] = string(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}
