//go:build linux

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"thv/artifacts"
	"thv/pipeline"
	"thv/pipeline/container"
	"thv/stages/protocol"
)

// requireRuntime skips a test whose container runtime is missing or
// unusable here (not root), except in CI, which installs runc and podman
// and runs as root: there it fails.
func requireRuntime(t *testing.T, name string) {
	t.Helper()
	_, err := exec.LookPath(name)
	if err == nil && os.Geteuid() != 0 {
		err = os.ErrPermission
	}
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("container runtime %s: %v (CI installs it and runs as root: apt-get install runc podman)", name, err)
		}
		t.Skipf("container runtime %s not usable here: %v", name, err)
	}
}

var imageLine = regexp.MustCompile(`(?m)^"image": "(sha256:[0-9a-f]{64})",\n`)

// TestContainerExecutorSameLock: the quick profile run in containers, by
// runc and by podman, gives the local executor's lock byte for byte, but
// for the provenance line naming the image, which is the image thv image
// builds. The image digest is the same from two builds in two places.
func TestContainerExecutorSameLock(t *testing.T) {
	bin, local := quickLocal(t)
	want, err := os.ReadFile(filepath.Join(local, "thv.quick.lock"))
	if err != nil || len(want) == 0 {
		t.Fatalf("local lock: %v", err)
	}
	digest := imageDigest(t, bin, t.TempDir())
	if again := imageDigest(t, bin, t.TempDir()); again != digest {
		t.Fatalf("two builds of the image: %s, then %s", digest, again)
	}
	for _, rt := range []string{"runc", "podman"} {
		t.Run(rt, func(t *testing.T) {
			requireRuntime(t, rt)
			dir := t.TempDir()
			thvOK(t, bin, dir, "repro", "--profile", "quick", "-j", "2", "--executor", "container", "--runtime", rt)
			got, _ := os.ReadFile(filepath.Join(dir, "thv.quick.lock"))
			m := imageLine.FindSubmatch(got)
			if m == nil || string(m[1]) != digest {
				t.Fatalf("the lock does not record image %s as provenance:\n%.300s", digest, got)
			}
			if !bytes.Equal(imageLine.ReplaceAll(got, nil), want) {
				t.Fatal("--executor container wrote another lock than --executor local (beyond the image line)")
			}
			// And a container verify re-executes tasks identically.
			if out := thvOK(t, bin, dir, "verify", "--profile", "quick", "--sample", "20", "--skip-store", "--executor", "container", "--runtime", rt); !strings.Contains(out, "every output identical") {
				t.Fatalf("verify in %s:\n%s", rt, out)
			}
		})
	}
}

