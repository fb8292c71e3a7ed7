package artifacts

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
)

// A simulated power cut, for the tests of durability from verification
// (durable.go; the tests are in powercut_test.go, package artifacts_test,
// which runs a pipeline on a store under this layer).

// FaultFS is a test file system layer under a store: it passes every
// operation through, records which of the store's files (objects and index
// entries) were put in place since the last barrier (syncfs), counts the
// barriers, and can turn one barrier into a power cut.
type FaultFS struct {
	dirFS
	s  *Store
	mu sync.Mutex
	// unsynced lists the rels renamed into objects/ or index/ since the
	// last barrier, in order.
	unsynced []string
	barriers int
	cutAt    int // the barrier that is a power cut (0: none)
	// before records, for each rel put in place, how many files were
	// unsynced then (itself excluded) and how many barriers had passed.
	before map[string][2]int
	// OnBarrier, if set, is called at each barrier (with the number of
	// files it makes durable) before it syncs.
	OnBarrier func(unsynced int)
}

// ErrPowerCut is what the barrier that is a power cut returns.
var ErrPowerCut = errors.New("simulated power cut")

// InjectFaults puts a FaultFS under s (before s is used by other
// goroutines).
func InjectFaults(s *Store) *FaultFS {
	f := &FaultFS{dirFS: s.dir, s: s, before: map[string][2]int{}}
	s.dir = f
	return f
}

func (f *FaultFS) rename(oldrel, newrel string) error {
	err := f.dirFS.rename(oldrel, newrel)
	if err == nil && (strings.HasPrefix(newrel, objectsDir+sep) || strings.HasPrefix(newrel, indexDir+sep)) {
		f.mu.Lock()
		f.unsynced = slices.DeleteFunc(f.unsynced, func(r string) bool { return r == newrel })
		f.before[newrel] = [2]int{len(f.unsynced), f.barriers}
		f.unsynced = append(f.unsynced, newrel)
		f.mu.Unlock()
	}
	return err
}

func (f *FaultFS) syncfs() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.barriers++
	if f.OnBarrier != nil {
		f.OnBarrier(len(f.unsynced))
	}
	if f.barriers == f.cutAt {
		return ErrPowerCut // the power fails before anything is synced
	}
	if err := f.dirFS.syncfs(); err != nil {
		return err
	}
	f.unsynced = nil
	return nil
}

// CutAtBarrier makes the n-th barrier from now a power cut: it returns
// ErrPowerCut and syncs nothing.
func (f *FaultFS) CutAtBarrier(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cutAt = f.barriers + n
}

// Barriers returns the number of barriers so far.
func (f *FaultFS) Barriers() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.barriers
}

// Unsynced returns the rels put in place since the last barrier.
func (f *FaultFS) Unsynced() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.unsynced)
}

// WrittenAfter returns, for the store file rel, how many other files were
// unsynced when it was put in place and how many barriers had passed, and
// whether it was put in place at all.
func (f *FaultFS) WrittenAfter(rel string) (unsynced, barriers int, ok bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	b, ok := f.before[rel]
	return b[0], b[1], ok
}

// Damage is what a power cut does to a file written since the last
// barrier.
type Damage int

const (
	Drop     Damage = iota // the file is gone (its rename was lost)
	Empty                  // in place, no data (metadata written, data not)
	Truncate               // in place, cut partway
	Garble                 // in place, its bytes garbage
)

func (d Damage) String() string {
	return [...]string{"drop", "empty", "truncate", "garble"}[d]
}

// PowerCut damages the unsynced files for which which returns true (all
// of them if which is nil), then ends the store handle as the cut ends
// its process: its marker stays, unlocked, and the handle must not be used
// again. It returns the rels damaged.
func (f *FaultFS) PowerCut(d Damage, which func(rel string) bool) ([]string, error) {
	var hit []string
	for _, rel := range f.Unsynced() {
		if which != nil && !which(rel) {
			continue
		}
		if err := damage(f.dirFS.abs(rel), d); err != nil {
			return hit, err
		}
		hit = append(hit, rel)
	}
	dur := f.s.dur
	dur.mu.Lock()
	if dur.marker != nil {
		dur.marker.Close() // the kernel drops its flock, as at a crash
		dur.marker = nil
	}
	dur.mu.Unlock()
	return hit, nil
}

func damage(p string, d Damage) error {
	if d == Drop {
		return os.Remove(p)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	switch d {
	case Empty:
		b = nil
	case Truncate:
		b = b[:len(b)/2]
	case Garble:
		for i := range b {
			b[i] ^= 0x5a
		}
		if len(b) == 0 {
			b = []byte("garbage")
		}
	default:
		return fmt.Errorf("unknown damage %d", d)
	}
	if err := os.Chmod(p, 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		return err
	}
	return os.Chmod(p, filePerm)
}

// SetBootID makes the store believe it runs in the boot id (a restart of
// the machine after a power cut); the returned function restores it.
func SetBootID(id string) (restore func()) {
	old := bootID
	bootID = func() string { return id }
	return func() { bootID = old }
}
