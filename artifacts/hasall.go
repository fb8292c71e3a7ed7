package artifacts

import (
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
func (s *Store) HasAll(ds []Digest) bool { return s.HasAllSince(ds, nil) }

// HasAllSince is HasAll, except that a fan-out directory whose stamp is
// still since's (StampDirs) is not read: since must have been taken before
// a HasAll of the same objects (or a superset) that returned true. A nil
// since reads every directory.
func (s *Store) HasAllSince(ds []Digest, since *DirStamps) bool {
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
				ok[w] = s.hasRun(runs[i], buf, want)
			}
		}()
	}
	wg.Wait()
	return !slices.Contains(ok, false)
}
