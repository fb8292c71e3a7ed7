package artifacts

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
)

// CheckReport is what Check found.
type CheckReport struct {
	Objects  int       // objects re-hashed
	Entries  int       // index entries read
	Bytes    int64     // bytes re-hashed
	Problems []Problem // in the order objects, then entries, each sorted
}

// Problem is one object or index entry that failed the check.
type Problem struct {
	What string // "object" or "index entry"
	Name string // its digest or key
	Err  error
}

// String says what failed, naming the object or entry.
func (p Problem) String() string { return fmt.Sprintf("%s %s: %v", p.What, p.Name, p.Err) }

// Check re-hashes every object of the store and reads every index entry,
// checking that each output it names is present with the recorded size: a
// flipped byte anywhere is found here, not only when the object is next
// read. Every pack is read whole, record by record: a bad record is set
// aside as everywhere, and a pack no writer holds is repaired (bytes that
// are no record set aside, its index rebuilt if it does not list the
// pack's records). As everywhere, a file that fails is moved to corrupt/
// (so the next pass recomputes it); on a read-only store it stays and the
// problem says it could not be moved. progress, if not nil, is called
// after each file with the number checked so far and the total.
func (s *Store) Check(ctx context.Context, workers int, progress func(done, total int)) (CheckReport, error) {
	var packProblems []Problem
	var packObjects, packBytes atomic.Int64
	if err := s.checkPacks(ctx, &packObjects, &packBytes, func(p Problem) { packProblems = append(packProblems, p) }); err != nil {
		return CheckReport{}, err
	}
	objs, err := s.listFanout(objectsDir, "")
	if err != nil {
		return CheckReport{}, fmt.Errorf("artifacts: check: listing objects: %w", err)
	}
	keys, err := s.Keys()
	if err != nil {
		return CheckReport{}, fmt.Errorf("artifacts: check: listing the index: %w", err)
	}
	slices.SortFunc(objs, func(a, b [32]byte) int { return slices.Compare(a[:], b[:]) })
	slices.SortFunc(keys, func(a, b Key) int { return slices.Compare(a[:], b[:]) })

	total := len(objs) + len(keys)
	var done atomic.Int64
	tick := func() {
		if progress != nil {
			progress(int(done.Add(1)), total)
		}
	}
	objProblems := make([]*Problem, len(objs))
	var bytes atomic.Int64
	err = parallel(ctx, max(1, workers), len(objs), func(i int) {
		d := Digest(objs[i])
		if fi, err := s.dir.lstat(objectRel(d)); err == nil {
			bytes.Add(fi.Size())
		}
		if err := s.checkLoose(d, -1); err != nil {
			objProblems[i] = &Problem{What: "object", Name: d.String(), Err: err}
		}
		tick()
	})
	if err != nil {
		return CheckReport{}, err
	}
	entryProblems := make([]*Problem, len(keys))
	err = parallel(ctx, max(1, workers), len(keys), func(i int) {
		if err := s.checkEntry(keys[i]); err != nil {
			entryProblems[i] = &Problem{What: "index entry", Name: keys[i].String(), Err: err}
		}
		tick()
	})
	if err != nil {
		return CheckReport{}, err
	}
	rep := CheckReport{Objects: len(objs) + int(packObjects.Load()), Entries: len(keys), Bytes: bytes.Load() + packBytes.Load(), Problems: packProblems}
	for _, p := range append(objProblems, entryProblems...) {
		if p != nil {
			rep.Problems = append(rep.Problems, *p)
		}
	}
	return rep, nil
}

// checkEntry reads the entry under k strictly and checks that its outputs
// resolve: each present with the recorded size (their content is re-hashed
// by the object pass).
func (s *Store) checkEntry(k Key) error {
	e, ok, err := s.GetEntry(k)
	if err != nil {
		return err
	}
	if !ok {
		return nil // removed since the listing (a GC): nothing to check
	}
	for _, o := range e.Outputs {
		if err := s.objectHasSize(o.Digest, o.Size); err != nil {
			return fmt.Errorf("output %q: %w", o.Name, err)
		}
	}
	return nil
}

// parallel calls f(0..n-1) from workers goroutines; it stops handing out
// work when ctx is cancelled and then returns ctx.Err().
func parallel(ctx context.Context, workers, n int, f func(i int)) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(workers, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				f(i)
			}
		}()
	}
	wg.Wait()
	return ctx.Err()
}
