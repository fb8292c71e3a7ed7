package remote

import (
	"context"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"thv/artifacts"
)

// Item is one index entry to push or pull: a task of a lock.
type Item struct {
	Task string
	Key  artifacts.Key
	Kind string
}

// SyncReport counts a Push or Pull.
type SyncReport struct {
	Total, Done, Skipped, Failed int
	Bytes                        int64
	Elapsed                      time.Duration
	Errs                         []error // one per failed item, in no order
}

// Push uploads the entries of items (objects first, each entry last) from
// st, with jobs transfers in parallel, printing progress on w at most once
// a second. An entry the remote already holds byte for byte is skipped, so
// a push that was killed resumes where it stopped. Failed items are in
// the report; the others are pushed all the same.
func (rm *Remote) Push(ctx context.Context, st *artifacts.Store, items []Item, jobs int, w io.Writer) SyncReport {
	if rm.sign == nil {
		return SyncReport{Total: len(items), Failed: len(items), Errs: []error{fmt.Errorf("remote %s: pushing needs a signing key (--sign-key NAME.key; thv key generate NAME makes one)", rm.URL())}}
	}
	before := rm.Stats.BytesPushed.Load()
	rep := rm.each(ctx, items, jobs, w, "push", func(it Item) (bool, error) {
		skipped, err := rm.push(ctx, st, it.Key)
		if err != nil {
			return false, fmt.Errorf("%s: %w", it.Task, err)
		}
		return skipped, nil
	})
	rep.Bytes = rm.Stats.BytesPushed.Load() - before
	return rep
}

// Pull downloads the entries of items that st lacks, with the checks of
// Fetch (a trusted signature, every object re-hashed). Entries st already
// has with all their objects are skipped; a pull that was killed resumes.
func (rm *Remote) Pull(ctx context.Context, st *artifacts.Store, items []Item, jobs int, w io.Writer) SyncReport {
	before := rm.Stats.BytesFetched.Load()
	rep := rm.each(ctx, items, jobs, w, "pull", func(it Item) (bool, error) {
		if e, ok, err := st.GetEntry(it.Key); err == nil && ok && hasAll(st, e) {
			return true, nil
		}
		rejected := rm.Stats.EntriesRejected.Load()
		if _, ok := rm.fetch(ctx, st, it.Key, it.Kind, it.Task); !ok {
			if rm.Stats.EntriesRejected.Load() > rejected {
				return false, fmt.Errorf("%s: the remote entry was not used (see the warning above)", it.Task)
			}
			if err := ctx.Err(); err != nil {
				return false, err
			}
			return false, fmt.Errorf("%s: not on the remote", it.Task)
		}
		return false, nil
	})
	rep.Bytes = rm.Stats.BytesFetched.Load() - before
	return rep
}

func hasAll(st *artifacts.Store, e artifacts.Entry) bool {
	for _, o := range e.Outputs {
		if !st.Has(o.Digest) {
			return false
		}
	}
	return true
}

// each runs f over items on jobs goroutines with progress lines.
func (rm *Remote) each(ctx context.Context, items []Item, jobs int, w io.Writer, verb string, f func(Item) (skipped bool, err error)) SyncReport {
	start := time.Now()
	if jobs < 1 {
		jobs = 1
	}
	var done, skipped atomic.Int64
	var mu sync.Mutex
	rep := SyncReport{Total: len(items)}
	next := make(chan Item)
	var wg sync.WaitGroup
	for range min(jobs, max(len(items), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for it := range next {
				sk, err := f(it)
				if err != nil {
					mu.Lock()
					rep.Errs = append(rep.Errs, err)
					mu.Unlock()
					continue
				}
				done.Add(1)
				if sk {
					skipped.Add(1)
				}
			}
		}()
	}
	stop := make(chan struct{})
	var pwg sync.WaitGroup
	if w != nil {
		pwg.Add(1)
		go func() {
			defer pwg.Done()
			t := time.NewTicker(time.Second)
			defer t.Stop()
			for {
				select {
				case <-stop:
					return
				case <-t.C:
					mu.Lock()
					failed := len(rep.Errs)
					mu.Unlock()
					fmt.Fprintf(w, "%s: %d/%d entries (%d already there, %d failed), %s up, %s down\n", verb, done.Load()+int64(failed), len(items), skipped.Load(), failed,
						bytesString(rm.Stats.BytesPushed.Load()), bytesString(rm.Stats.BytesFetched.Load()))
				}
			}
		}()
	}
feed:
	for _, it := range items {
		select {
		case next <- it:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	close(stop)
	pwg.Wait()
	rep.Done, rep.Skipped = int(done.Load()), int(skipped.Load())
	rep.Failed = len(rep.Errs)
	if n := rep.Total - rep.Done - rep.Failed; n > 0 {
		rep.Failed += n
		rep.Errs = append(rep.Errs, fmt.Errorf("%d entries not tried: %w", n, ctx.Err()))
	}
	rep.Elapsed = time.Since(start)
	return rep
}
