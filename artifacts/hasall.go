package artifacts

import (
	"io/fs"
	"slices"
	"sync"
)

// HasAll reports whether every object of ds is present, as Has does for
// each: a regular file under its name. It is the presence check of a whole
// lock's outputs (the pipeline's no-op certificate): each fan-out directory
// is opened once, confined as every store access is, and each object is
// looked up in it by name without following a link (fstatat(2) on Linux),
// on several goroutines. In a store that also holds other protocols'
// objects this costs far less than listing it.
func (s *Store) HasAll(ds []Digest) bool {
	return s.hasAll(ds, nil, nil)
}

// HasAllSince is HasAll, except that a fan-out directory whose stamp is
// still since's (StampDirs) is not read: since must have been taken before
// a HasAll of the same objects (or a superset) that returned true. A nil
// since reads every directory.
func (s *Store) HasAllSince(ds []Digest, since *DirStamps) bool {
	return s.hasAll(ds, since, nil)
}

// HasAllRestamp is HasAllSince that also returns, if every object is
// present, stamps a later HasAllSince of the same objects may be given:
// since's for each directory it did not read (since's stamp unchanged, or
// no object of ds there), and for each directory it read the stamp the
// directory had just before (zero if its last change is within
// stampMargin of the file system's present time, taken before that stat,
// as StampDirs takes it). So stamps that a store's churn has made stale,
// or that StampDirs left zero because the directories had just changed,
// are renewed by the next check that reads those directories anyway.
func (s *Store) HasAllRestamp(ds []Digest, since *DirStamps) (bool, *DirStamps) {
	renewed := new(DirStamps)
	if since != nil {
		*renewed = *since
	}
	clock := sync.OnceValue(func() int64 {
		now, ok, err := s.fsNow()
		if err != nil || !ok {
			return 0 // no stamp can be trusted: every read directory gets zero
		}
		return now
	})
	if !s.hasAll(ds, since, &restamp{clock: clock, into: renewed}) {
		return false, nil
	}
	return true, renewed
}

// restamp is where hasAll records the stamps of the directories it reads
// (HasAllRestamp), by the file system's present time, taken once, when
// the first directory is to be read.
type restamp struct {
	clock func() int64 // fsNow, or 0
	into  *DirStamps   // each worker writes only its own directories' stamps
}

// fresh returns the stamp of the directory f for a check that reads it
// next: taken after the file system's present time, and zero if the
// directory changed within stampMargin of it.
func (r *restamp) fresh(f interface{ Stat() (fs.FileInfo, error) }) DirStamp {
	now := r.clock()
	if now == 0 {
		return DirStamp{}
	}
	fi, err := f.Stat()
	if err != nil {
		return DirStamp{}
	}
	return settledStamp(fi, now)
}

// hasAll is HasAllSince, recording in re (if not nil) each fan-out
// directory's stamp as HasAllRestamp describes.
func (s *Store) hasAll(ds []Digest, since *DirStamps, re *restamp) bool {
	// Objects by fan-out directory (their first byte), in one copy of ds
	// (hasRun drops each directory's repeats in place; ds is left alone).
	var count [257]int
	for _, d := range ds {
		count[int(d[0])+1]++
	}
	for i := 1; i < len(count); i++ {
		count[i] += count[i-1]
	}
	byDir := make([]Digest, len(ds))
	next := count
	for _, d := range ds {
		byDir[next[d[0]]] = d
		next[d[0]]++
	}
	var runs [][]Digest
	for i := range 256 {
		if count[i+1] > count[i] {
			runs = append(runs, byDir[count[i]:count[i+1]])
		}
	}
	if since != nil {
		runs = s.dropStamped(runs, since) // (each one hasRun would skip, for a stat)
	}
	const workers = 4
	ok := make([]bool, workers)
	var wg sync.WaitGroup
	for w := range workers {
		ok[w] = true
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf []byte
			if hasAllBuf > 0 {
				buf = make([]byte, hasAllBuf)
			}
			for i := w; i < len(runs) && ok[w]; i += workers {
				var want DirStamp
				if since != nil {
					want = since[runs[i][0][0]]
				}
				ok[w] = s.hasRun(runs[i], buf, want, re)
			}
		}()
	}
	wg.Wait()
	return !slices.Contains(ok, false)
}
