package remote

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"sync/atomic"

	"thv/artifacts"
)

// maxEnvelope and maxObject bound what a download may read: an index file
// is at most tens of kilobytes, an object at most a few hundred
// megabytes. An object is read only up to the size its signed entry
// states.
const (
	maxEnvelope = 4 << 20
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
	rejected  map[string]int            // why entries were not used → how many

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
	ObjectsReplaced                                 atomic.Int64 // found corrupt when pushing, and uploaded again
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
	signer := ""
	reject := func(why error) (artifacts.Entry, bool) {
		rm.rejectEntry(why, signer, "remote entry not used; computing the task", task, key)
		return artifacts.Entry{}, false
	}
	data, err := rm.r.get(ctx, entryName(key), maxEnvelope)
	if err != nil {
		if isNotExist(err) {
			// Not published task by task: perhaps pushed in a batch.
			if !batched {
				return artifacts.Entry{}, false // (Pull, after the batches' copy: it counts)
			}
			e, found, why, by := rm.fetchBatched(ctx, st, key, kind)
			switch {
			case !found:
				rm.Stats.EntriesMissing.Add(1)
				return artifacts.Entry{}, false
			case why == nil:
				rm.Stats.EntriesFetched.Add(1)
				return e, true
			case remoteFailed(ctx, why):
				return artifacts.Entry{}, false // reported once, at the end (Failure)
			}
			signer = by
			return reject(why)
		}
		if remoteFailed(ctx, err) {
			return artifacts.Entry{}, false // the remote failed, not the entry: reported once, at the end (Failure)
		}
		return reject(err)
	}
	e, signer, err := openEntry(data, key, rm.trusted)
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
		b, err := rm.r.get(ctx, objectName(o.Digest), min(o.Size, maxObject))
		if err != nil {
			if isNotExist(err) {
				err = fmt.Errorf("output %q: object %v %w", o.Name, o.Digest, errMissingObject)
			} else if errors.Is(err, ErrRefused) {
				rm.markBad(o.Digest)
				err = fmt.Errorf("output %q: %w", o.Name, err)
			}
			return reject(err)
		}
		if got := artifacts.Sum(b); got != o.Digest || int64(len(b)) != o.Size {
			rm.markBad(o.Digest)
			return reject(fmt.Errorf("output %q: the remote object %s %w: its %d bytes hash to %v (want %d bytes)", o.Name, objectName(o.Digest), errCorruptObject, len(b), got, o.Size))
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
	old, err := rm.r.get(ctx, entryName(key), maxEnvelope)
	if err != nil && !isNotExist(err) && !errors.Is(err, ErrRefused) {
		return false, err
	}
	current := err == nil && string(old) == string(env)
	uploaded := false
	for _, o := range e.Outputs {
		rm.mu.Lock()
		bad := rm.bad[o.Digest]
		rm.mu.Unlock()
		info, err := rm.r.stat(ctx, objectName(o.Digest))
		if err != nil && !isNotExist(err) && !errors.Is(err, ErrRefused) {
			return false, err
		}
		if err == nil && info.Size == o.Size && !bad {
			// Content-addressed, but the name vouches for nothing: an
			// object planted under it (before the first push, or since)
			// would deny the cache to every reader. Re-hash it; replace
			// it if it is bad.
			ok, err := rm.remoteObjectOK(ctx, o)
			if err != nil {
				return false, err
			}
			if ok {
				if !current {
					rm.Stats.ObjectsPresent.Add(1)
				}
				continue
			}
		}
		if err == nil {
			rm.Stats.ObjectsReplaced.Add(1)
		}
		b, err := st.Get(o.Digest)
		if err != nil {
			return false, fmt.Errorf("output %q: %w", o.Name, err)
		}
		if err := rm.r.put(ctx, objectName(o.Digest), b); err != nil {
			return false, err
		}
		uploaded = true
		rm.Stats.ObjectsPushed.Add(1)
		rm.Stats.BytesPushed.Add(int64(len(b)))
	}
	if current && !uploaded {
		return true, nil
	}
	// Last: only now may a reader find the entry.
	if err := rm.r.put(ctx, entryName(key), env); err != nil {
		return false, err
	}
	rm.Stats.EntriesPushed.Add(1)
	return false, nil
}

// remoteObjectOK reports whether the remote's object for o has o's bytes,
// reading at most o.Size of them.
func (rm *Remote) remoteObjectOK(ctx context.Context, o artifacts.Output) (bool, error) {
	b, err := rm.r.get(ctx, objectName(o.Digest), o.Size)
	switch {
	case errors.Is(err, ErrRefused) || isNotExist(err):
		return false, nil
	case err != nil:
		return false, err
	}
	return int64(len(b)) == o.Size && artifacts.Sum(b) == o.Digest, nil
}

func (rm *Remote) markBad(d artifacts.Digest) {
	rm.mu.Lock()
	defer rm.mu.Unlock()
	if rm.bad == nil {
		rm.bad = map[artifacts.Digest]bool{}
	}
	rm.bad[d] = true
}

// Why the objects of an entry made it unusable.
var (
	errMissingObject = errors.New("is not on the remote")
	errCorruptObject = errors.New("is corrupt")
)

// rejection is the reason an entry was not used, as Rejections counts
// them: the kind of check that failed, and the signer a key is not
// trusted for.
func rejection(err error, signer string) string {
	switch {
	case errors.Is(err, ErrUntrusted):
		return fmt.Sprintf("signed by a key that is not trusted (it names itself %q): trust its .pub with --trusted-keys, or sign with a trusted key", signer)
	case errors.Is(err, ErrUnsigned):
		return ErrUnsigned.Error()
	case errors.Is(err, ErrBadSignature):
		return "its signature does not verify under the trusted key"
	case errors.Is(err, ErrBadEntry):
		return ErrBadEntry.Error()
	case errors.Is(err, errMissingObject):
		return "an object it names is not on the remote"
	case errors.Is(err, errCorruptObject) || errors.Is(err, ErrRefused):
		return "an object it names is corrupt on the remote (a push with the signing key replaces it)"
	}
	return "another fault: " + err.Error()
}

// rejectEntry counts an entry not used, by its reason (rejection), and
// logs the first of each reason with msg: the others are summed up at the
// end (Rejections).
func (rm *Remote) rejectEntry(why error, signer, msg, task string, key artifacts.Key) {
	rm.Stats.EntriesRejected.Add(1)
	reason := rejection(why, signer)
	rm.mu.Lock()
	if rm.rejected == nil {
		rm.rejected = map[string]int{}
	}
	rm.rejected[reason]++
	first := rm.rejected[reason] == 1
	rm.mu.Unlock()
	if first {
		rm.log.Warn(msg+" (further entries not used for this reason are counted, not shown)", "task", task, "key", key, "remote", rm.URL(), "why", why)
	}
}

// Rejections lists why remote entries were not used during the run, one
// line per reason with its count, most frequent first; nil if every entry
// found was used.
func (rm *Remote) Rejections() []string {
	rm.mu.Lock()
	defer rm.mu.Unlock()
	reasons := make([]string, 0, len(rm.rejected))
	for r := range rm.rejected {
		reasons = append(reasons, r)
	}
	sort.Slice(reasons, func(i, j int) bool {
		a, b := rm.rejected[reasons[i]], rm.rejected[reasons[j]]
		return a > b || a == b && reasons[i] < reasons[j]
	})
	out := make([]string, len(reasons))
	for i, r := range reasons {
		out[i] = fmt.Sprintf("%d entries %s", rm.rejected[r], r)
	}
	return out
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
	return fmt.Sprintf("remote %s: %d entries fetched (%d objects, %s), %d not used, %d absent; %d entries pushed (%d objects, %s; %d objects already there, %d replaced)",
		rm.URL(), s.EntriesFetched.Load(), s.ObjectsFetched.Load(), bytesString(s.BytesFetched.Load()), s.EntriesRejected.Load(), s.EntriesMissing.Load(),
		s.EntriesPushed.Load(), s.ObjectsPushed.Load(), bytesString(s.BytesPushed.Load()), s.ObjectsPresent.Load(), s.ObjectsReplaced.Load())
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
