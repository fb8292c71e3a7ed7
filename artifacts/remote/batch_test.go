package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"thv/artifacts"
)

// countingBackend counts a backend's requests by kind, and can fail the
// uploads of names with a prefix.
type countingBackend struct {
	Backend
	gets, puts, stats, lists, dels atomic.Int64
	failPut                        string
}

func (c *countingBackend) Get(ctx context.Context, name string, limit int64) ([]byte, error) {
	c.gets.Add(1)
	return c.Backend.Get(ctx, name, limit)
}

func (c *countingBackend) Put(ctx context.Context, name string, data []byte) error {
	c.puts.Add(1)
	if c.failPut != "" && strings.HasPrefix(name, c.failPut) {
		return errors.New("simulated failure of the upload")
	}
	return c.Backend.Put(ctx, name, data)
}

func (c *countingBackend) Stat(ctx context.Context, name string) (Info, error) {
	c.stats.Add(1)
	return c.Backend.Stat(ctx, name)
}

func (c *countingBackend) List(ctx context.Context, prefix string, fn func(Info) error) error {
	c.lists.Add(1)
	return c.Backend.List(ctx, prefix, fn)
}

func (c *countingBackend) Delete(ctx context.Context, name string) error {
	c.dels.Add(1)
	return c.Backend.Delete(ctx, name)
}

func (c *countingBackend) requests() int64 {
	return c.gets.Load() + c.puts.Load() + c.stats.Load() + c.lists.Load() + c.dels.Load()
}

