package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"thv/artifacts"
	"thv/artifacts/remote"
	"thv/internal/s3test"
	"thv/pipeline"
)

// remoteRun runs the built thv in dir on the tiny protocol with the S3
// server's environment; it returns the combined output and the error.
func remoteRun(t *testing.T, bin, dir string, env []string, args ...string) (string, error) {
	t.Helper()
	if args[0] != "key" {
		args = append(args, "--params", tinyParams(t))
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "THV_STORE=", "THV_REMOTE=", "THV_TRUSTED_KEYS="), env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// reproCounts reads the --json line at the end of a repro's output.
func reproCounts(t *testing.T, out string) reproOut {
	t.Helper()
	var r reproOut
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if strings.HasPrefix(l, "{") && json.Unmarshal([]byte(l), &r) == nil {
			return r
		}
	}
	t.Fatalf("no JSON counts in:\n%s", out)
	return r
}

// sameTree fails t unless a and b hold the same files with the same bytes,
// results/index.html's run block (its date and executor) aside.
func sameTree(t *testing.T, a, b string) {
	t.Helper()
	ta, tb := readTree(t, a), readTree(t, b) // the page's run block aside (forgery_test.go)
	if len(ta) == 0 {
		t.Fatalf("%s is empty", a)
	}
	for k, v := range ta {
		if tb[k] != v {
			t.Errorf("%s differs between %s and %s", k, a, b)
		}
	}
	if len(ta) != len(tb) {
		t.Errorf("%s has %d files, %s %d", a, len(ta), b, len(tb))
	}
}

// TestRemoteTwoClones: the remote cache between two clones sharing only an
// S3 server (a real one, on 127.0.0.1). A runs with --remote and
// --sign-key; B, with an empty store and trusting A's public key, executes
// nothing, and writes the same lock bytes and the same results/. A third
// clone that trusts another key computes everything and says why.
func TestRemoteTwoClones(t *testing.T) {
	bin := buildThv(t, moduleRoot(t))
	srv := s3test.Start(t)
	srv.Bucket(t, "cache")
	env := srv.Env()
	url := "s3://cache/thv"
	keys := t.TempDir()
	if out, err := remoteRun(t, bin, keys, nil, "key", "generate", filepath.Join(keys, "alice")); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if fi, err := os.Stat(filepath.Join(keys, "alice.key")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("alice.key: %v %v", fi.Mode(), err)
	}
	a, b := t.TempDir(), t.TempDir()
	out, err := remoteRun(t, bin, a, env, "repro", "-j", "2", "--json", "--remote", url, "--sign-key", filepath.Join(keys, "alice.key"))
	if err != nil {
		t.Fatalf("A: %v\n%s", err, out)
	}
	ra := reproCounts(t, out)
	if ra.Executed == 0 || !strings.Contains(out, "entries pushed") {
		t.Fatalf("A executed %d tasks:\n%s", ra.Executed, out)
	}
	start := time.Now()
	out, err = remoteRun(t, bin, b, env, "repro", "-j", "2", "--json", "--remote", url, "--trusted-keys", filepath.Join(keys, "alice.pub"))
	if err != nil {
		t.Fatalf("B: %v\n%s", err, out)
	}
	rb := reproCounts(t, out)
	t.Logf("B: %d tasks fetched from the remote in %v", rb.Cached, time.Since(start))
	if rb.Executed != 0 || rb.Cached != ra.Executed+ra.Cached {
		t.Fatalf("B executed %d, cached %d (A: %+v):\n%s", rb.Executed, rb.Cached, ra, out)
	}
	la, _ := os.ReadFile(filepath.Join(a, tinyLock))
	lb, _ := os.ReadFile(filepath.Join(b, tinyLock))
	if len(la) == 0 || !bytes.Equal(la, lb) {
		t.Fatal("B's lock differs from A's")
	}
	sameTree(t, filepath.Join(a, "results"), filepath.Join(b, "results"))
	// B's store is whole: verify re-hashes every output.
	if out, err := remoteRun(t, bin, b, nil, "status", "--verify"); err != nil {
		t.Fatalf("B status --verify: %v\n%s", err, out)
	}

	// C trusts a key that signed nothing: every entry is refused, said so,
	// and the results are the same.
	if out, err := remoteRun(t, bin, keys, nil, "key", "generate", filepath.Join(keys, "bob")); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	c := t.TempDir()
	out, err = remoteRun(t, bin, c, env, "repro", "-j", "2", "--json", "--remote", url, "--trusted-keys", filepath.Join(keys, "bob.pub"))
	if err != nil {
		t.Fatalf("C: %v\n%s", err, out)
	}
	if rc := reproCounts(t, out); rc.Executed != ra.Executed || !strings.Contains(out, "not trusted") {
		t.Fatalf("C executed %d (want %d), output:\n%s", rc.Executed, ra.Executed, out)
	}
	lc, _ := os.ReadFile(filepath.Join(c, tinyLock))
	if !bytes.Equal(la, lc) {
		t.Fatal("C's lock differs from A's")
	}
	// The remote is no input: the lock names no URL and no key.
	if bytes.Contains(la, []byte("cache/thv")) || bytes.Contains(la, []byte("alice")) {
		t.Fatal("the lock mentions the remote")
	}
}

