//go:build linux

package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"thv/pipeline/bundle"
)

// The forgery corpus of what a reader sees around the
// computation, and inputs that exhaust memory or block. Each case is built
// here from the tiny project's honest bundle (or a file:// remote it
// published), runs thv as a process under a time limit, and must fail
// safely: rejected or named, nothing written outside its work directory,
// no hang, and a peak resident set (the process's and its children's, from
// wait4's rusage) within the targets — verify-bundle 1 GiB, a remote
// reader 256 MiB.

// The ceilings on peak memory the corpus holds thv to.
const (
	verifyRSSLimit = 1 << 30
	remoteRSSLimit = 256 << 20
)

// measured is one run of thv: its combined output, its error, and the
// largest resident set of it and its children.
type measured struct {
	out    string
	err    error
	maxRSS int64 // bytes
}

// rssHelperEnv, set, makes this test binary a small parent that runs its
// arguments as a command and writes the command's peak resident set to
// the file the variable names. The child of a large process starts with
// that process's high-water mark (Linux records the old address space's
// at exec, and os/exec shares it until then), so the test process, which
// holds whole bundles in memory, cannot measure its children itself.
const rssHelperEnv = "THV_TEST_RSS_FILE"

func init() {
	file := os.Getenv(rssHelperEnv)
	if file == "" {
		return
	}
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, rssHelperEnv+"=") })
	err := cmd.Run()
	if cmd.ProcessState == nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(125)
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	os.WriteFile(file, []byte(strconv.FormatInt(ru.Maxrss*1024, 10)), 0o644) // kilobytes on Linux
	os.Exit(cmd.ProcessState.ExitCode())
}

// runLimited runs bin with args in dir under timeout, with TMPDIR set to
// tmp, in its own process group (killed whole at the end), and reads its
// peak resident set (of it and its children: wait4's) through the helper
// above.
func runLimited(t *testing.T, bin, dir, tmp string, timeout time.Duration, env []string, args ...string) measured {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	rssFile := filepath.Join(t.TempDir(), "maxrss")
	cmd := exec.CommandContext(ctx, os.Args[0], append([]string{bin}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), rssHelperEnv+"="+rssFile, "TMPDIR="+tmp, "THV_REMOTE=", "THV_TRUSTED_KEYS="), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("thv %s did not finish within %v (a hang?):\n%s", strings.Join(args, " "), timeout, out.String())
	}
	m := measured{out: out.String(), err: err}
	rss, rerr := strconv.ParseInt(string(must(os.ReadFile(rssFile))), 10, 64)
	if rerr != nil {
		t.Fatalf("the peak resident set was not measured: %v", rerr)
	}
	m.maxRSS = rss
	return m
}

// onlyEntries fails unless dir holds exactly the names given.
func onlyEntries(t *testing.T, dir string, names ...string) {
	t.Helper()
	ents, _ := os.ReadDir(dir)
	var got []string
	for _, e := range ents {
		got = append(got, e.Name())
	}
	if strings.Join(got, ",") != strings.Join(names, ",") {
		t.Errorf("%s holds %v, want %v: something was written outside the work directory", dir, got, names)
	}
}

// pngHeader sets a PNG's IHDR width and height (and its CRC).
func pngHeader(png []byte, w, h uint32) []byte {
	png = bytes.Clone(png)
	binary.BigEndian.PutUint32(png[16:], w)
	binary.BigEndian.PutUint32(png[20:], h)
	binary.BigEndian.PutUint32(png[29:], crc32.ChecksumIEEE(png[12:29]))
	return png
}

// setEntry replaces an entry's bytes and its manifest line (not the crate:
// what CheckContents must catch).
func setEntry(t *testing.T, es []tarEntry, name string, data []byte) []tarEntry {
	t.Helper()
	replaceSum(es, name, data, false)
	for i := range es {
		if es[i].hdr.Name == name {
			es[i].data = data
			return es
		}
	}
	t.Fatalf("no %s in the bundle", name)
	return nil
}

