//go:build unix

package tempdir

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// childEnv makes the test binary a child that creates a temp directory,
// prints its root, and waits for its standard input to close; then it
// exits without removing it.
const childEnv = "THV_TEMPDIR_TEST_CHILD"

func TestMain(m *testing.M) {
	if prefix := os.Getenv(childEnv); prefix != "" {
		d, err := New(prefix)
		if err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(2)
		}
		os.Stdout.WriteString(d.Root() + "\n")
		io.Copy(io.Discard, os.Stdin)
		os.Exit(0) // no Remove: as a thv that dies
	}
	os.Exit(m.Run())
}

type child struct {
	cmd  *exec.Cmd
	in   io.WriteCloser
	root string
}

// startChild starts a child process that holds a temp directory under the
// test's TMPDIR.
func startChild(t *testing.T, prefix string) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+prefix)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("child: %v", err)
	}
	return &child{cmd: cmd, in: in, root: strings.TrimSpace(line)}
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

func write(t *testing.T, p, s string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestSweep: the directory of a SIGKILLed process is removed by the next
// sweep, without following the links in it; the directories of a live
// process (another one, and this one) stay, and so does everything without
// the marker, with another prefix, or reached through a link. A process
// that exits without removing its directory is swept too.
func TestSweep(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	outside := t.TempDir()
	precious := filepath.Join(outside, "precious")
	write(t, precious, "keep")

	killed := startChild(t, "thv-killed-")
	data := filepath.Join(killed.root, dataName)
	write(t, filepath.Join(data, "partial"), "61 MB of it")
	os.Symlink(precious, filepath.Join(data, "to-a-file"))
	os.Symlink(outside, filepath.Join(data, "to-a-dir"))
	killed.cmd.Process.Signal(syscall.SIGKILL)
	killed.cmd.Wait()

	alive := startChild(t, "thv-alive-")
	mine, err := New("thv-mine-")
	if err != nil {
		t.Fatal(err)
	}
	if mine.Path() != filepath.Join(mine.Root(), "data") || filepath.Dir(mine.Root()) != tmp {
		t.Fatalf("dir %s, path %s: not under TMPDIR %s", mine.Root(), mine.Path(), tmp)
	}
	if entries, _ := os.ReadDir(mine.Path()); len(entries) != 0 {
		t.Errorf("Path is not empty: %v", entries)
	}

	// Not ours to remove.
	foreign := map[string]string{
		"thv-no-marker":    "",           // THV's prefix, no owner.lock
		"thv-lock-is-dir":  "dir",        // owner.lock a directory
		"thv-lock-is-link": "link",       // owner.lock a link to a free lock
		"other-thv-dead":   "lock",       // a free lock, another prefix
		"thv":              "lock-noext", // no dash: not THV's prefix
	}
	freeLock := filepath.Join(outside, "free.lock")
	write(t, freeLock, "")
	for name, kind := range foreign {
		p := filepath.Join(tmp, name)
		os.Mkdir(p, 0o700)
		write(t, filepath.Join(p, "file"), "x")
		switch kind {
		case "dir":
			os.Mkdir(filepath.Join(p, lockName), 0o700)
		case "link":
			os.Symlink(freeLock, filepath.Join(p, lockName))
		case "lock", "lock-noext":
			write(t, filepath.Join(p, lockName), "")
		}
	}
	// A link with THV's prefix to a dead THV directory elsewhere.
	deadElsewhere := filepath.Join(outside, "thv-dead")
	os.MkdirAll(filepath.Join(deadElsewhere, dataName), 0o700)
	write(t, filepath.Join(deadElsewhere, lockName), "")
	os.Symlink(deadElsewhere, filepath.Join(tmp, "thv-link"))

	removed, err := Sweep()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(removed, []string{killed.root}) {
		t.Fatalf("swept %v, want only the killed process's %s", removed, killed.root)
	}
	if exists(killed.root) {
		t.Error("the killed process's directory is still there")
	}
	for _, p := range []string{precious, outside, alive.root, filepath.Join(alive.root, lockName), mine.Path(), freeLock,
		filepath.Join(deadElsewhere, lockName), filepath.Join(tmp, "thv-link")} {
		if !exists(p) {
			t.Errorf("%s was removed", p)
		}
	}
	for name := range foreign {
		if !exists(filepath.Join(tmp, name, "file")) {
			t.Errorf("foreign %s was touched", name)
		}
	}

	// The live child ends without removing its directory: the next sweep
	// removes it, and this process's own stays.
	alive.in.Close()
	if err := alive.cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	if removed, err := Sweep(); err != nil || !slices.Equal(removed, []string{alive.root}) {
		t.Fatalf("second sweep: %v, %v; want %s", removed, err, alive.root)
	}
	if !exists(mine.Path()) {
		t.Fatal("this process's directory was swept")
	}
	if err := mine.Remove(); err != nil || exists(mine.Root()) {
		t.Fatalf("Remove: %v, exists %v", err, exists(mine.Root()))
	}
	if err := mine.Remove(); err != nil {
		t.Errorf("second Remove: %v", err)
	}
}

// TestSweepRacesNew: sweeps running while directories are made never
// remove one: the lock is held before owner.lock has its name.
func TestSweepRacesNew(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
				if removed, err := Sweep(); err != nil || len(removed) > 0 {
					t.Errorf("swept %v, %v", removed, err)
				}
			}
		}
	})
	for range 300 {
		d, err := New("thv-race-")
		if err != nil {
			t.Fatal(err)
		}
		if !exists(d.Path()) {
			t.Fatalf("%s removed while its owner lives", d.Path())
		}
		d.Remove()
	}
	close(stop)
	wg.Wait()
}

func TestNewRefusesOtherPrefixes(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	for _, p := range []string{"", "tmp-", "thv", "thv-a/b-", "thv-*-"} {
		if d, err := New(p); err == nil {
			d.Remove()
			t.Errorf("New(%q) accepted", p)
		}
	}
}
