package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
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

// finish counts the entries not tried as failed, naming why (ctx's
// error), and records the bytes moved and the time taken since start.
func (rep *SyncReport) finish(ctx context.Context, bytes int64, start time.Time) {
	rep.Failed = len(rep.Errs)
	if n := rep.Total - rep.Done - rep.Failed; n > 0 {
		rep.Failed += n
		rep.Errs = append(rep.Errs, fmt.Errorf("%d entries not tried: %w", n, ctx.Err()))
	}
	rep.Bytes = bytes
	rep.Elapsed = time.Since(start)
}

// Push uploads the entries of items from st in packs and batches
// (batch.go): the objects the remote lacks, read from st (each re-hashed
// as it is read), packed into packs of about Options.PackSize bytes, each
// pack uploaded and then a batch of the signed entries whose objects are
// all on the remote by then; jobs packs are uploaded at once. An entry the
// remote already holds byte for byte (the same key signing the same entry:
// ed25519 signatures are deterministic) is skipped, and a pack already
// there (the same objects in the same order) not uploaded again, so a
// push that was killed resumes where it stopped. Progress goes to w at
// most once a second. Failed items are in the report; the others are
// pushed all the same.
func (rm *Remote) Push(ctx context.Context, st *artifacts.Store, items []Item, jobs int, w io.Writer) (rep SyncReport) {
	if rm.sign == nil {
		return SyncReport{Total: len(items), Failed: len(items), Errs: []error{fmt.Errorf("remote %s: pushing needs a signing key (--sign-key NAME.key; thv key generate NAME makes one)", rm.URL())}}
	}
	pushed0 := rm.Stats.EntriesPushed.Load()
	start := time.Now()
	before := rm.Stats.BytesPushed.Load()
	rep = SyncReport{Total: len(items)}
	var mu sync.Mutex // rep, which the batches' uploads fail into
	fail := func(it Item, err error) {
		mu.Lock()
		rep.Errs = append(rep.Errs, fmt.Errorf("%s: %w", it.Task, err))
		mu.Unlock()
	}
	prog := rm.progress(w, "push", len(items), func() (done, skipped, failed int) {
		mu.Lock()
		defer mu.Unlock()
		return rep.Done + int(rm.Stats.EntriesPushed.Load()-pushed0), rep.Skipped, len(rep.Errs)
	})
	defer func() {
		prog.stop()
		rep.finish(ctx, rm.Stats.BytesPushed.Load()-before, start)
	}()
	idx, err := rm.loadIndex(ctx)
	if err != nil {
		for _, it := range items {
			fail(it, err)
		}
		return rep
	}
	// Where the objects of these entries lie on the remote, checked.
	outs := map[artifacts.Digest]int64{}
	for _, it := range items {
		if e, ok, err := st.GetEntry(it.Key); err == nil && ok {
			for _, o := range e.Outputs {
				outs[o.Digest] = o.Size
			}
		}
	}
	placed, err := rm.checkPlaces(ctx, idx, outs, jobs)
	if err != nil {
		for _, it := range items {
			fail(it, err)
		}
		return rep
	}
	p := &packer{rm: rm, ctx: ctx, idx: idx, jobs: max(1, jobs), placed: placed}
	for _, it := range items {
		if ctx.Err() != nil {
			break
		}
		e, ok, err := st.GetEntry(it.Key)
		switch {
		case err != nil:
			fail(it, fmt.Errorf("reading the local entry %v: %w", it.Key, err))
			continue
		case !ok:
			fail(it, fmt.Errorf("the local store has no entry for %v", it.Key))
			continue
		}
		env, err := sealEntry(e, rm.sign)
		if err == nil {
			// As a batch holds it (json.Marshal compacts what it embeds).
			var c bytes.Buffer
			if err = json.Compact(&c, env); err == nil {
				env = c.Bytes()
			}
		}
		if err != nil {
			fail(it, fmt.Errorf("signing the entry %v: %w", it.Key, err))
			continue
		}
		if slices.ContainsFunc(idx.entries[it.Key], func(have json.RawMessage) bool { return bytes.Equal(have, env) }) && !rm.anyBad(e) {
			mu.Lock()
			rep.Done++
			rep.Skipped++
			mu.Unlock()
			continue
		}
		if err := p.add(st, it, e, env); err != nil {
			fail(it, err)
			continue
		}
		if p.full() {
			p.flush(fail)
		}
	}
	p.flush(fail)
	n := p.wait()
	mu.Lock()
	rep.Done += n
	mu.Unlock()
	return rep
}

