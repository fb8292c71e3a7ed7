//go:build linux

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestKilledVerifyBundleTempDataSwept: thv verify-bundle SIGKILLed while it
// works leaves its temp directory (the extracted bundle); a thv command
// that does not make temp data leaves it, and the next one that does (here
// thv verify, even failing at once for want of a project) removes it.
// Temp directories without THV's marker are left alone.
func TestKilledVerifyBundleTempDataSwept(t *testing.T) {
	bin, path := tinyBundle(t)
	tmp := t.TempDir()
	env := append(os.Environ(), "TMPDIR="+tmp)
	foreign := filepath.Join(tmp, "thv-verify-bundle-foreign")
	os.MkdirAll(filepath.Join(foreign, "data"), 0o700)

	cmd := exec.Command(bin, "verify-bundle", path, "--all")
	cmd.Dir, cmd.Env = t.TempDir(), env
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	// Kill it once the extraction has begun in its temp directory.
	var left string
	for deadline := time.Now().Add(60 * time.Second); left == ""; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("verify-bundle made no temp directory within 60 s")
		}
		matches, _ := filepath.Glob(filepath.Join(tmp, "thv-verify-bundle-*", "data", "bundle", "*"))
		if len(matches) > 0 {
			left = filepath.Dir(filepath.Dir(filepath.Dir(matches[0])))
		}
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if _, err := os.Stat(filepath.Join(left, "owner.lock")); err != nil {
		t.Fatalf("the killed verify-bundle left no marked directory: %v", err)
	}

	runIn := func(args ...string) string {
		c := exec.Command(bin, args...)
		c.Dir, c.Env = t.TempDir(), env
		out, _ := c.CombinedOutput()
		return string(out)
	}
	runIn("algos") // makes no temp data: no sweep
	if _, err := os.Stat(left); err != nil {
		t.Fatalf("thv algos swept: %v", err)
	}
	if out := runIn("verify"); strings.Contains(out, "warning") {
		t.Errorf("thv verify warned: %s", out)
	}
	if _, err := os.Stat(left); !os.IsNotExist(err) {
		t.Errorf("the killed verify-bundle's %s is still there after thv verify started: %v", left, err)
	}
	if _, err := os.Stat(filepath.Join(foreign, "data")); err != nil {
		t.Errorf("a directory without the marker was removed: %v", err)
	}
}
