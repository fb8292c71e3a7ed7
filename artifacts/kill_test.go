package artifacts

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// helperEnv, when set to a store directory, turns the test binary into a
// writer that Puts objects into that store until it is killed (the os/exec
// tests' re-exec pattern).
const helperEnv = "THV_ARTIFACTS_PUT_HELPER"

func TestMain(m *testing.M) {
	if dir := os.Getenv(helperEnv); dir != "" {
		putForever(dir)
		os.Exit(0)
	}
	if path := os.Getenv(writeFileHelperEnv); path != "" {
		writeFileForever(path)
		os.Exit(0)
	}
	if mode := os.Getenv(lockHelperEnv); mode != "" {
		lockHelper(mode, os.Getenv(lockHelperDirEnv))
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func putForever(dir string) {
	s, err := Open(dir, Create)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	var once sync.Once
	for w := range 4 {
		go func() {
			r := rand.New(rand.NewPCG(uint64(os.Getpid()), uint64(w)))
			buf := make([]byte, 256<<10)
			for {
				for i := 0; i+8 <= len(buf); i += 8 {
					binary.LittleEndian.PutUint64(buf[i:], r.Uint64())
				}
				if _, err := s.Put(buf); err != nil {
					fmt.Fprintln(os.Stderr, err)
					os.Exit(3)
				}
				once.Do(func() { fmt.Println("ready") })
			}
		}()
	}
	select {}
}

// TestKillDuringPuts SIGKILLs a process in the middle of writing many objects,
// several times, while this process keeps reading the store. No partial
// object may ever be visible in objects/, every object left must verify, and
// GC must clean the temp files of the dead writers.
func TestKillDuringPuts(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns writer processes")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Skip("no test executable:", err)
	}
	dir := filepath.Join(t.TempDir(), ".thv")
	s, err := Open(dir, Create)
	if err != nil {
		t.Fatal(err)
	}

	// A concurrent reader: every object visible at any time must be whole.
	stop := make(chan struct{})
	var scans atomic.Int64
	var readerWG sync.WaitGroup
	readerWG.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			for _, d := range objectsIn(t, s) {
				if err := s.Verify(d); err != nil && !errors.Is(err, ErrNotFound) {
					t.Errorf("while writers run: %v", err)
				}
			}
			scans.Add(1)
		}
	})

	r := rand.New(rand.NewPCG(1, 2))
	for range 3 {
		killHelper(t, exe, helperEnv+"="+dir, r)
	}
	close(stop)
	readerWG.Wait()

	objs := objectsIn(t, s)
	if len(objs) < 3 {
		t.Fatalf("only %d objects written; the test did not exercise much", len(objs))
	}
	for _, d := range objs {
		if err := s.Verify(d); err != nil {
			t.Errorf("after kill: %v", err)
		}
	}
	if files := listFiles(t, filepath.Join(dir, "corrupt")); len(files) != 0 {
		t.Errorf("corrupt/ = %v", files)
	}
	leftovers := listFiles(t, filepath.Join(dir, "tmp"))
	t.Logf("%d objects, %d temp leftovers, %d concurrent scans", len(objs), len(leftovers), scans.Load())

	keep := make(map[Digest]bool)
	for _, d := range objs {
		keep[d] = true
	}
	st, err := s.GC(keep, nil)
	if err != nil {
		t.Fatal(err)
	}
	if st.TmpRemoved != len(leftovers) || st.ObjectsRemoved != 0 || st.ObjectsKept != len(objs) {
		t.Errorf("GC = %+v, want %d temp files removed and %d objects kept", st, len(leftovers), len(objs))
	}
	if files := listFiles(t, filepath.Join(dir, "tmp")); len(files) != 0 {
		t.Errorf("tmp/ after GC = %v", files)
	}
	for _, d := range objs {
		if err := s.Verify(d); err != nil {
			t.Errorf("after GC: %v", err)
		}
	}
}

// killHelper starts the test binary as the helper that env selects, waits
// until it says it is writing ("ready"), lets it write for 20 to 100 ms and
// SIGKILLs it, checking that it died by the signal.
func killHelper(t *testing.T, exe, env string, r *rand.Rand) {
	t.Helper()
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), env)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "ready\n" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("helper %s said %q, %v", env, line, err)
	}
	time.Sleep(time.Duration(20+r.IntN(80)) * time.Millisecond)
	if err := cmd.Process.Kill(); err != nil { // SIGKILL: no cleanup runs
		t.Fatal(err)
	}
	err = cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != -1 {
		t.Fatalf("helper %s did not die by the signal: %v", env, err)
	}
}

// objectsIn lists the digests of the files in objects/, checking that each
// one's name is a digest in the right fan-out directory.
func objectsIn(t *testing.T, s *Store) []Digest {
	var out []Digest
	for _, rel := range listFiles(t, filepath.Join(s.Root(), "objects")) {
		fan, name := filepath.Split(rel)
		d, err := ParseDigest("sha256:" + name)
		if err != nil || filepath.Clean(fan) != name[:2] {
			t.Errorf("unexpected file objects/%s", rel)
			continue
		}
		out = append(out, d)
	}
	return out
}