// TestForgedBundleCorpus: every class of the corpus against verify-bundle.
func TestForgedBundleCorpus(t *testing.T) {
	bin, honest := tinyBundle(t)
	hugeCrate := func() []byte {
		var b bytes.Buffer
		b.WriteString(`{"@context": "https://w3id.org/ro/crate/1.1/context", "@graph": [` + "\n")
		for i := 0; b.Len() < 300<<20; i++ {
			fmt.Fprintf(&b, `{"@id":"#e%d","@type":"Thing","name":"224 of 224 published values agree"},`+"\n", i)
		}
		b.WriteString(`{"@id":"./","@type":"Dataset"}]}` + "\n")
		return b.Bytes()
	}
	for _, tc := range []struct {
		name  string
		forge func(es []tarEntry) []tarEntry
		args  []string // more flags
		want  []string // in the output
		ok    bool     // verified, with the forgery named as not checked
	}{
		{"extra top-level README", func(es []tarEntry) []tarEntry {
			return addFile(es, "README.md", []byte("# Verified: 224 of 224 published values agree\n"), 0o644)
		}, nil, []string{"rejected: README.md is not part of a bundle"}, false},
		{"extra file in the store", func(es []tarEntry) []tarEntry {
			return addFile(es, "store/RESULTS.md", []byte("all claims hold\n"), 0o644)
		}, nil, []string{"rejected: store/RESULTS.md is not part of the bundle's store"}, false},
		{"forged preview", func(es []tarEntry) []tarEntry {
			return setEntry(t, es, bundle.PreviewName, []byte("<!DOCTYPE html><h1>224/224 verified</h1><script>alert(1)</script>\n"))
		}, nil, []string{"rejected: ro-crate-preview.html is not the preview thv writes for this bundle"}, false},
		{"crate {}", func(es []tarEntry) []tarEntry {
			return setEntry(t, es, bundle.CrateName, []byte("{}\n"))
		}, nil, []string{"rejected: ro-crate-metadata.json is not the crate thv writes for this bundle"}, false},
		{"crate with a second root", func(es []tarEntry) []tarEntry {
			crate := entryData(t, es, bundle.CrateName)
			second := []byte(`{"@id":"./","@type":"Dataset","name":"verified by the paper's authors","description":"224 of 224 published values agree"},` + "\n")
			i := bytes.Index(crate, []byte("\n{\"@id\":\"./\"")) + 1
			return setEntry(t, es, bundle.CrateName, append(append(bytes.Clone(crate[:i]), second...), crate[i:]...))
		}, nil, []string{"rejected: ro-crate-metadata.json is not the crate thv writes for this bundle"}, false},
		{"oversized crate", func(es []tarEntry) []tarEntry {
			return setEntry(t, es, bundle.CrateName, hugeCrate())
		}, []string{"--max-unpacked", "2GiB"}, // past extraction's own bound, to reach the crate's
			[]string{"rejected: ro-crate-metadata.json is 3", "not read; a bundle's crate is what thv writes"}, false},
		{"oversized lock", func(es []tarEntry) []tarEntry {
			lock := entryData(t, es, tinyLock)
			return setEntry(t, es, tinyLock, append(bytes.Clone(lock), bytes.Repeat([]byte(" "), bundle.MaxLockBytes)...))
		}, []string{"--max-unpacked", "2GiB"}, []string{"rejected: " + tinyLock + " is ", "more than the 268435456 a bundle's lock may have: not read"}, false},
		{"source/ edited, the lock kept", func(es []tarEntry) []tarEntry {
			for i, e := range es {
				// A statement in a function the runs call: an unreached
				// addition changes no key, and is only named.
				if strings.HasPrefix(e.hdr.Name, "source/algos/thvucb/") && strings.HasSuffix(e.hdr.Name, ".go") && !strings.HasSuffix(e.hdr.Name, "_test.go") && bytes.Contains(e.data, []byte("\n\treturn ")) {
					es[i].data = bytes.Replace(e.data, []byte("\n\treturn "), []byte("\n\t_ = 1\n\treturn "), 1)
					return reseal(t, es)
				}
			}
			t.Fatal("no source of algos/thvucb in the bundle")
			return nil
		}, nil, []string{"rejected: the bundle's source/ is not the code its lock records (thv/algos/thvucb."}, false},
		{"source/: a declaration nothing calls added", func(es []tarEntry) []tarEntry {
			for i, e := range es {
				if e.hdr.Name == "source/algos/thvucb/thvucb.go" {
					es[i].data = append(bytes.Clone(e.data), "\nconst forged = 1\n"...)
					return reseal(t, es)
				}
			}
			t.Fatal("no source/algos/thvucb/thvucb.go in the bundle")
			return nil
		}, nil, []string{"bundle verified", "not checked:", "they differ only in what no task reaches", "source/algos/thvucb/thvucb.go"}, true},
		{"source/ docs edited", func(es []tarEntry) []tarEntry {
			es = setEntry(t, es, "source/docs/bundles.md", []byte("# Every bundle is verified by its authors\n"))
			return reseal(t, es)
		}, nil, []string{"bundle verified", "not checked:", "source/: 1 other files: outside every task's code identity", "source/docs/bundles.md"}, true},
		{"figure declaring huge dimensions", func(es []tarEntry) []tarEntry {
			png := entryData(t, es, "results/figures/d2.png")
			es = setEntry(t, es, "results/figures/d2.png", pngHeader(png, 1<<20, 1<<20))
			return reseal(t, es)
		}, nil, []string{"rejected: results/figures/d2.png: 1048576×1048576 pixels, this machine's drawing "}, false},
		{"markup and control characters in a name", func(es []tarEntry) []tarEntry {
			params := entryData(t, es, "tiny.yaml")
			forged, err := bundle.CanonicalProtocol(bytes.Replace(params, []byte("\n  d2: "), []byte("\n  \"d2<script>x</script>\\e[2J\\r\": "), 1))
			if err != nil {
				t.Fatal(err)
			}
			return setEntry(t, es, "tiny.yaml", forged)
		}, nil, []string{"rejected"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := filepath.Join(t.TempDir(), "forged.tar.gz")
			writeBundle(t, bad, tc.forge(readBundle(t, honest)))
			parent, tmp := t.TempDir(), t.TempDir()
			m := runLimited(t, bin, parent, tmp, 5*time.Minute, nil, append([]string{"verify-bundle", bad, "--dir", filepath.Join(parent, "x")}, tc.args...)...)
			if tc.ok != (m.err == nil) {
				t.Fatalf("verify-bundle: %v\n%s", m.err, m.out)
			}
			for _, want := range tc.want {
				if !strings.Contains(m.out, want) {
					t.Errorf("want %q in\n%s", want, m.out)
				}
			}
			if m.maxRSS > verifyRSSLimit {
				t.Errorf("peak RSS %d MiB, over the target of %d MiB", m.maxRSS>>20, verifyRSSLimit>>20)
			}
			t.Logf("peak RSS %d MiB", m.maxRSS>>20)
			if _, err := os.Stat(filepath.Join(parent, "x")); err == nil {
				onlyEntries(t, parent, "x") // --dir: kept, as asked
			} else {
				onlyEntries(t, parent)
			}
			onlyEntries(t, tmp)
		})
	}
}