// thvOK runs the binary in dir with args, fails the test on an error, and
// returns its output.
func thvOK(t *testing.T, bin, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("thv %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// imageDigest runs thv image -o in dir and returns the digest it prints,
// after checking the archive is written.
func imageDigest(t *testing.T, bin, dir string) string {
	t.Helper()
	out := thvOK(t, bin, dir, "image", "-o", "img.tar")
	m := regexp.MustCompile(`image (sha256:[0-9a-f]{64})`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("thv image printed:\n%s", out)
	}
	if fi, err := os.Stat(filepath.Join(dir, "img.tar")); err != nil || fi.Size() == 0 {
		t.Fatalf("thv image -o: %v", err)
	}
	return m[1]
}

// testImage builds the image of the test's static thv binary.
func testImage(t *testing.T) *container.Image {
	t.Helper()
	b, err := os.ReadFile(buildThv(t, moduleRoot(t)))
	if err != nil {
		t.Fatal(err)
	}
	img, err := container.BuildImage(b)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// TestContainerConfinement asks the worker, from inside the container,
// what it may do: it is uid 65534 with no capabilities, can write only to
// its scratch store, not to the root file system, /tmp or the project
// store, and has no network interface but loopback.
func TestContainerConfinement(t *testing.T) {
	img := testImage(t)
	for _, rt := range []string{"runc", "podman"} {
		t.Run(rt, func(t *testing.T) {
			requireRuntime(t, rt)
			st, err := artifacts.Open(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			ex, err := container.New(container.Options{Runtime: rt, Image: img, Store: st,
				Args: []string{container.BinaryPath, "exec-task", "--self-check", "--store", container.StoreMount, "--out", container.OutMount}})
			if err != nil {
				t.Fatal(err)
			}
			defer ex.Close()
			cmd, err := ex.Start()
			if err != nil {
				t.Fatal(err)
			}
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("self-check in %s: %v\n%s", rt, err, out)
			}
			var p sandboxProbe
			if err := json.Unmarshal(lastLine(out), &p); err != nil {
				t.Fatalf("self-check printed %q: %v", out, err)
			}
			if p.UID != container.UID || p.GID != container.GID {
				t.Errorf("runs as %d:%d, want %d:%d", p.UID, p.GID, container.UID, container.GID)
			}
			if strings.Trim(p.CapEff, "0") != "" {
				t.Errorf("effective capabilities %s, want none", p.CapEff)
			}
			for dir, wantWritable := range map[string]bool{"/": false, "/tmp": false, container.StoreMount: false, container.OutMount: true} {
				if got := p.Writable[dir] == ""; got != wantWritable {
					t.Errorf("%s writable = %v (%q), want %v", dir, got, p.Writable[dir], wantWritable)
				}
			}
			if strings.Join(p.Interfaces, ",") != "lo" {
				t.Errorf("network interfaces %v, want only lo", p.Interfaces)
			}
		})
	}
}

func lastLine(b []byte) []byte {
	lines := bytes.Split(bytes.TrimSpace(b), []byte("\n"))
	return lines[len(lines)-1]
}

// TestContainerFailures: a worker that writes outside its output (here,
// into the read-only project store) fails every task with a clear error
// and leaves nothing in the store; a missing runtime is a clear error
// before anything runs.
func TestContainerFailures(t *testing.T) {
	img := testImage(t)
	for _, rt := range []string{"runc", "podman"} {
		t.Run(rt, func(t *testing.T) {
			requireRuntime(t, rt)
			dir := t.TempDir()
			proj, err := protocol.Open(protocol.Options{LoadOptions: protocol.LoadOptions{ParamsFile: tinyParams(t)}, Dir: dir, StoreDir: filepath.Join(dir, ".thv")})
			if err != nil {
				t.Fatal(err)
			}
			ex, err := container.New(container.Options{Runtime: rt, Image: img, Store: proj.Store,
				Args: []string{container.BinaryPath, "exec-task", "--store", container.StoreMount}}) // no --out
			if err != nil {
				t.Fatal(err)
			}
			defer ex.Close()
			rep, err := proj.Repro(context.Background(), pipeline.Options{Jobs: 2, Executor: ex, Image: img.Digest.String()})
			if err != nil || rep.Failed == 0 || rep.Executed != 0 {
				t.Fatalf("repro with workers writing to the store: err %v, %+v", err, rep)
			}
			var msg string
			for _, r := range rep.Results {
				if r.Err != nil {
					msg = r.Err.Error()
					break
				}
			}
			if !strings.Contains(msg, "read-only file system") || !strings.Contains(msg, rt+" container") {
				t.Fatalf("failure message: %s", msg)
			}
			objs, err := proj.Store.Objects()
			if err != nil || len(objs) != 0 {
				t.Fatalf("%d objects in the store after failed containers (%v)", len(objs), err)
			}
			if tmp, _ := os.ReadDir(filepath.Join(proj.Store.Root(), "tmp")); len(tmp) != 0 {
				t.Fatalf("%d files left in the store's tmp/", len(tmp))
			}
		})
	}
	t.Run("missing runtime", func(t *testing.T) {
		bin := buildThv(t, moduleRoot(t))
		dir := t.TempDir()
		cmd := exec.Command(bin, "repro", "--params", tinyParams(t), "--executor", "container", "--runtime", "runc")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "PATH="+t.TempDir())
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), "container runtime runc not found on PATH") {
			t.Fatalf("repro without runc: %v\n%s", err, out)
		}
		if _, err := os.Stat(filepath.Join(dir, tinyLock)); err == nil {
			t.Fatal("a lock was written although nothing could run")
		}
	})
}