// packer builds a push's packs and batches (Push).
type packer struct {
	rm   *Remote
	ctx  context.Context
	idx  *remoteIndex
	jobs int

	// placed: where each object lies on the remote, or will once the
	// packs being uploaded are up (inFlight).
	placed map[artifacts.Digest]objectLoc
	// the pack being built: its objects' bytes and places.
	buf     []byte
	bufObjs []artifacts.Digest
	// the entries waiting for a batch, with the packs their objects need.
	pending []pendingEntry
	// uploads under way: each pack's upload, and the batch that follows
	// it once every pack it names is up.
	uploads sync.WaitGroup
	sem     chan struct{}
	mu      sync.Mutex
	failed  map[string]error // pack name → why its upload failed
	up      map[string]bool  // packs known to be on the remote
	batches []*pendingBatch
}

type pendingEntry struct {
	item Item
	e    artifacts.Entry
	env  []byte
}

type pendingBatch struct {
	entries []pendingEntry
	file    batchFile // what it says, settled when it is queued
	packs   []string  // the packs of this push it names: written after they are up
	done    chan struct{}
	n       int // entries pushed
}

// add reads the objects of entry e that the remote lacks into the pack
// being built, and queues e for a batch.
func (p *packer) add(st *artifacts.Store, it Item, e artifacts.Entry, env []byte) error {
	for _, o := range e.Outputs {
		if _, ok := p.placed[o.Digest]; ok || slices.Contains(p.bufObjs, o.Digest) {
			p.rm.Stats.ObjectsPresent.Add(1)
			continue
		}
		b, err := st.Get(o.Digest)
		if err != nil {
			return fmt.Errorf("output %q: %w", o.Name, err)
		}
		p.placed[o.Digest] = objectLoc{offset: int64(len(p.buf)), size: int64(len(b))} // its pack named at flush
		p.buf = append(p.buf, b...)
		p.bufObjs = append(p.bufObjs, o.Digest)
		p.rm.Stats.ObjectsPushed.Add(1)
	}
	p.pending = append(p.pending, pendingEntry{item: it, e: e, env: env})
	return nil
}

// full reports whether the pack being built has reached its size.
func (p *packer) full() bool { return len(p.buf) >= p.rm.packSize }

// flush seals the pack being built, starts its upload, and queues a batch
// of the pending entries, written once the packs they need are up.
func (p *packer) flush(fail func(Item, error)) {
	if len(p.buf) > 0 {
		z, h := seal(p.buf)
		bp := batchPack{Name: h, Size: int64(len(z)), Unpacked: int64(len(p.buf))}
		for _, d := range p.bufObjs {
			loc := p.placed[d]
			loc.pack = bp
			p.placed[d] = loc
		}
		p.startUpload(bp, z)
		p.buf, p.bufObjs = nil, nil
	}
	if len(p.pending) > 0 {
		b := &pendingBatch{entries: p.pending, done: make(chan struct{})}
		p.pending = nil
		// The packs of this push that its entries' objects lie in.
		seen := map[string]bool{}
		for _, pe := range b.entries {
			for _, o := range pe.e.Outputs {
				n := p.placed[o.Digest].pack.Name
				if !seen[n] && p.inPush(n) {
					seen[n] = true
					b.packs = append(b.packs, n)
				}
			}
		}
		b.file = p.batchOf(b.entries)
		p.batches = append(p.batches, b)
		p.startBatch(b, fail)
	}
}

// inPush reports whether pack n is one this push uploads.
func (p *packer) inPush(n string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, ok := p.up[n]
	return ok
}

// startUpload uploads pack bp (stored bytes z) unless it is there already.
func (p *packer) startUpload(bp batchPack, z []byte) {
	p.mu.Lock()
	if p.up == nil {
		p.up, p.failed = map[string]bool{}, map[string]error{}
		p.sem = make(chan struct{}, p.jobs)
	}
	p.up[bp.Name] = false
	p.mu.Unlock()
	p.uploads.Add(1)
	go func() {
		defer p.uploads.Done()
		p.sem <- struct{}{}
		defer func() { <-p.sem }()
		name := packName(bp.Name)
		var err error
		// A pack of this name may be there already: the same bytes, from
		// a push that was interrupted; but the name vouches for nothing
		// (a pack planted under it), so it is kept only if it re-hashes
		// right, and replaced otherwise, as is anything else under its
		// name (a link, a named pipe).
		info, serr := p.rm.r.stat(p.ctx, name)
		switch {
		case serr != nil && !isNotExist(serr) && !errors.Is(serr, ErrRefused):
			err = serr
		case serr == nil && info.Size == bp.Size && p.rm.packOK(p.ctx, bp):
		default:
			if err = p.rm.r.put(p.ctx, name, z); err == nil {
				p.rm.Stats.BytesPushed.Add(int64(len(z)))
			}
		}
		p.mu.Lock()
		if err != nil {
			p.failed[bp.Name] = err
		} else {
			p.up[bp.Name] = true
		}
		p.mu.Unlock()
	}()
}