// TestRemoteFaultsInRepro: a flipped byte in a remote object is detected
// by the reader, which recomputes the task, reports it and repairs the
// remote; a server killed before a run makes the run compute locally,
// keep its lock and results, and fail at the end with an error naming the
// URL; thv push then uploads what the lock references, and thv pull fills
// an empty store.
func TestRemoteFaultsInRepro(t *testing.T) {
	bin := buildThv(t, moduleRoot(t))
	srv := s3test.Start(t)
	srv.Bucket(t, "cache")
	env := srv.Env()
	url := "s3://cache/thv"
	keys := t.TempDir()
	remoteRun(t, bin, keys, nil, "key", "generate", filepath.Join(keys, "ci"))
	sign, trust := filepath.Join(keys, "ci.key"), filepath.Join(keys, "ci.pub")

	// The server is down for A's run.
	srv.Kill()
	a := t.TempDir()
	out, err := remoteRun(t, bin, a, append(env, "THV_REMOTE="+url), "repro", "-j", "2", "--json", "--sign-key", sign)
	if err == nil || !strings.Contains(out, "remote "+url) || !strings.Contains(out, "thv push") {
		t.Fatalf("A against a dead server: err %v, output:\n%s", err, out)
	}
	ra := reproCounts(t, out)
	if ra.Executed == 0 || ra.Failed != 0 {
		t.Fatalf("A: %+v", ra)
	}
	// The dead server is reported once for reads and once for uploads,
	// not once per task.
	if n := strings.Count(out, "level=WARN"); n > 2 {
		t.Fatalf("%d warnings about the dead server:\n%s", n, out)
	}
	if _, err := os.Stat(filepath.Join(a, tinyLock)); err != nil {
		t.Fatalf("A's lock was not written: %v", err)
	}
	srv.Restart()
	out, err = remoteRun(t, bin, a, env, "push", "--remote", url, "--sign-key", sign)
	if err != nil || !strings.Contains(out, "failed") {
		t.Fatalf("push: %v\n%s", err, out)
	}
	t.Log(strings.TrimSpace(out))

	// Flip a byte of one remote pack (the gateway keeps it as a file).
	var victim string
	filepath.WalkDir(srv.Path("cache", "thv/packs"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && victim == "" {
			victim = p
		}
		return nil
	})
	data, err := os.ReadFile(victim)
	if err != nil {
		t.Fatal(err)
	}
	data[0] ^= 0x40
	if err := os.WriteFile(victim, data, 0o644); err != nil {
		t.Fatal(err)
	}
	b := t.TempDir()
	out, err = remoteRun(t, bin, b, env, "repro", "-j", "2", "--json", "--remote", url, "--trusted-keys", trust, "--sign-key", sign)
	if err != nil {
		t.Fatalf("B: %v\n%s", err, out)
	}
	rb := reproCounts(t, out)
	if rb.Executed == 0 || !strings.Contains(out, "is corrupt") || !strings.Contains(out, filepath.Base(victim)) {
		t.Fatalf("B did not report and recompute the corrupt object (executed %d):\n%s", rb.Executed, out)
	}
	la, _ := os.ReadFile(filepath.Join(a, tinyLock))
	lb, _ := os.ReadFile(filepath.Join(b, tinyLock))
	if !bytes.Equal(la, lb) {
		t.Fatal("B's lock differs from A's")
	}
	// A pack is never rewritten (its name is its hash); B published what
	// it recomputed, task by task, and that is what a reader uses now.
	if published, _ := filepath.Glob(srv.Path("cache", "thv/index/*/*.json")); len(published) == 0 {
		t.Fatal("B did not publish the tasks it recomputed")
	}
	// pull into an empty store with A's lock: the store is then whole.
	c := t.TempDir()
	os.WriteFile(filepath.Join(c, tinyLock), la, 0o644)
	out, err = remoteRun(t, bin, c, env, "pull", "--remote", url, "--trusted-keys", trust)
	if err != nil || !strings.Contains(out, "0 failed") {
		t.Fatalf("pull: %v\n%s", err, out)
	}
	out, err = remoteRun(t, bin, c, nil, "repro", "--json")
	if err != nil || reproCounts(t, out).Executed != 0 {
		t.Fatalf("repro after pull: %v\n%s", err, out)
	}
	// gc --remote keeps what the lock references.
	out, err = remoteRun(t, bin, c, env, "gc", "--remote", url, "--grace", "0s")
	if err != nil || !strings.Contains(out, "deleted 0 of") {
		t.Fatalf("gc --remote: %v\n%s", err, out)
	}
}

