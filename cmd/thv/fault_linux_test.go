//go:build linux

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"thv/internal/testenv"
)

// mountOrSkip mounts (or remounts) with syscall.Mount. Outside CI a
// machine where that is impossible (not root) skips the test; in CI it
// fails, because CI runs as root and must run every fault test.
func mountOrSkip(t *testing.T, source, target, fstype string, flags uintptr, data string) {
	t.Helper()
	if err := syscall.Mount(source, target, fstype, flags, data); err != nil {
		testenv.Missing(t, "mount %s on %s: %v: needs root (CI runs as root)", source, target, err)
	}
}

func unmount(target string) { syscall.Unmount(target, syscall.MNT_DETACH) }

// TestFullDisk runs the tiny protocol with its store on a 256 KiB tmpfs:
// thv repro fails with a clear "no space" error and nothing half-written;
// after the disk is grown, a rerun completes with the lock of a clean run.
func TestFullDisk(t *testing.T) {
	bin := buildThv(t, moduleRoot(t))
	clean := t.TempDir()
	thvRepro(t, bin, clean)

	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	os.MkdirAll(store, 0o755)
	mountOrSkip(t, "tmpfs", store, "tmpfs", 0, "size=256k")
	defer unmount(store)
	cmd := exec.Command(bin, "repro", "--params", tinyParams(t), "--store", store, "-j", "2")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("repro on a full disk succeeded:\n%s", out)
	}
	if !strings.Contains(string(out), "no space left on device") {
		t.Fatalf("repro on a full disk said:\n%s", out)
	}
	entries, _ := os.ReadDir(filepath.Join(store, "tmp"))
	if len(entries) != 0 {
		t.Errorf("%d temporary files left in the store after the failure", len(entries))
	}
	mountOrSkip(t, "tmpfs", store, "tmpfs", syscall.MS_REMOUNT, "size=64m")
	r := thvRepro(t, bin, dir, "--store", store)
	if r.Failed != 0 || r.Executed == 0 {
		t.Fatalf("rerun after growing the disk: %+v", r)
	}
	requireSameLock(t, clean, dir, "after a full disk and a rerun")
}

// TestReadOnlyStore mounts a finished store read-only: status, show and a
// no-op repro work; a repro that must execute fails clearly, and the lock
// stays that of the clean run.
func TestReadOnlyStore(t *testing.T) {
	bin := buildThv(t, moduleRoot(t))
	dir := t.TempDir()
	thvRepro(t, bin, dir)
	store := filepath.Join(dir, ".thv")
	mountOrSkip(t, store, store, "", syscall.MS_BIND, "")
	defer unmount(store)
	mountOrSkip(t, "", store, "", syscall.MS_REMOUNT|syscall.MS_BIND|syscall.MS_RDONLY, "")
	lock, _ := os.ReadFile(filepath.Join(dir, tinyLock))

	if out := thv(t, bin, dir, "status"); !strings.Contains(out, "up to date") {
		t.Fatalf("status on a read-only store:\n%s", out)
	}
	thv(t, bin, dir, "show")
	if r := thvRepro(t, bin, dir); r.Executed != 0 || r.Failed != 0 {
		t.Fatalf("no-op repro on a read-only store: %+v", r)
	}
	cmd := exec.Command(bin, "repro", "--params", tinyParams(t), "--set", "settings.d2.T=110")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "read-only file system") {
		t.Fatalf("a repro that must write to a read-only store: %v\n%s", err, out)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, tinyLock)); !bytes.Equal(b, lock) {
		t.Fatal("a failed repro on a read-only store changed the lock")
	}
}
