package remote

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"thv/artifacts"
)

// maxEnvelope and maxObject bound what a download may read: an index file
// is a few hundred bytes, an object at most a few hundred megabytes.
const (
	maxEnvelope = 64 << 20
	maxObject   = 4 << 30
)

// Options configure a Remote.
type Options struct {
	URL     string
	SignKey *PrivateKey // nil: read-only (nothing is uploaded)
	Trusted []PublicKey // the keys whose entries are used
	Logger  *slog.Logger
	Policy  Policy  // zero: DefaultPolicy
	Backend Backend // nil: OpenBackend(URL); tests pass one
	// PackSize is the bytes of objects Push puts in a pack, and so how
	// often it writes a batch (batch.go); 0: 32 MiB.
	PackSize int
}

// Remote is a remote store bound to the keys of this run. Its methods may
// be called concurrently.
type Remote struct {
	r        *retrying
	sign     *PrivateKey
	trusted  []PublicKey
	log      *slog.Logger
	packSize int

	Stats Stats

	mu        sync.Mutex
	pushFails int
	pushErr   error
	bad       map[artifacts.Digest]bool // remote objects found corrupt: uploaded again

	// The batches' index (batch.go), read once, and the packs read whole
	// for Fetch, kept in memory up to packCacheSize.
	idxMu     sync.Mutex
	idx       *remoteIndex
	packMu    sync.Mutex
	packs     map[string][]byte
	packBytes int64
}

// Stats counts what a Remote did; read it after the run.
type Stats struct {
	EntriesFetched, EntriesRejected, EntriesMissing atomic.Int64
	EntriesPushed, ObjectsPushed, ObjectsPresent    atomic.Int64
	ObjectsFetched, BytesFetched, BytesPushed       atomic.Int64
}

// Open opens the remote at opt.URL.
func Open(ctx context.Context, opt Options) (*Remote, error) {
	b := opt.Backend
	if b == nil {
		var err error
		if b, err = OpenBackend(ctx, opt.URL); err != nil {
			return nil, err
		}
	}
	p := opt.Policy
	if p.Attempts == 0 {
		p = DefaultPolicy
	}
	log := opt.Logger
	if log == nil {
		log = slog.Default()
	}
	size := opt.PackSize
	if size <= 0 {
		size = remotePackSize
	}
	return &Remote{r: &retrying{b: b, policy: p}, sign: opt.SignKey, trusted: opt.Trusted, log: log, packSize: size}, nil
}

// URL is the remote's URL.
func (rm *Remote) URL() string { return rm.r.b.String() }

// ReadOnly reports whether the remote was opened without a signing key.
func (rm *Remote) ReadOnly() bool { return rm.sign == nil }

func objectName(d artifacts.Digest) string { h := d.Hex(); return "objects/" + h[:2] + "/" + h }
func entryName(k artifacts.Key) string     { h := k.Hex(); return "index/" + h[:2] + "/" + h + ".json" }

// Fetch looks key up in the remote after a local miss. It uses the remote
// entry only if it is signed by a trusted key, is of the kind asked for,
// and every object it names downloads with the SHA-256 of its name; the
// objects are then put in st, the entry last, and the outputs returned.
// Otherwise it returns false and, unless the remote simply has no entry,
// logs why the entry was not used: the task is then computed.
func (rm *Remote) Fetch(ctx context.Context, st *artifacts.Store, key artifacts.Key, kind, task string) (map[string]artifacts.Digest, bool) {
	e, ok := rm.fetch(ctx, st, key, kind, task)
	if !ok {
		return nil, false
	}
	outs := make(map[string]artifacts.Digest, len(e.Outputs))
	for _, o := range e.Outputs {
		outs[o.Name] = o.Digest
	}
	return outs, true
}

func (rm *Remote) fetch(ctx context.Context, st *artifacts.Store, key artifacts.Key, kind, task string) (artifacts.Entry, bool) {
	return rm.fetchFrom(ctx, st, key, kind, task, true)
}

// fetchFrom is fetch, from the per-task layout and, if batched, then from
// the batches.
func (rm *Remote) fetchFrom(ctx context.Context, st *artifacts.Store, key artifacts.Key, kind, task string, batched bool) (artifacts.Entry, bool) {
	reject := func(why error) (artifacts.Entry, bool) {
		rm.Stats.EntriesRejected.Add(1)
		rm.log.Warn("remote entry not used; computing the task", "task", task, "key", key, "remote", rm.URL(), "why", why)
		return artifacts.Entry{}, false
	}
	data, err := rm.r.get(ctx, entryName(key), maxEnvelope)
	if err != nil {
		if isNotExist(err) {
			// Not published task by task: perhaps pushed in a batch.
			if !batched {
				rm.Stats.EntriesMissing.Add(1)
				return artifacts.Entry{}, false
			}
			if e, ok, found := rm.fetchBatched(ctx, st, key, kind, reject); found {
				if ok {
					rm.Stats.EntriesFetched.Add(1)
				}
				return e, ok
			}
			rm.Stats.EntriesMissing.Add(1)
			return artifacts.Entry{}, false
		}
		if ctx.Err() != nil || errors.Is(err, errDown) {
			return artifacts.Entry{}, false // reported when the remote went down
		}
		return reject(err)
	}
	e, _, err := openEntry(data, key, rm.trusted)
	if err != nil {
		return reject(err)
	}
	if kind != "" && e.Kind != kind {
		return reject(fmt.Errorf("%w: kind %q, the task is a %q", ErrBadEntry, e.Kind, kind))
	}
	if len(e.Outputs) == 0 {
		return reject(fmt.Errorf("%w: no outputs", ErrBadEntry))
	}
	for _, o := range e.Outputs {
		if st.Has(o.Digest) && st.Verify(o.Digest) == nil {
			continue
		}
		b, err := rm.r.get(ctx, objectName(o.Digest), maxObject)
		if err != nil {
			if isNotExist(err) {
				err = fmt.Errorf("output %q: object %v is not on the remote", o.Name, o.Digest)
			}
			return reject(err)
		}
		if got := artifacts.Sum(b); got != o.Digest || int64(len(b)) != o.Size {
			rm.markBad(o.Digest)
			return reject(fmt.Errorf("output %q: the remote object %s is corrupt: its %d bytes hash to %v (want %d bytes)", o.Name, objectName(o.Digest), len(b), got, o.Size))
		}
		if _, err := st.Put(b); err != nil {
			return reject(fmt.Errorf("output %q: storing it locally: %w", o.Name, err))
		}
		rm.Stats.ObjectsFetched.Add(1)
		rm.Stats.BytesFetched.Add(int64(len(b)))
	}
	if err := st.PutEntry(e); err != nil {
		return reject(fmt.Errorf("storing the entry locally: %w", err))
	}
	rm.Stats.EntriesFetched.Add(1)
	return e, true
}

