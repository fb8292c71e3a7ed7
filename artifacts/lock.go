package artifacts

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// The store lock is <root>/LOCK, an empty file locked with flock(2): a
// pipeline pass (thv repro, for its whole duration) holds it shared, GC holds
// it exclusive, so that GC never removes an object that a running pass has
// just written or is about to read. flock locks belong to the open file
// description and the kernel drops them when the holder dies, however it
// dies: a killed repro never leaves the store locked.
//
// Without flock (non-unix systems) the lock is a no-op across processes.

// ErrLocked is wrapped by the error of LockExclusive (and so of GC) when
// another holder has the store, and of LockShared when GC holds it for
// longer than LockShared waits.
var ErrLocked = errors.New("store is locked")

// sharedLockWait is how long LockShared waits for a GC to finish.
var sharedLockWait = 30 * time.Second

// errWouldBlock is what lockStore returns for a conflicting holder.
var errWouldBlock = errors.New("lock held by another open file")

// storeLock is one Store handle's hold on LOCK. Holds nest: within a handle,
// LockShared under LockExclusive and any lock under the same mode only count
// (so GC, which locks itself, can be called by a caller that already holds
// the exclusive lock). Two handles (two Opens, in one process or two) are
// two open file descriptions and exclude each other like two processes.
type storeLock struct {
	mu        sync.Mutex
	f         *os.File
	exclusive bool
	count     int
}

// LockShared takes the store lock in shared mode and returns the function
// that releases it. Any number of shared holders coexist (several repro
// passes, or a pass and its exec-task workers); a pass holds it for its whole
// duration. If GC holds the lock, LockShared waits for it to finish, up to
// 30 seconds, then fails with an error wrapping ErrLocked.
//
// On a read-only store where LOCK does not exist and cannot be created, the
// lock is not needed by this handle (nothing can be written through it) and
// LockShared returns a no-op.
func (s *Store) LockShared() (unlock func(), err error) {
	return s.lock(false)
}

// LockExclusive takes the store lock in exclusive mode, for GC, and returns
// the function that releases it. It does not wait: if anyone else holds the
// lock (a running repro, or another GC) it fails at once with an error
// wrapping ErrLocked that says so. It fails too if this handle holds the
// lock shared (no upgrade).
func (s *Store) LockExclusive() (unlock func(), err error) {
	return s.lock(true)
}

func (s *Store) lock(exclusive bool) (func(), error) {
	l := s.lk
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.count > 0 {
		if exclusive && !l.exclusive {
			return nil, fmt.Errorf("artifacts: lock %s: this handle holds the store lock shared; release it before taking it exclusively", s.root)
		}
		l.count++
		return s.unlockFunc(), nil
	}
	if s.untrusted {
		// An untrusted view writes nothing, so it needs no lock against
		// GC and takes none (which would create LOCK).
		if exclusive {
			return nil, fmt.Errorf("artifacts: lock %s: %w", s.root, s.errUntrusted())
		}
		return func() {}, nil
	}
	p := filepath.Join(s.root, lockFile)
	f, err := s.dir.open(lockFile, os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil && isReadOnlyErr(err) {
		// flock needs no write access: a read-only store has its
		// LOCK read-only.
		var rerr error
		f, rerr = s.dir.open(lockFile, os.O_RDONLY|oNonblock, 0)
		if rerr != nil {
			if !exclusive && errors.Is(rerr, fs.ErrNotExist) {
				return func() {}, nil
			}
			return nil, fmt.Errorf("artifacts: lock %s: %w", s.root, s.writeErr(err))
		}
		err = nil
	}
	if err != nil {
		return nil, fmt.Errorf("artifacts: lock %s: %w", s.root, s.writeErr(err))
	}
	deadline := time.Now().Add(sharedLockWait)
	for {
		err = lockStore(f, exclusive)
		if err == nil {
			break
		}
		if !errors.Is(err, errWouldBlock) {
			f.Close()
			return nil, fmt.Errorf("artifacts: lock %s: %w", p, err)
		}
		if exclusive {
			f.Close()
			return nil, fmt.Errorf("artifacts: %w: %s is in use (a thv repro or exec-task holds %s); "+
				"gc now could remove objects it is writing or about to read: wait until it finishes, then run gc again", ErrLocked, s.root, p)
		}
		if time.Now().After(deadline) {
			f.Close()
			return nil, fmt.Errorf("artifacts: %w: %s is being garbage-collected (thv gc holds %s exclusively); waited %v: run again when gc has finished", ErrLocked, s.root, p, sharedLockWait)
		}
		time.Sleep(20 * time.Millisecond)
	}
	l.f, l.exclusive, l.count = f, exclusive, 1
	return s.unlockFunc(), nil
}

// unlockFunc returns a release function for one hold; calling it more than
// once releases only once.
func (s *Store) unlockFunc() func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			l := s.lk
			l.mu.Lock()
			defer l.mu.Unlock()
			l.count--
			if l.count == 0 {
				_ = unlockStore(l.f)
				l.f.Close() // closing would release it anyway
				l.f = nil
			}
		})
	}
}
