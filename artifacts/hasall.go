package artifacts

import (
	"bytes"
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
	ds = slices.Clone(ds)
	slices.SortFunc(ds, func(a, b Digest) int { return bytes.Compare(a[:], b[:]) })
	ds = slices.Compact(ds)
	// Runs of one first byte share a fan-out directory.
	var runs [][]Digest
	for i := 0; i < len(ds); {
		j := i + 1
		for j < len(ds) && ds[j][0] == ds[i][0] {
			j++
		}
		runs = append(runs, ds[i:j])
		i = j
	}
	const workers = 4
	ok := make([]bool, workers)
	var wg sync.WaitGroup
	for w := range workers {
		ok[w] = true
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(runs) && ok[w]; i += workers {
				ok[w] = s.hasRun(runs[i])
			}
		}()
	}
	wg.Wait()
	return !slices.Contains(ok, false)
}