// startBatch writes batch b once every pack of this push it names is up
// (after an earlier batch: batches go in order, so a push that fails
// leaves a prefix of its batches).
func (p *packer) startBatch(b *pendingBatch, fail func(Item, error)) {
	var prev *pendingBatch
	if len(p.batches) > 1 {
		prev = p.batches[len(p.batches)-2]
	}
	p.uploads.Add(1)
	go func() {
		defer p.uploads.Done()
		defer close(b.done)
		if prev != nil {
			<-prev.done
		}
		for {
			p.mu.Lock()
			waiting, failed := false, error(nil)
			for _, n := range b.packs {
				if err := p.failed[n]; err != nil {
					failed = err
				} else if !p.up[n] {
					waiting = true
				}
			}
			p.mu.Unlock()
			if failed != nil {
				p.failBatch(b, fmt.Errorf("uploading a pack: %w", failed), fail)
				return
			}
			if !waiting {
				break
			}
			time.Sleep(time.Millisecond)
		}
		if err := p.writeBatch(b); err != nil {
			p.failBatch(b, err, fail)
			return
		}
		b.n = len(b.entries)
		p.rm.Stats.EntriesPushed.Add(int64(len(b.entries)))
	}()
}

func (p *packer) failBatch(b *pendingBatch, err error, fail func(Item, error)) {
	for _, pe := range b.entries {
		fail(pe.item, err)
	}
}

// batchOf is the batch of entries: them and where every object of theirs
// lies.
func (p *packer) batchOf(entries []pendingEntry) batchFile {
	f := batchFile{Format: batchFormat}
	packIdx := map[string]int{}
	seen := map[artifacts.Digest]bool{}
	for _, pe := range entries {
		for _, o := range pe.e.Outputs {
			if seen[o.Digest] {
				continue
			}
			seen[o.Digest] = true
			loc := p.placed[o.Digest]
			i, ok := packIdx[loc.pack.Name]
			if !ok {
				i = len(f.Packs)
				packIdx[loc.pack.Name] = i
				f.Packs = append(f.Packs, loc.pack)
			}
			f.Objects = append(f.Objects, batchObject{Digest: o.Digest, Pack: i, Offset: loc.offset, Size: loc.size})
		}
		f.Entries = append(f.Entries, batchEntry{Key: pe.e.Key, Envelope: pe.env})
	}
	return f
}

// writeBatch uploads batch b.
func (p *packer) writeBatch(b *pendingBatch) error {
	data, err := json.Marshal(b.file)
	if err != nil {
		return err
	}
	z, h := seal(data)
	if err := p.rm.r.put(p.ctx, batchName(h), z); err != nil {
		return err
	}
	p.rm.Stats.BytesPushed.Add(int64(len(z)))
	return nil
}

// wait waits for every upload and batch, and returns the entries pushed.
func (p *packer) wait() int {
	p.uploads.Wait()
	n := 0
	for _, b := range p.batches {
		n += b.n
	}
	return n
}

