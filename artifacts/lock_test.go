package artifacts

import (
	"bufio"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// lockHelperEnv turns the test binary into a process that holds the store
// in lockHelperDirEnv in some way, says "ready <detail>" on stdout, and
// holds on until its stdin closes (or it is killed):
//
//	shared     LockShared
//	exclusive  LockExclusive
//	repro      LockShared, then Put objects and an entry, like a pass
//	temp       a locked temp file of its own, half written, like a writer
const (
	lockHelperEnv    = "THV_ARTIFACTS_LOCK_HELPER"
	lockHelperDirEnv = "THV_ARTIFACTS_LOCK_HELPER_DIR"
)

// reproKey is the entry the "repro" helper writes.
var reproKey = Key(sha256.Sum256([]byte("repro helper")))

func lockHelper(mode, dir string) {
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, "lock helper:", err)
		os.Exit(2)
	}
	s, err := Open(dir, Create)
	if err != nil {
		fail(err)
	}
	detail := ""
	switch mode {
	case "shared", "repro":
		if _, err := s.LockShared(); err != nil {
			fail(err)
		}
		if mode == "repro" {
			var outs []Output
			for i := range 3 {
				b := fmt.Appendf(nil, "output %d of a running pass", i)
				d, err := s.Put(b)
				if err != nil {
					fail(err)
				}
				outs = append(outs, Output{fmt.Sprint("o", i), d, int64(len(b))})
			}
			if err := s.PutEntry(Entry{Key: reproKey, Kind: "run", Outputs: outs}); err != nil {
				fail(err)
			}
		}
	case "exclusive":
		if _, err := s.LockExclusive(); err != nil {
			fail(err)
		}
	case "temp":
		f, _, err := s.atomic().createTemp(strings.Repeat("7c", 32))
		if err != nil {
			fail(err)
		}
		if err := lockTemp(f); err != nil {
			fail(err)
		}
		f.WriteString("half an obj")
		detail = f.Name()
	default:
		fail(fmt.Errorf("unknown mode %q", mode))
	}
	fmt.Println("ready", detail)
	io.Copy(io.Discard, os.Stdin)
}

type helper struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	detail string
}

// startHelper runs the test binary as a lock helper and waits until it
// holds what mode says.
func startHelper(t *testing.T, mode, dir string) *helper {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), lockHelperEnv+"="+mode, lockHelperDirEnv+"="+dir)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
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
	h := &helper{cmd: cmd, stdin: stdin}
	t.Cleanup(func() { h.kill() })
	line, err := bufio.NewReader(out).ReadString('\n')
	rest, ok := strings.CutPrefix(strings.TrimSuffix(line, "\n"), "ready")
	if err != nil || !ok {
		t.Fatalf("%s helper said %q, %v", mode, line, err)
	}
	h.detail = strings.TrimSpace(rest)
	return h
}

// stop lets the helper exit normally.
func (h *helper) stop(t *testing.T) {
	t.Helper()
	h.stdin.Close()
	if err := h.cmd.Wait(); err != nil {
		t.Fatalf("helper: %v", err)
	}
}

// kill SIGKILLs the helper: no cleanup of its own runs.
func (h *helper) kill() {
	if h.cmd.ProcessState == nil {
		h.cmd.Process.Kill()
		h.cmd.Wait()
	}
}

func withSharedLockWait(t *testing.T, d time.Duration) {
	old := sharedLockWait
	sharedLockWait = d
	t.Cleanup(func() { sharedLockWait = old })
}

// TestGCWhileReproHoldsTheStore: a pass (a
// separate process holding the store shared) has written objects and an
// entry that no keep set of the gc covers. GC must refuse, remove nothing
// and say why; once the pass is over, GC works.
func TestGCWhileReproHoldsTheStore(t *testing.T) {
	if !flockSupported {
		t.Skip("no flock on this system: the store lock is a no-op")
	}
	s := openTemp(t)
	old, _ := s.Put([]byte("garbage of an earlier pass"))
	h := startHelper(t, "repro", s.Root())

	e, ok, err := s.GetEntry(reproKey)
	if !ok || err != nil {
		t.Fatalf("the pass's entry: %v, %v", ok, err)
	}
	before := tree(t, s.Root())
	st, err := s.GC(nil, nil)
	if err == nil {
		t.Fatalf("GC ran while a pass held the store: %+v", st)
	}
	if !errors.Is(err, ErrLocked) || st != (GCStats{}) {
		t.Errorf("GC = %+v, %v; want nothing done and ErrLocked", st, err)
	}
	for _, want := range []string{s.Root(), "in use", "thv repro", "run gc again", filepath.Join(s.Root(), "LOCK")} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	if after := tree(t, s.Root()); !slices.Equal(before, after) {
		t.Errorf("refused GC changed the store:\nbefore %v\nafter  %v", before, after)
	}
	for _, o := range e.Outputs {
		if _, err := s.Get(o.Digest); err != nil {
			t.Errorf("the pass's output %s: %v", o.Name, err)
		}
	}
	// A dry run takes no lock and still counts.
	if dry, err := s.GCDryRun(nil, nil); err != nil || dry.ObjectsRemoved != 4 || dry.EntriesRemoved != 1 {
		t.Errorf("GCDryRun = %+v, %v", dry, err)
	}

	h.stop(t)
	keep := map[Digest]bool{}
	for _, o := range e.Outputs {
		keep[o.Digest] = true
	}
	st, err = s.GC(keep, map[Key]bool{reproKey: true})
	if err != nil || st.ObjectsRemoved != 1 || st.ObjectsKept != 3 || st.EntriesKept != 1 || s.Has(old) {
		t.Errorf("GC after the pass = %+v, %v", st, err)
	}
}

