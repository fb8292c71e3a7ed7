package artifacts

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// helperEnv, when set to a store directory, turns the test binary into a
// writer that Puts objects into that store until it is killed (the os/exec
// tests' re-exec pattern).
const helperEnv = "THV_ARTIFACTS_PUT_HELPER"

// helperLooseEnv, when set, makes that writer write loose files only.
const helperLooseEnv = "THV_ARTIFACTS_PUT_LOOSE"

func TestMain(m *testing.M) {
	if dir := os.Getenv(helperEnv); dir != "" {
		putForever(dir)
		os.Exit(0)
	}
	if path := os.Getenv(writeFileHelperEnv); path != "" {
		writeFileForever(path)
		os.Exit(0)
	}
	if spec := os.Getenv(writerEnv); spec != "" {
		writeSet(spec)
		os.Exit(0)
	}
	if mode := os.Getenv(lockHelperEnv); mode != "" {
		lockHelper(mode, os.Getenv(lockHelperDirEnv))
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func putForever(dir string) {
	if os.Getenv(helperLooseEnv) != "" {
		looseLimit = 0
	}
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
// object may ever be visible, every object left must verify, and GC must
// clean the temp files of the dead writers. Loose, a partial object can
// only be a temp file; packed, a partial record at the end of a dead
// writer's pack, which is never read as an object, and which the next
// writer to take the pack sets aside (corrupt/ then holds the torn tail,
// and only that).
func TestKillDuringPuts(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns writer processes")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Skip("no test executable:", err)
	}
	for _, packed := range []bool{false, true} {
		name := map[bool]string{false: "loose", true: "packed"}[packed]
		t.Run(name, func(t *testing.T) {
			if !packed {
				setLooseForTest(t)
			}
			killDuringPuts(t, exe, packed)
		})
	}
}

func killDuringPuts(t *testing.T, exe string, packed bool) {
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
	env := []string{helperEnv + "=" + dir}
	if !packed {
		env = append(env, helperLooseEnv+"=1")
	}
	for range 3 {
		killHelper(t, exe, env, r)
	}
	close(stop)
	readerWG.Wait()

	// A writer that takes the last dead pack repairs it (packed): the
	// store opened again, one more object put.
	s, err = Open(dir, Create)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put([]byte("after the kills")); err != nil {
		t.Fatal(err)
	}
	objs := objectsIn(t, s)
	if len(objs) < 3 {
		t.Fatalf("only %d objects written; the test did not exercise much", len(objs))
	}
	for _, d := range objs {
		if err := s.Verify(d); err != nil {
			t.Errorf("after kill: %v", err)
		}
	}
	for _, f := range listFiles(t, filepath.Join(dir, "corrupt")) {
		if !packed || !strings.HasPrefix(f, "pack-tail-") {
			t.Errorf("corrupt/ holds %s", f)
		}
	}
	if packed {
		if n := len(listFiles(t, filepath.Join(dir, "corrupt"))); n == 0 {
			t.Log("no writer was killed in the middle of a record this time")
		}
		for _, f := range listFiles(t, filepath.Join(dir, "packs")) {
			if strings.HasSuffix(f, ".pack") && !packEndsWithRecord(t, filepath.Join(dir, "packs", f)) {
				t.Errorf("pack %s still has a torn tail after every pack was opened again", f)
			}
		}
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

// packEndsWithRecord reports whether the pack at p is its header and whole
// records, nothing after the last.
func packEndsWithRecord(t *testing.T, p string) bool {
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, _ := f.Stat()
	sc := packScanner{f: f, off: int64(packHeaderSize), size: fi.Size()}
	for {
		if _, _, err := sc.next(); err != nil {
			return err == io.EOF
		}
	}
}

// killHelper starts the test binary as the helper that env selects, waits
// until it says it is writing ("ready"), lets it write for 20 to 100 ms and
// SIGKILLs it, checking that it died by the signal.
func killHelper(t *testing.T, exe string, env []string, r *rand.Rand) {
	t.Helper()
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), env...)
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

// objectsIn lists the objects of s: packed, and the files in objects/,
// checking that each file's name is a digest in the right fan-out
// directory.
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
	seen := map[Digest]bool{}
	for _, h := range s.packedIDs(recObject) {
		if d := Digest(h); !seen[d] {
			seen[d] = true
			out = append(out, d)
		}
	}
	return out
}

// writerEnv, when set to "<store dir>:<name>", turns the test binary into a
// writer that puts the objects and entries of concurrentSet(name) into the
// store, then syncs it and exits.
const writerEnv = "THV_ARTIFACTS_WRITE_SET"

const concurrentN = 300

// concurrentSet is what a writer named name writes: objects shared by
// every writer, objects of its own, and an entry per object, keyed by the
// object (so that two writers write the same entries for the shared ones).
func concurrentSet(name string) (objs [][]byte) {
	for i := range concurrentN {
		objs = append(objs, []byte(fmt.Sprintf("shared object %d", i)))
		objs = append(objs, []byte(fmt.Sprintf("object %d of writer %s", i, name)))
	}
	return objs
}

func concurrentEntry(d Digest, size int) Entry {
	return Entry{Key: Key(Sum(append([]byte("entry of "), d[:]...))), Kind: "k", Outputs: []Output{{Name: "o", Digest: d, Size: int64(size)}}}
}

func writeSet(spec string) {
	dir, name, _ := strings.Cut(spec, ":")
	s, err := Open(dir, Create)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	for _, data := range concurrentSet(name) {
		d, err := s.Put(data)
		if err == nil {
			err = s.PutEntry(concurrentEntry(d, len(data)))
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(3)
		}
	}
	if err := s.Sync(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(4)
	}
}

// TestConcurrentWriters: two processes write the same store at once, the
// same objects and entries and some of their own, while this one reads
// it; each writes a pack of its own, nothing read is ever wrong, and
// afterwards everything is there, the store checks clean, and a GC that
// keeps everything loses nothing (and merges the two packs).
func TestConcurrentWriters(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Skip("no test executable:", err)
	}
	dir := filepath.Join(t.TempDir(), ".thv")
	s, err := Open(dir, Create)
	if err != nil {
		t.Fatal(err)
	}
	var cmds []*exec.Cmd
	for _, name := range []string{"a", "b"} {
		cmd := exec.Command(exe, "-test.run=^$")
		cmd.Env = append(os.Environ(), writerEnv+"="+dir+":"+name)
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	done := make(chan struct{})
	var reads atomic.Int64
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-done:
				return
			default:
			}
			for _, data := range concurrentSet("a")[:40] {
				got, err := s.Get(Sum(data))
				switch {
				case err == nil && !bytes.Equal(got, data):
					t.Errorf("read wrong bytes for %q", data)
				case err != nil && !errors.Is(err, ErrNotFound):
					t.Errorf("while writers run: %v", err)
				case err == nil:
					reads.Add(1)
				}
			}
		}
	})
	for _, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("writer: %v", err)
		}
	}
	close(done)
	wg.Wait()
	t.Logf("%d objects read while the writers ran", reads.Load())
	r, err := Open(dir, Create)
	if err != nil {
		t.Fatal(err)
	}
	keep, keepKeys := map[Digest]bool{}, map[Key]bool{}
	for _, name := range []string{"a", "b"} {
		for _, data := range concurrentSet(name) {
			d := Sum(data)
			if got, err := r.Get(d); err != nil || !bytes.Equal(got, data) {
				t.Fatalf("%q after the writers: %v", data, err)
			}
			e := concurrentEntry(d, len(data))
			if got, ok, err := r.GetEntry(e.Key); !ok || err != nil || got.Outputs[0] != e.Outputs[0] {
				t.Fatalf("the entry of %q: %v %v", data, ok, err)
			}
			keep[d], keepKeys[e.Key] = true, true
		}
	}
	var packs int
	for _, f := range listFiles(t, filepath.Join(dir, "packs")) {
		if strings.HasSuffix(f, packExt) {
			packs++
		}
	}
	if packs != 2 {
		t.Errorf("%d packs, want one per writer", packs)
	}
	if rep, err := r.Check(context.Background(), 2, nil); err != nil || len(rep.Problems) != 0 {
		t.Fatalf("check: %v %v", rep.Problems, err)
	}
	st, err := r.GC(keep, keepKeys)
	if err != nil {
		t.Fatal(err)
	}
	if st.ObjectsRemoved != 0 || st.EntriesRemoved != 0 || st.ObjectsKept != len(keep) || st.EntriesKept != len(keepKeys) || st.PacksRemoved != 2 || st.PacksWritten != 1 {
		t.Fatalf("GC = %v", st)
	}
	for d := range keep {
		if err := r.Verify(d); err != nil {
			t.Fatal(err)
		}
	}
}