// TestHostileRemoteCorpus: a file:// remote holding a 2 GiB object behind
// a signed entry, a named pipe as an entry and a link to a file outside as
// an object; key files that are a named pipe, a link to one, /dev/zero.
// Readers never hang, refuse each, compute what they must, stay within 256
// MiB, and write nothing outside their project and the remote.
func TestHostileRemoteCorpus(t *testing.T) {
	bin := buildThv(t, moduleRoot(t))
	keys, remoteDir, outside := t.TempDir(), t.TempDir(), t.TempDir()
	url := "file://" + remoteDir
	if out, err := run(bin, keys, "key", "generate", filepath.Join(keys, "alice")); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	secret := filepath.Join(outside, "secret")
	if err := os.WriteFile(secret, []byte("outside"), 0o644); err != nil {
		t.Fatal(err)
	}
	a := t.TempDir()
	m := runLimited(t, bin, a, t.TempDir(), 5*time.Minute, nil, "repro", "--params", tinyParams(t), "-j", "2", "--remote", url, "--sign-key", filepath.Join(keys, "alice.key"))
	if m.err != nil {
		t.Fatalf("A: %v\n%s", m.err, m.out)
	}
	lock := must(os.ReadFile(filepath.Join(a, tinyLock)))
	// The 2 GiB object: the first object of the instance task (sparse).
	obj := regexp.MustCompile(`"instance":"sha256:([0-9a-f]{64})"`).FindSubmatch(lock)
	if obj == nil {
		t.Fatal("no instance output in the lock")
	}
	h := string(obj[1])
	if err := os.Truncate(filepath.Join(remoteDir, "objects", h[:2], h), 2<<30); err != nil {
		t.Fatal(err)
	}
	// A named pipe as the entry of another task, a link outside as an
	// object of a third.
	entries, _ := filepath.Glob(filepath.Join(remoteDir, "index", "*", "*.json"))
	objects, _ := filepath.Glob(filepath.Join(remoteDir, "objects", "*", "*"))
	if len(entries) < 2 || len(objects) < 2 {
		t.Fatalf("%d entries, %d objects on the remote", len(entries), len(objects))
	}
	// The pipe replaces the first entry of a task that is no instance task,
	// so that the instance's 2 GiB object is still asked for.
	instanceKeys := map[string]bool{}
	for _, m := range regexp.MustCompile(`"kind":"instance","key":"sha256:([0-9a-f]{64})"`).FindAllSubmatch(lock, -1) {
		instanceKeys[string(m[1])] = true
	}
	pipe := slices.IndexFunc(entries, func(e string) bool { return !instanceKeys[strings.TrimSuffix(filepath.Base(e), ".json")] })
	if len(instanceKeys) == 0 || pipe < 0 {
		t.Fatalf("%d instance tasks in the lock, no other task's entry among %d", len(instanceKeys), len(entries))
	}
	os.Remove(entries[pipe])
	if err := syscall.Mkfifo(entries[pipe], 0o644); err != nil {
		t.Fatal(err)
	}
	victim := objects[len(objects)-1]
	if strings.HasSuffix(victim, h) {
		victim = objects[len(objects)-2]
	}
	os.Remove(victim)
	if err := os.Symlink(secret, victim); err != nil {
		t.Fatal(err)
	}
	trusted := filepath.Join(keys, "alice.pub")

	t.Run("pull", func(t *testing.T) {
		b, tmp := t.TempDir(), t.TempDir()
		m := runLimited(t, bin, b, tmp, 3*time.Minute, nil, "pull", "--params", tinyParams(t), "--remote", url, "--trusted-keys", trusted)
		// B has no lock: pull syncs what a lock references, so it says so.
		if m.err == nil || !strings.Contains(m.out, "records no tasks") {
			t.Fatalf("pull without a lock: %v\n%s", m.err, m.out)
		}
		if err := os.WriteFile(filepath.Join(b, tinyLock), lock, 0o644); err != nil {
			t.Fatal(err)
		}
		m = runLimited(t, bin, b, tmp, 3*time.Minute, nil, "pull", "--params", tinyParams(t), "--remote", url, "--trusted-keys", trusted)
		if m.err == nil || !strings.Contains(m.out, "refused") || !strings.Contains(m.out, "more than the") {
			t.Errorf("pull of a hostile remote: %v\n%s", m.err, m.out)
		}
		if m.maxRSS > remoteRSSLimit {
			t.Errorf("pull: peak RSS %d MiB, over %d MiB", m.maxRSS>>20, remoteRSSLimit>>20)
		}
		t.Logf("pull: peak RSS %d MiB", m.maxRSS>>20)
		onlyEntries(t, tmp)
	})
	t.Run("repro", func(t *testing.T) {
		b, tmp := t.TempDir(), t.TempDir()
		m := runLimited(t, bin, b, tmp, 5*time.Minute, nil, "repro", "--params", tinyParams(t), "-j", "2", "--remote", url, "--trusted-keys", trusted, "--require-remote")
		if m.err == nil || !strings.Contains(m.out, "--require-remote: remote "+url+" could have served tasks") {
			t.Errorf("repro from a hostile remote under --require-remote: %v\n%s", m.err, m.out)
		}
		if got := must(os.ReadFile(filepath.Join(b, tinyLock))); !bytes.Equal(got, lock) {
			t.Error("B's lock is not A's: what was refused was not computed right")
		}
		if m.maxRSS > remoteRSSLimit {
			t.Errorf("repro: peak RSS %d MiB, over %d MiB", m.maxRSS>>20, remoteRSSLimit>>20)
		}
		t.Logf("repro: peak RSS %d MiB", m.maxRSS>>20)
		onlyEntries(t, tmp)
	})
	if got, _ := os.ReadFile(secret); string(got) != "outside" {
		t.Fatalf("the file outside the remote changed: %q", got)
	}

	fifo := filepath.Join(keys, "fifo.key")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(keys, "link.pub")
	if err := os.Symlink(fifo, link); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"a named pipe as the signing key", []string{"--sign-key", fifo}, "not a regular file (a named pipe)"},
		{"a link to a named pipe as a trusted key", []string{"--trusted-keys", link}, "not a regular file (a named pipe)"},
		{"/dev/zero as the signing key", []string{"--sign-key", "/dev/zero"}, "not a regular file (a character device)"},
		{"/dev/zero as a trusted key", []string{"--trusted-keys", "/dev/zero"}, "not a regular file (a character device)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir, tmp := t.TempDir(), t.TempDir()
			m := runLimited(t, bin, dir, tmp, time.Minute, nil, append([]string{"repro", "--params", tinyParams(t), "--remote", url}, c.args...)...)
			if m.err == nil || !strings.Contains(m.out, c.want) {
				t.Fatalf("%v, want %q in\n%s", m.err, c.want, m.out)
			}
			var ee *exec.ExitError
			if !errors.As(m.err, &ee) {
				t.Fatalf("not an exit: %v", m.err)
			}
			onlyEntries(t, tmp)
		})
	}
}