// openCounting opens the remote at url through a counting backend.
func openCounting(t *testing.T, url string, sign *PrivateKey, trusted ...PublicKey) (*Remote, *countingBackend, *logBuf) {
	t.Helper()
	b, err := OpenBackend(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	c := &countingBackend{Backend: b}
	lb := &logBuf{}
	rm, err := Open(context.Background(), Options{URL: url, SignKey: sign, Trusted: trusted, Logger: slogTo(lb), Policy: fastPolicy, Backend: c})
	if err != nil {
		t.Fatal(err)
	}
	return rm, c, lb
}

// manyTasks stores n tasks in st and returns their items.
func manyTasks(t *testing.T, st *artifacts.Store, n, size int) ([]Item, []artifacts.Entry) {
	var items []Item
	var es []artifacts.Entry
	for i := range n {
		e := putTask(t, st, 1000+i, size)
		items = append(items, Item{Task: e.Key.Hex()[:8], Key: e.Key, Kind: "run"})
		es = append(es, e)
	}
	return items, es
}

// TestPushPullMovePacks: a push of 300 tasks (600 objects) makes a few
// requests, not one per object and entry: a listing, a pack and a batch
// per 64 kB of objects, a look for each pack; a pull into an empty store
// as few (a listing, each batch, each pack), and every entry and object
// arrives, each object re-hashed; a second push and a second pull move
// nothing.
func TestPushPullMovePacks(t *testing.T) {
	eachBackend(t, func(t *testing.T, url string, path func(string) string) {
		setForTest(t, &remotePackSize, 64_000)
		ctx := context.Background()
		key := genKey(t, "ci")
		st := newStore(t)
		items, es := manyTasks(t, st, 300, 1000)
		w, wc, _ := openCounting(t, url, key)
		rep := w.Push(ctx, st, items, 4, nil)
		if rep.Failed != 0 || rep.Done != len(items) {
			t.Fatalf("push: %+v %v", rep, rep.Errs)
		}
		packs, _ := filepath.Glob(path("packs/*.pack"))
		batches, _ := filepath.Glob(path("batches/*.batch"))
		if len(packs) < 3 || len(batches) != len(packs) {
			t.Fatalf("%d packs and %d batches: want several, a batch per pack", len(packs), len(batches))
		}
		if puts, n := wc.puts.Load(), int64(len(packs)+len(batches)); puts != n || wc.requests() > 3*n+2 {
			t.Fatalf("push: %d PUTs for %d packs and batches, %d requests in all", puts, n, wc.requests())
		}
		t.Logf("push of %d entries: %d requests (%d packs, %d batches), %d bytes", len(items), wc.requests(), len(packs), len(batches), rep.Bytes)

		r, rc, log := openCounting(t, url, nil, key.Public())
		fresh := newStore(t)
		rep = r.Pull(ctx, fresh, items, 4, nil)
		if rep.Failed != 0 || rep.Done != len(items) || rep.Skipped != 0 {
			t.Fatalf("pull: %+v %v\n%s", rep, rep.Errs, log)
		}
		if n := int64(1 + len(packs) + len(batches)); rc.requests() != n {
			t.Fatalf("pull: %d requests, want %d (a listing, %d batches, %d packs)", rc.requests(), n, len(batches), len(packs))
		}
		for _, e := range es {
			got, ok, err := fresh.GetEntry(e.Key)
			if !ok || err != nil || len(got.Outputs) != 2 {
				t.Fatalf("entry %v: %v %v", e.Key, ok, err)
			}
			for _, o := range e.Outputs {
				if err := fresh.Verify(o.Digest); err != nil {
					t.Fatal(err)
				}
			}
		}
		if rep := r.Pull(ctx, fresh, items, 4, nil); rep.Skipped != len(items) || rep.Bytes != 0 {
			t.Fatalf("second pull: %+v", rep)
		}
		w2, wc2, _ := openCounting(t, url, key)
		if rep := w2.Push(ctx, st, items, 4, nil); rep.Skipped != len(items) || rep.Bytes != 0 || wc2.puts.Load() != 0 {
			t.Fatalf("second push: %+v, %d PUTs", rep, wc2.puts.Load())
		}
	})
}

// TestPulledPacksRehashed: a pack with a byte flipped no longer hashes to
// its name: nothing of it is used (the log says which pack), its entries
// are not pulled, the others are. A batch forged to point an object at
// other bytes of a good pack (and re-sealed under its new hash): the
// object does not hash to its digest, and its entry is not used.
func TestPulledPacksRehashed(t *testing.T) {
	setForTest(t, &remotePackSize, 20_000)
	dir, url := fileRemote(t)
	ctx := context.Background()
	key := genKey(t, "ci")
	st := newStore(t)
	items, es := manyTasks(t, st, 40, 1000)
	w, _ := openRemote(t, url, key)
	if rep := w.Push(ctx, st, items, 2, nil); rep.Failed != 0 {
		t.Fatal(rep.Errs)
	}
	packs, _ := filepath.Glob(filepath.Join(dir, "packs", "*.pack"))
	victim := packs[0]
	data := mustRead(t, victim)
	data[len(data)/2] ^= 0x10
	if err := os.WriteFile(victim, data, 0o644); err != nil {
		t.Fatal(err)
	}
	r, log := openRemote(t, url, nil, key.Public())
	fresh := newStore(t)
	rep := r.Pull(ctx, fresh, items, 2, nil)
	if rep.Failed == 0 || rep.Done == 0 || !strings.Contains(log.String(), "is corrupt") || !strings.Contains(log.String(), filepath.Base(victim)) {
		t.Fatalf("pull with a flipped byte in a pack: %+v\n%s", rep, log)
	}
	idx, err := r.loadIndex(ctx)
	if err != nil {
		t.Fatal(err)
	}
	bad := strings.TrimSuffix(filepath.Base(victim), packExt)
	for _, e := range es {
		inBad := false
		for _, o := range e.Outputs {
			in := idx.objects[o.Digest][0].pack.Name == bad
			inBad = inBad || in
			if in && fresh.Has(o.Digest) {
				t.Fatalf("object %v of the corrupt pack entered the local store", o.Digest)
			}
		}
		if _, ok, _ := fresh.GetEntry(e.Key); ok == inBad {
			t.Fatalf("entry %v: pulled %v, in the corrupt pack %v", e.Key, ok, inBad)
		}
	}

	// A forged batch: an object pointed at other bytes of a good pack.
	good, _ := filepath.Glob(filepath.Join(dir, "batches", "*.batch"))
	var forged *batchFile
	var forgedName string
	for _, p := range good {
		h, _ := parseHexName("batches/"+filepath.Base(p), batchesPrefix, batchExt)
		raw, err := unseal(mustRead(t, p), h, -1)
		if err != nil {
			t.Fatal(err)
		}
		b, err := decodeBatch(raw)
		if err != nil {
			t.Fatal(err)
		}
		if b.Packs[0].Name != bad && len(b.Objects) > 1 {
			forged, forgedName = b, p
			break
		}
	}
	if forged == nil {
		t.Fatal("no batch of a good pack with two objects")
	}
	forged.Objects[0].Offset, forged.Objects[1].Offset = forged.Objects[1].Offset, forged.Objects[0].Offset
	forged.Objects[0].Size, forged.Objects[1].Size = forged.Objects[1].Size, forged.Objects[0].Size
	raw, _ := json.Marshal(forged)
	z, h := seal(raw)
	os.Remove(forgedName)
	if err := os.WriteFile(filepath.Join(dir, batchName(h)), z, 0o644); err != nil {
		t.Fatal(err)
	}
	r2, log2 := openRemote(t, url, nil, key.Public())
	rep = r2.Pull(ctx, newStore(t), items, 2, nil)
	// The log shows one entry per reason (the rest are counted), in the
	// order the parallel pull met them; the report names every one.
	if rep.Failed == 0 || !strings.Contains(log2.String(), "is corrupt") || !strings.Contains(fmt.Sprint(rep.Errs), forged.Objects[0].Digest.Hex()) {
		t.Fatalf("pull with a forged batch: %+v\n%s", rep, log2)
	}
}

// TestInterruptedPushNeverVisible: a push whose batches fail to upload
// leaves its packs on the remote, and a reader finds nothing of them (no
// entry, no fetch); a pack cut short under its name (an upload that a
// backend shows before it is whole) is not used either.
func TestInterruptedPushNeverVisible(t *testing.T) {
	dir, url := fileRemote(t)
	ctx := context.Background()
	key := genKey(t, "ci")
	st := newStore(t)
	items, _ := manyTasks(t, st, 10, 500)
	w, wc, _ := openCounting(t, url, key)
	wc.failPut = batchesPrefix
	if rep := w.Push(ctx, st, items, 2, nil); rep.Failed != len(items) {
		t.Fatalf("a push whose batch fails: %+v", rep)
	}
	packs, _ := filepath.Glob(filepath.Join(dir, "packs", "*.pack"))
	if len(packs) == 0 {
		t.Fatal("no pack uploaded: the test does not test what it says")
	}
	r, log := openRemote(t, url, nil, key.Public())
	if rep := r.Pull(ctx, newStore(t), items, 2, nil); rep.Done != 0 {
		t.Fatalf("entries of an interrupted push were pulled: %+v", rep)
	}
	if _, ok := r.Fetch(ctx, newStore(t), items[0].Key, "run", "t"); ok {
		t.Fatal("an entry of an interrupted push was fetched")
	}
	// Now the push completes; then its pack is cut short.
	w2, _ := openRemote(t, url, key)
	if rep := w2.Push(ctx, st, items, 2, nil); rep.Failed != 0 {
		t.Fatal(rep.Errs)
	}
	packs, _ = filepath.Glob(filepath.Join(dir, "packs", "*.pack"))
	for _, p := range packs {
		data := mustRead(t, p)
		os.WriteFile(p, data[:len(data)/2], 0o644)
	}
	r3, log3 := openRemote(t, url, nil, key.Public())
	if rep := r3.Pull(ctx, newStore(t), items, 2, nil); rep.Done != 0 || !strings.Contains(log3.String(), "cut short") {
		t.Fatalf("a pack cut short was used: %+v\n%s%s", rep, log, log3)
	}
}

// TestGCBatches: gc --remote keeps a batch while one of its entries is
// kept (and the packs it names), deletes one none of whose entries is,
// and the packs no batch names (an interrupted push), but nothing younger
// than the grace period.
func TestGCBatches(t *testing.T) {
	dir, url := fileRemote(t)
	ctx := context.Background()
	key := genKey(t, "ci")
	st := newStore(t)
	keepItems, _ := manyTasks(t, st, 3, 300)
	dropE := putTask(t, st, 2000, 300)
	orphanE := putTask(t, st, 3000, 300)
	w, wc, _ := openCounting(t, url, key)
	for _, its := range [][]Item{keepItems, {{Task: "drop", Key: dropE.Key}}} {
		if rep := w.Push(ctx, st, its, 2, nil); rep.Failed != 0 {
			t.Fatal(rep.Errs)
		}
	}
	wc.failPut = batchesPrefix
	w.Push(ctx, st, []Item{{Task: "orphan", Key: orphanE.Key}}, 2, nil)
	w, _ = openRemote(t, url, key) // (the failed upload marked that one down)
	keep := map[artifacts.Key]bool{}
	for _, it := range keepItems {
		keep[it.Key] = true
	}
	s, err := w.GC(ctx, keep, time.Hour, false, time.Now())
	if err != nil || s.BatchesDeleted+s.PacksDeleted != 0 || s.Young == 0 {
		t.Fatalf("young files: %+v %v", s, err)
	}
	s, err = w.GC(ctx, keep, time.Hour, false, time.Now().Add(2*time.Hour))
	if err != nil || s.Batches != 2 || s.BatchesDeleted != 1 || s.Packs != 3 || s.PacksDeleted != 2 {
		t.Fatalf("gc: %+v %v", s, err)
	}
	r, _ := openRemote(t, url, nil, key.Public())
	if n := checkConsistent(t, r, []PublicKey{key.Public()}); n != len(keepItems) {
		t.Fatalf("%d entries after gc, want %d", n, len(keepItems))
	}
	if packs, _ := filepath.Glob(filepath.Join(dir, "packs", "*.pack")); len(packs) != 1 {
		t.Fatalf("packs after gc: %v", packs)
	}
}
