package tempdir

import (
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"thv/internal/testenv"
)

// mountTmpfs mounts a tmpfs on target. Outside CI a machine where that is
// impossible (not root) skips the test; in CI it fails, because CI runs as
// root and must run it.
func mountTmpfs(t *testing.T, target string) {
	t.Helper()
	if err := syscall.Mount("tmpfs", target, "tmpfs", 0, "size=1m"); err != nil {
		testenv.Missing(t, "mount tmpfs on %s: %v: needs root (CI runs as root)", target, err)
	}
	t.Cleanup(func() { syscall.Unmount(target, syscall.MNT_DETACH) })
}

func mounted(t *testing.T, root string) []string {
	t.Helper()
	m, err := mountsBelow(root)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestSweepUnmounts: a dead directory with a tmpfs on its data/ (a
// container's scratch) and another nested in it is unmounted, deepest
// first, and removed; the tmpfs of a live directory is left mounted.
func TestSweepUnmounts(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	dead := startChild(t, "thv-out-")
	data := filepath.Join(dead.root, dataName)
	mountTmpfs(t, data)
	os.Mkdir(filepath.Join(data, "inner"), 0o700)
	mountTmpfs(t, filepath.Join(data, "inner"))
	write(t, filepath.Join(data, "inner", "f"), "x")
	dead.cmd.Process.Signal(syscall.SIGKILL)
	dead.cmd.Wait()

	live, err := New("thv-out-")
	if err != nil {
		t.Fatal(err)
	}
	defer live.Remove()
	mountTmpfs(t, live.Path())

	if got := mounted(t, dead.root); !slices.Equal(got, []string{filepath.Join(data, "inner"), data}) {
		t.Fatalf("mounts below %s: %v (want the nested one first)", dead.root, got)
	}
	removed, err := Sweep()
	if err != nil || !slices.Equal(removed, []string{dead.root}) {
		t.Fatalf("swept %v, %v; want %s", removed, err, dead.root)
	}
	if exists(dead.root) || len(mounted(t, dead.root)) != 0 {
		t.Errorf("dead directory: exists %v, mounts %v", exists(dead.root), mounted(t, dead.root))
	}
	if got := mounted(t, live.Root()); !slices.Equal(got, []string{live.Path()}) {
		t.Errorf("the live directory's tmpfs: %v", got)
	}
	if err := live.Remove(); err != nil || exists(live.Root()) || len(mounted(t, live.Root())) != 0 {
		t.Errorf("Remove with a tmpfs mounted: %v", err)
	}
}
