package pipeline

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"thv/artifacts"
)

// memRemote is a Remote over another local store: what the scheduler does
// with a remote, without a server (artifacts/remote tests the real one).
type memRemote struct {
	src                *artifacts.Store
	mu                 sync.Mutex
	fetched, published []string
}

func (m *memRemote) Fetch(_ context.Context, st *artifacts.Store, key artifacts.Key, kind, task string) (map[string]artifacts.Digest, bool) {
	e, ok, err := m.src.GetEntry(key)
	if err != nil || !ok || e.Kind != kind {
		return nil, false
	}
	outs := map[string]artifacts.Digest{}
	for _, o := range e.Outputs {
		b, err := m.src.Get(o.Digest)
		if err != nil {
			return nil, false
		}
		if _, err := st.Put(b); err != nil {
			return nil, false
		}
		outs[o.Name] = o.Digest
	}
	if st.PutEntry(e) != nil {
		return nil, false
	}
	m.mu.Lock()
	m.fetched = append(m.fetched, task)
	m.mu.Unlock()
	return outs, true
}

func (m *memRemote) Publish(_ context.Context, st *artifacts.Store, key artifacts.Key, task string) {
	e, ok, err := st.GetEntry(key)
	if err != nil || !ok {
		return
	}
	for _, o := range e.Outputs {
		b, err := st.Get(o.Digest)
		if err != nil {
			return
		}
		m.src.Put(b)
	}
	m.src.PutEntry(e)
	m.mu.Lock()
	m.published = append(m.published, task)
	m.mu.Unlock()
}

// TestRemoteHook: a pass with a Remote publishes every executed task; a
// second project with an empty store fetches them all (Cached, nothing
// executed) and writes the same lock; a remote entry that contradicts the
// lock is not used: the task is executed and the lock's outputs stand.
func TestRemoteHook(t *testing.T) {
	shared := newEnv(t)
	rm := &memRemote{src: shared.store}
	a := newEnv(t)
	ra := a.repro(diamond(3), Options{Jobs: 2, Remote: rm})
	if ra.Executed != len(ra.Results) || len(rm.published) != ra.Executed || len(rm.fetched) != 0 {
		t.Fatalf("A: executed %d, published %d, fetched %d", ra.Executed, len(rm.published), len(rm.fetched))
	}
	b := newEnv(t)
	rb := b.repro(diamond(3), Options{Jobs: 2, Remote: rm})
	if rb.Executed != 0 || rb.Cached != len(rb.Results) || len(rm.fetched) != len(rb.Results) {
		t.Fatalf("B: executed %v, fetched %d", ids(rb, Executed), len(rm.fetched))
	}
	if !bytes.Equal(a.lock(), b.lock()) {
		t.Fatal("B's lock differs from A's")
	}

	// C has A's lock; the remote's entry for gen/a/0 now names other bytes.
	c := newEnv(t)
	os.WriteFile(filepath.Join(c.dir, "test.lock"), a.lock(), 0o644)
	key := ra.Results[slices.IndexFunc(ra.Results, func(r *Result) bool { return r.Task.ID == "gen/a/0" })].Key
	d, _ := shared.store.Put([]byte("forged"))
	if err := shared.store.PutEntry(artifacts.Entry{Key: key, Kind: "gen", Outputs: []artifacts.Output{{Name: "x", Digest: d, Size: 6}}}); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	rc := c.repro(diamond(3), Options{Jobs: 1, Remote: rm, Logger: newTextLogger(&log)})
	if got := ids(rc, Executed); !slices.Equal(got, []string{"gen/a/0"}) {
		t.Fatalf("C executed %v, want gen/a/0 only", got)
	}
	if !strings.Contains(log.String(), "the remote's entry disagrees with the lock") {
		t.Fatalf("not reported:\n%s", log.String())
	}
	if !bytes.Equal(a.lock(), c.lock()) {
		t.Fatal("C's lock differs from A's")
	}
}
