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
func (s *Store) HasAll(ds []Digest) bool {
	// Objects by fan-out directory (their first byte); an object named
	// twice is looked up twice, which costs less than sorting them all.
	var byDir [256][]Digest
	for _, d := range ds {
		byDir[d[0]] = append(byDir[d[0]], d)
	}
	var runs [][]Digest
	for _, run := range byDir {
		if len(run) > 0 {
			runs = append(runs, run)
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
				ok[w] = s.hasRun(runs[i], buf)
			}
		}()
	}
	wg.Wait()
	return !slices.Contains(ok, false)
}
