package artifacts

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
)

// Durability from verification. A store opened with Create
// writes its objects and index entries atomically (temp file, rename) but
// does not fsync each of them: durability comes from a barrier, Sync
// (syncfs(2) of the store's file system), which the pipeline calls before
// it treats the store as fact — before a lock file is written and sealed —
// and at the end of a pass. After a power cut, a file written since the
// last barrier may be missing, empty, truncated or hold garbage. Such a
// file is never served: every object is re-hashed when read (Get, Verify,
// Put's check of an existing copy) and every index entry strictly decoded
// (GetEntry). And it is never left in place to be pointed at: before its
// first unsynced write, a handle makes a marker file durable
// (UNSYNCED.<random> beside VERSION, flock'ed while the process lives, removed after
// the barrier). The next Open in mode Create that finds a marker whose
// process is gone either syncs (the process died but the machine did not:
// the writes are in the page cache, whole) or, if the machine rebooted
// since the marker was written (another boot ID, or another host), checks
// the whole store (Check: every object re-hashed, every entry decoded),
// setting aside whatever a power cut tore, before anything is read as
// fact. A Scratch store never syncs, and a store on a system without
// syncfs (not Linux) fsyncs each write as before.

// durability is the barrier state of a store handle (shared by its
// Untrusted views, which never write).
type durability struct {
	// deferred: writes are not fsynced one by one; Sync is the barrier.
	deferred bool
	// rw is held shared by each write and exclusively by Sync, so that a
	// barrier never removes the marker of a write still in flight.
	rw sync.RWMutex
	mu sync.Mutex // guards marker
	// marker is this handle's marker file (nil when everything it wrote
	// is synced), held open for its flock.
	marker    *os.File
	markerRel string
	// recovered is what Open's check found after an unclean shutdown
	// (nil if none was needed).
	recovered *CheckReport
}

// markerPrefix starts the names of the markers, at the top of the store
// beside VERSION and LOCK: UNSYNCED.<hex>.
const markerPrefix = "UNSYNCED."

func isMarkerName(name string) bool {
	rest, ok := strings.CutPrefix(name, markerPrefix)
	return ok && len(rest) > 0 && len(rest) <= 20 && isLowerHex(rest)
}

// bootID identifies this boot of this machine: its host name and the
// kernel's boot ID, or "" where the boot ID cannot be read (a test
// replaces it to simulate a reboot).
var bootID = func() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	host, _ := os.Hostname()
	return host + " " + strings.TrimSpace(string(b))
}

// beginWrite is called before each write of the store's own files; the
// write ends by calling the function it returns. In a deferred store it
// makes sure a marker is durable on disk before the first unsynced write.
func (s *Store) beginWrite() (func(), error) {
	dur := s.dur
	if dur == nil || !dur.deferred {
		return func() {}, nil
	}
	dur.rw.RLock()
	dur.mu.Lock()
	defer dur.mu.Unlock()
	if dur.marker == nil {
		if err := s.createMarker(); err != nil {
			dur.rw.RUnlock()
			return nil, err
		}
	}
	return dur.rw.RUnlock, nil
}

