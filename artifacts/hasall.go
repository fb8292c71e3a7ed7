package artifacts

import (
	"errors"
	"io/fs"
	"slices"
	"sync"
)

// HasAll reports whether every object of ds is present, as Has does for
// each: a live record of a pack, or a regular file under its name. It is
// the presence check of a whole lock's outputs (the pipeline's no-op
// certificate): the packs' view is brought up to date once and each object
// looked up in it; the objects not packed are looked for as loose files,
// each fan-out directory opened once, confined as every store access is,
// and each object looked up in it by name without following a link
// (fstatat(2) on Linux), on several goroutines.
func (s *Store) HasAll(ds []Digest) bool {
	return s.hasAll(ds, nil, nil)
}

// HasAllSince is HasAll, except that when the packs' stamp is still
// since's, the objects of a fan-out directory whose stamp is still
// since's (StampDirs) are not looked up at all: since must have been
// taken before a HasAll of the same objects (or a superset) that returned
// true. A nil since looks up everything.
func (s *Store) HasAllSince(ds []Digest, since *DirStamps) bool {
	return s.hasAll(ds, since, nil)
}

// HasAllRestamp is HasAllSince that also returns, if every object is
// present, stamps a later HasAllSince of the same objects may be given:
// the packs' stamp taken before the packs were looked at; since's for each
// fan-out directory whose objects were not looked up (its stamp unchanged);
// and for each other one a stamp taken just before it was read (zero if
// its last change is within stampMargin of the file system's present
// time, taken before that stat, as StampDirs takes it; absentStamp if it
// does not exist). So stamps that a store's churn has made stale, or that
// StampDirs left zero because the directories had just changed, are
// renewed by the next check that looks anyway.
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

// restamp is where hasAll records the stamps of what it looks at
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

// freshDir is fresh of the fan-out directory b, by its name: absentStamp
// if it does not exist.
func (r *restamp) freshDir(s *Store, b byte) DirStamp {
	now := r.clock()
	if now == 0 {
		return DirStamp{}
	}
	fi, err := s.dir.lstat(fanoutRel(b))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return absentStamp
	case err != nil:
		return DirStamp{}
	}
	return settledStamp(fi, now)
}

// hasAll is HasAllSince, recording in re (if not nil) the stamps as
// HasAllRestamp describes.
func (s *Store) hasAll(ds []Digest, since *DirStamps, re *restamp) bool {
	// The packs' stamp is taken before they are looked at.
	var packsNow PackStamp
	if since != nil || re != nil {
		packsNow = s.stampPacks()
	}
	if re != nil {
		re.into.Packs = packsNow
	}
	packsHold := since != nil && since.Packs != (PackStamp{}) && packsNow == since.Packs
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
	if packsHold {
		// The objects of a directory whose stamp holds were present then,
		// packed or loose, and are now (each one hasRun would skip, for a
		// stat).
		runs = s.dropStamped(runs, since)
	}
	// Packed objects are present; what is left must be loose files.
	if len(runs) > 0 && s.readsPacks() {
		s.refreshPacks()
		v := s.pv
		kept := runs[:0]
		for _, run := range runs {
			b := run[0][0]
			rest := run[:0]
			for _, d := range run {
				if !v.has(d, recObject) {
					rest = append(rest, d)
				}
			}
			if len(rest) == 0 {
				if re != nil {
					re.into.Fanout[b] = re.freshDir(s, b)
				}
				continue
			}
			kept = append(kept, rest)
		}
		runs = kept
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
				ok[w] = s.hasRun(runs[i], buf, re)
			}
		}()
	}
	wg.Wait()
	return !slices.Contains(ok, false)
}