// Publish uploads what st holds under key: the objects the remote lacks,
// each re-hashed as it is read from st, then the signed entry. It does
// nothing on a read-only remote. A failure is logged and kept for Err; the
// local store is untouched either way.
func (rm *Remote) Publish(ctx context.Context, st *artifacts.Store, key artifacts.Key, task string) {
	if rm.sign == nil {
		return
	}
	if _, err := rm.push(ctx, st, key); err != nil {
		rm.mu.Lock()
		rm.pushFails++
		if rm.pushErr == nil {
			rm.pushErr = err
		}
		rm.mu.Unlock()
		if ctx.Err() == nil && !errors.Is(err, errDown) {
			rm.log.Warn("uploading to the remote failed; the local store keeps the result", "task", task, "err", err)
		}
	}
}

// push uploads one entry; skipped reports that the remote already held
// exactly this signed entry.
func (rm *Remote) push(ctx context.Context, st *artifacts.Store, key artifacts.Key) (skipped bool, err error) {
	e, ok, err := st.GetEntry(key)
	if err != nil {
		return false, fmt.Errorf("reading the local entry %v: %w", key, err)
	}
	if !ok {
		return false, fmt.Errorf("the local store has no entry for %v", key)
	}
	env, err := sealEntry(e, rm.sign)
	if err != nil {
		return false, fmt.Errorf("signing the entry %v: %w", key, err)
	}
	// Resuming: ed25519 signatures are deterministic, so the same key
	// signing the same entry writes the same bytes.
	if old, err := rm.r.get(ctx, entryName(key), maxEnvelope); err == nil && string(old) == string(env) && !rm.anyBad(e) {
		return true, nil
	} else if err != nil && !isNotExist(err) {
		return false, err
	}
	for _, o := range e.Outputs {
		rm.mu.Lock()
		bad := rm.bad[o.Digest]
		rm.mu.Unlock()
		if info, err := rm.r.stat(ctx, objectName(o.Digest)); err == nil && info.Size == o.Size && !bad {
			rm.Stats.ObjectsPresent.Add(1)
			continue // content-addressed: the name vouches for nothing, but a reader re-hashes it
		} else if err != nil && !isNotExist(err) {
			return false, err
		}
		b, err := st.Get(o.Digest)
		if err != nil {
			return false, fmt.Errorf("output %q: %w", o.Name, err)
		}
		if err := rm.r.put(ctx, objectName(o.Digest), b); err != nil {
			return false, err
		}
		rm.Stats.ObjectsPushed.Add(1)
		rm.Stats.BytesPushed.Add(int64(len(b)))
	}
	// Last: only now may a reader find the entry.
	if err := rm.r.put(ctx, entryName(key), env); err != nil {
		return false, err
	}
	rm.Stats.EntriesPushed.Add(1)
	return false, nil
}

// Err reports the uploads that failed during a run, naming the URL, or nil.
func (rm *Remote) Err() error {
	rm.mu.Lock()
	defer rm.mu.Unlock()
	if rm.pushFails == 0 {
		return nil
	}
	var re *RemoteError
	hint := ""
	if errors.As(rm.pushErr, &re) {
		hint = " (is the server up? are AWS_ENDPOINT_URL and the credentials right?)"
	}
	return fmt.Errorf("remote %s: %d task results were not uploaded%s; the local store and the lock have them, so nothing is lost: run thv push when the remote works again. First failure: %w", rm.URL(), rm.pushFails, hint, rm.pushErr)
}

// Failure is the error that made the remote stop being tried, if any.
func (rm *Remote) Failure() error { return rm.r.failure() }

// Summary is one line of what the remote did.
func (rm *Remote) Summary() string {
	s := &rm.Stats
	return fmt.Sprintf("remote %s: %d entries fetched (%d objects, %s), %d not used, %d absent; %d entries pushed (%d objects, %s; %d objects already there)",
		rm.URL(), s.EntriesFetched.Load(), s.ObjectsFetched.Load(), bytesString(s.BytesFetched.Load()), s.EntriesRejected.Load(), s.EntriesMissing.Load(),
		s.EntriesPushed.Load(), s.ObjectsPushed.Load(), bytesString(s.BytesPushed.Load()), s.ObjectsPresent.Load())
}

func bytesString(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// anyBad reports whether an output of e was found corrupt on the remote.
func (rm *Remote) anyBad(e artifacts.Entry) bool {
	rm.mu.Lock()
	defer rm.mu.Unlock()
	for _, o := range e.Outputs {
		if rm.bad[o.Digest] {
			return true
		}
	}
	return false
}