// createMarker writes and fsyncs this handle's marker (the file and its
// entry in the store directory) and keeps it open and locked.
func (s *Store) createMarker() error {
	var f *os.File
	rel, err := uniqueName(".", markerPrefix, "", func(rel string) (err error) {
		f, err = s.dir.open(rel, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		return err
	})
	if err != nil {
		return err
	}
	fail := func(err error) error {
		f.Close()
		s.dir.remove(rel)
		return fmt.Errorf("writing the marker %s: %w", s.dir.abs(rel), err)
	}
	if err := lockTemp(f); err != nil {
		return fail(err)
	}
	if _, err := fmt.Fprintf(f, "thv unsynced writes\nboot %s\npid %d\n", bootID(), os.Getpid()); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	if err := syncDir(s.dir, "."); err != nil {
		return fail(err)
	}
	s.dur.marker, s.dur.markerRel = f, rel
	return nil
}

// Sync is the store's barrier: once it returns, everything written to the
// store before it was called — by this handle and by any other process on
// this machine writing the same file system — is durable. It first writes
// the index of the handle's pack (so that readers need not scan what it
// appended), then syncs the whole file system holding the store
// (syncfs(2)) and removes this handle's marker. Where each write is
// fsynced already (systems without syncfs, a store opened Existing) it
// only writes the index; it does nothing for a Scratch store.
func (s *Store) Sync() error {
	if s.untrusted {
		return nil
	}
	if err := s.sealOwnPack(); err != nil {
		return fmt.Errorf("artifacts: syncing the store %s: %w", s.root, err)
	}
	dur := s.dur
	if dur == nil || !dur.deferred {
		return nil
	}
	dur.rw.Lock()
	defer dur.rw.Unlock()
	if err := s.dir.syncfs(); err != nil {
		return fmt.Errorf("artifacts: syncing the store %s: %w", s.root, err)
	}
	dur.mu.Lock()
	defer dur.mu.Unlock()
	s.dropMarker()
	return nil
}

// Unsynced reports whether this handle wrote something that no barrier
// has made durable yet.
func (s *Store) Unsynced() bool {
	dur := s.dur
	if dur == nil {
		return false
	}
	dur.mu.Lock()
	defer dur.mu.Unlock()
	return dur.marker != nil
}

// dropMarker removes the marker (its removal need not be durable: a marker
// that reappears after a crash costs a check, never a wrong byte).
func (s *Store) dropMarker() {
	if s.dur.marker == nil {
		return
	}
	s.dir.remove(s.dur.markerRel)
	s.dur.marker.Close()
	s.dur.marker, s.dur.markerRel = nil, ""
}

// Recovered returns what Open checked after finding that a process
// writing the store ended without a barrier and the machine restarted
// since (a power cut, a crash of the kernel): the whole store was
// re-hashed, and Problems lists what was set aside. It is nil when no such
// check was needed.
func (s *Store) Recovered() *CheckReport {
	if s.dur == nil {
		return nil
	}
	return s.dur.recovered
}

// recoverUnsynced handles the markers of writers that ended without a
// barrier (Open, mode Create): if any was written in another boot, the
// whole store is checked; then the file system is synced and the markers
// removed. A marker whose writer lives is left alone. Best effort: on a
// store it cannot write (a read-only mount) it leaves the markers, and
// reads still verify everything.
func (s *Store) recoverUnsynced() {
	ents, err := readDirRel(s.dir, ".")
	if err != nil {
		return
	}
	var dead []*os.File
	var rels []string
	defer func() {
		for _, f := range dead {
			f.Close()
		}
	}()
	check := false
	now := bootID()
	for _, de := range ents {
		if !de.Type().IsRegular() || !isMarkerName(de.Name()) {
			continue
		}
		rel := de.Name()
		f, err := s.dir.open(rel, os.O_RDONLY|oNonblock, 0)
		if err != nil {
			continue
		}
		fi, err := f.Stat()
		if err != nil || !fi.Mode().IsRegular() {
			f.Close()
			continue
		}
		if ok, err := tempAbandoned(f, fi); !ok || err != nil {
			f.Close() // its writer lives: its writes are in this kernel
			continue
		}
		dead, rels = append(dead, f), append(rels, rel)
		if boot := markerBoot(f); now == "" || boot != now {
			check = true
		}
	}
	if len(rels) == 0 {
		return
	}
	if check {
		rep, err := s.Check(context.Background(), runtime.GOMAXPROCS(0), nil)
		if err != nil {
			return
		}
		s.dur.recovered = &rep
	}
	// The barrier: what the dead writers and the check wrote (this
	// handle's marker goes too).
	if err := s.Sync(); err != nil {
		return
	}
	for _, rel := range rels {
		s.dir.remove(rel)
	}
}

// markerBoot reads the boot line of a marker ("" if it has none: a marker
// torn by the crash it records, say, which then counts as another boot's).
func markerBoot(f *os.File) string {
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 4096)
	for sc.Scan() {
		if b, ok := bytes.CutPrefix(sc.Bytes(), []byte("boot ")); ok {
			return string(b)
		}
	}
	return ""
}