// TestPushKilledResumes SIGKILLs thv push part-way: every entry on the
// server then has all its objects (objects first, entry last), and the
// same push, run again, skips what was done and completes.
func TestPushKilledResumes(t *testing.T) {
	bin := buildThv(t, moduleRoot(t))
	srv := s3test.Start(t)
	srv.Bucket(t, "cache")
	env := srv.Env()
	url := "s3://cache/thv"
	keys := t.TempDir()
	remoteRun(t, bin, keys, nil, "key", "generate", filepath.Join(keys, "ci"))
	sign := filepath.Join(keys, "ci.key")
	pub, err := remote.LoadTrustedKeys(filepath.Join(keys, "ci.pub"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if out, err := remoteRun(t, bin, dir, nil, "repro", "-j", "2", "--json"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	lock, err := pipeline.ReadLock(filepath.Join(dir, tinyLock))
	if err != nil {
		t.Fatal(err)
	}
	var items []remote.Item
	for _, r := range lock.Tasks {
		items = append(items, remote.Item{Task: r.ID, Key: r.Key, Kind: r.Kind})
	}
	// entries pulls, from the server's files as they are, every entry a
	// reader can see: each must come whole (its objects all there and
	// checking); it returns how many there are.
	entries := func() int {
		rm, err := remote.Open(context.Background(), remote.Options{URL: "file://" + srv.Path("cache", "thv"), Trusted: pub, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			return 0
		}
		st, err := artifacts.Open(t.TempDir(), artifacts.Create)
		if err != nil {
			t.Fatal(err)
		}
		rep := rm.Pull(context.Background(), st, items, 4, nil)
		for _, e := range rep.Errs {
			if !strings.Contains(e.Error(), "not on the remote") {
				t.Fatalf("an entry visible on the remote without its objects whole: %v", e)
			}
		}
		return rep.Done
	}
	// A pack (and a batch) every 20 kB: a push of many batches.
	cmd := exec.Command(bin, "push", "-j", "1", "--pack-size", "20000", "--remote", url, "--sign-key", sign, "--params", tinyParams(t))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	batches := func() int {
		m, _ := filepath.Glob(srv.Path("cache", "thv/batches/*.batch"))
		return len(m)
	}
	for batches() < 2 && time.Now().Before(deadline) {
		time.Sleep(2 * time.Millisecond)
	}
	cmd.Process.Kill()
	cmd.Wait()
	before := entries()
	out, err := remoteRun(t, bin, dir, env, "push", "--remote", url, "--sign-key", sign)
	if err != nil || !strings.Contains(out, "0 failed") || !strings.Contains(out, fmt.Sprintf("(%d already there)", before)) {
		t.Fatalf("resumed push (%d entries up before): %v\n%s", before, err, out)
	}
	total := entries()
	if before == 0 || before >= total || total != len(items) {
		t.Fatalf("killed with %d of %d entries up (%d tasks): not part-way", before, total, len(items))
	}
	t.Logf("killed with %d of %d entries up; %s", before, total, strings.TrimSpace(out))
}