// TestStoreLockAcrossProcesses: shared holders coexist, exclusive excludes
// both ways, a shared waiter gives up after its wait with a clear error,
// and a SIGKILLed holder releases the lock.
func TestStoreLockAcrossProcesses(t *testing.T) {
	if !flockSupported {
		t.Skip("no flock on this system: the store lock is a no-op")
	}
	s := openTemp(t)

	h := startHelper(t, "shared", s.Root())
	unlock, err := s.LockShared()
	if err != nil {
		t.Fatalf("a second shared holder: %v", err)
	}
	unlock()
	if _, err := s.LockExclusive(); !errors.Is(err, ErrLocked) {
		t.Fatalf("LockExclusive under a shared holder: %v", err)
	}
	h.kill() // SIGKILL: the kernel drops its lock
	unlock, err = s.LockExclusive()
	if err != nil {
		t.Fatalf("LockExclusive after the holder died: %v", err)
	}
	unlock()

	h = startHelper(t, "exclusive", s.Root())
	if _, err := s.LockExclusive(); !errors.Is(err, ErrLocked) {
		t.Fatalf("LockExclusive under an exclusive holder: %v", err)
	}
	withSharedLockWait(t, 300*time.Millisecond)
	start := time.Now()
	_, err = s.LockShared()
	if waited := time.Since(start); waited < 300*time.Millisecond {
		t.Errorf("LockShared gave up after %v, want it to wait 300ms", waited)
	}
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "garbage-collected") || !strings.Contains(err.Error(), "waited 300ms") {
		t.Errorf("LockShared under gc: %v", err)
	}
	// A waiter that the gc releases in time gets the lock.
	withSharedLockWait(t, 10*time.Second)
	go func() {
		time.Sleep(100 * time.Millisecond)
		h.stdin.Close()
	}()
	unlock, err = s.LockShared()
	if err != nil {
		t.Fatalf("LockShared after gc finished: %v", err)
	}
	unlock()
}

// TestStoreLockTwoHandles: flock belongs to the open file description, so
// two handles in one process exclude each other like two processes; holds
// of one handle nest, and GC reuses its caller's exclusive hold.
func TestStoreLockTwoHandles(t *testing.T) {
	if !flockSupported {
		t.Skip("no flock on this system: the store lock is a no-op")
	}
	withSharedLockWait(t, 100*time.Millisecond)
	a := openTemp(t)
	b, err := Open(a.Root(), Create)
	if err != nil {
		t.Fatal(err)
	}
	unlockA, err := a.LockShared()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.LockExclusive(); !errors.Is(err, ErrLocked) {
		t.Errorf("b.LockExclusive under a's shared lock: %v", err)
	}
	if _, err := b.GC(nil, nil); !errors.Is(err, ErrLocked) {
		t.Errorf("b.GC under a's shared lock: %v", err)
	}
	if _, err := a.LockExclusive(); err == nil || !strings.Contains(err.Error(), "holds the store lock shared") {
		t.Errorf("upgrade: %v", err)
	}
	unlockA2, err := a.LockShared() // nests
	if err != nil {
		t.Fatal(err)
	}
	unlockA()
	unlockA() // a second call releases nothing more
	if _, err := b.LockExclusive(); !errors.Is(err, ErrLocked) {
		t.Errorf("b.LockExclusive while a still holds one nested hold: %v", err)
	}
	unlockA2()

	unlockB, err := b.LockExclusive()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.LockShared(); !errors.Is(err, ErrLocked) {
		t.Errorf("a.LockShared under b's exclusive lock: %v", err)
	}
	if _, err := b.GC(nil, nil); err != nil {
		t.Errorf("GC by the exclusive holder: %v", err)
	}
	if u, err := b.LockShared(); err != nil {
		t.Errorf("shared under one's own exclusive hold: %v", err)
	} else {
		u()
	}
	unlockB()
	if u, err := a.LockShared(); err != nil {
		t.Errorf("a.LockShared after b released: %v", err)
	} else {
		u()
	}
}

// TestOpenCleansTempOfKilledWriter: the temp file of a writer killed with
// SIGKILL mid-write is removed by the next Open (and counted by GC while
// the writer lives), not before.
func TestOpenCleansTempOfKilledWriter(t *testing.T) {
	if !flockSupported {
		t.Skip("no flock: abandoned temp files are recognised by age instead")
	}
	s := openTemp(t)
	h := startHelper(t, "temp", s.Root())
	if !isTempName(filepath.Base(h.detail)) {
		t.Fatalf("helper's temp file %q", h.detail)
	}
	if _, err := Open(s.Root(), Create); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(h.detail); err != nil {
		t.Fatalf("Open removed a live writer's temp file: %v", err)
	}
	if st, err := s.GCDryRun(nil, nil); err != nil || st.TmpLive != 1 || st.TmpRemoved != 0 {
		t.Errorf("GCDryRun with a live writer = %+v, %v", st, err)
	}
	h.kill()
	if _, err := os.Stat(h.detail); err != nil {
		t.Fatalf("the killed writer's temp file is gone before Open: %v", err)
	}
	if _, err := Open(s.Root(), Create); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(h.detail); err == nil {
		t.Error("Open left the killed writer's temp file")
	}
}