// Pull downloads the entries of items that st lacks, with the checks of
// Fetch (a trusted signature, every object re-hashed): from the batches,
// each pack downloaded once (jobs at once) and checked against its name,
// every object of it that an entry needs checked against its digest
// before it is put in st, each entry after its objects; an entry in no
// batch is fetched from the per-task layout. Entries st already has with
// all their objects are skipped; a pull that was killed resumes.
func (rm *Remote) Pull(ctx context.Context, st *artifacts.Store, items []Item, jobs int, w io.Writer) (rep SyncReport) {
	start := time.Now()
	before := rm.Stats.BytesFetched.Load()
	rep = SyncReport{Total: len(items)}
	var mu sync.Mutex
	fail := func(it Item, err error) {
		mu.Lock()
		rep.Errs = append(rep.Errs, fmt.Errorf("%s: %w", it.Task, err))
		mu.Unlock()
	}
	prog := rm.progress(w, "pull", len(items), func() (done, skipped, failed int) {
		mu.Lock()
		defer mu.Unlock()
		return rep.Done, rep.Skipped, len(rep.Errs)
	})
	defer func() {
		prog.stop()
		rep.finish(ctx, rm.Stats.BytesFetched.Load()-before, start)
	}()
	idx, err := rm.index(ctx)
	if err != nil {
		for _, it := range items {
			fail(it, err)
		}
		return rep
	}
	// What to pull.
	type want struct {
		item Item
		envs []opened
	}
	var batched []*want
	var single []Item
	for _, it := range items {
		if e, ok, err := st.GetEntry(it.Key); err == nil && ok && hasAll(st, e) {
			rep.Done++
			rep.Skipped++
			continue
		}
		if len(idx.entries[it.Key]) == 0 {
			single = append(single, it)
			continue
		}
		batched = append(batched, &want{item: it})
	}
	// Each envelope checked once (the signatures, jobs at once), and the
	// packs that hold objects st lacks.
	sem := make(chan struct{}, max(1, jobs))
	var wg sync.WaitGroup
	for _, b := range batched {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			for _, env := range idx.entries[b.item.Key] {
				b.envs = append(b.envs, openEnvelope(env, b.item.Key, rm.trusted))
			}
		})
	}
	wg.Wait()
	packsOf := map[string]batchPack{}
	absent := map[artifacts.Digest]bool{}
	for _, b := range batched {
		for _, op := range b.envs {
			if op.err != nil {
				continue
			}
			for _, o := range op.e.Outputs {
				locs := idx.objects[o.Digest]
				if len(locs) == 0 {
					continue
				}
				loc := locs[0]
				if _, seen := absent[o.Digest]; !seen {
					absent[o.Digest] = !st.Has(o.Digest)
				}
				if absent[o.Digest] {
					packsOf[loc.pack.Name] = loc.pack
				}
			}
		}
	}
	// The packs, downloaded and checked, jobs at once, into the cache
	// (which holds what a pull needs if it fits; useEntry downloads again
	// what it dropped).
	for _, n := range slices.Sorted(maps.Keys(packsOf)) {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			if _, err := rm.pack(ctx, packsOf[n]); err != nil {
				rm.log.Warn("remote pack not used", "pack", packName(n), "remote", rm.URL(), "why", err)
			}
		})
	}
	wg.Wait()
	// The entries, each after its objects, jobs at once.
	for _, b := range batched {
		if ctx.Err() != nil {
			break
		}
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			var why error
			signer := ""
			ok := false
			for _, op := range b.envs {
				_, err := rm.useEntry(ctx, st, idx, op, b.item.Key, b.item.Kind, absent)
				if err == nil {
					ok = true
					rm.Stats.EntriesFetched.Add(1)
					break
				}
				if why == nil {
					why, signer = err, op.signer
				}
			}
			if !ok && !remoteFailed(ctx, why) {
				// Perhaps published task by task too (by a run that
				// recomputed it after finding the batch's copy bad).
				if _, ok = rm.fetchFrom(ctx, st, b.item.Key, b.item.Kind, b.item.Task, false); !ok {
					rm.rejectEntry(why, signer, "remote entry not used", b.item.Task, b.item.Key)
				}
			}
			if ok {
				mu.Lock()
				rep.Done++
				mu.Unlock()
				return
			}
			fail(b.item, fmt.Errorf("the remote entry was not used: %w", why))
		})
	}
	wg.Wait()
	if len(single) > 0 {
		r := rm.each(ctx, single, jobs, nil, "pull", func(it Item) (bool, error) {
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
		mu.Lock()
		rep.Done += r.Done
		rep.Errs = append(rep.Errs, r.Errs...)
		mu.Unlock()
	}
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

// isBad reports whether d was found corrupt on the remote in this run.
func (rm *Remote) isBad(d artifacts.Digest) bool {
	rm.mu.Lock()
	defer rm.mu.Unlock()
	return rm.bad[d]
}

// progressLine prints a sync's progress at most once a second.
type progressLine struct {
	stopc chan struct{}
	wg    sync.WaitGroup
}

func (rm *Remote) progress(w io.Writer, verb string, total int, state func() (done, skipped, failed int)) *progressLine {
	p := &progressLine{stopc: make(chan struct{})}
	if w == nil {
		return p
	}
	p.wg.Go(func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-p.stopc:
				return
			case <-t.C:
				done, skipped, failed := state()
				fmt.Fprintf(w, "%s: %d/%d entries (%d already there, %d failed), %s up, %s down\n", verb, done+failed, total, skipped, failed,
					bytesString(rm.Stats.BytesPushed.Load()), bytesString(rm.Stats.BytesFetched.Load()))
			}
		}
	})
	return p
}

func (p *progressLine) stop() {
	close(p.stopc)
	p.wg.Wait()
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
