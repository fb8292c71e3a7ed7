package remote

import (
	"context"
	"errors"
	"maps"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"thv/artifacts"
)

// eachBackend runs f against a file:// remote and a real S3 server.
func eachBackend(t *testing.T, f func(t *testing.T, url string, path func(name string) string)) {
	t.Run("file", func(t *testing.T) {
		dir, url := fileRemote(t)
		f(t, url, func(name string) string { return filepath.Join(dir, filepath.FromSlash(name)) })
	})
	t.Run("s3", func(t *testing.T) {
		srv, url := s3Remote(t)
		f(t, url, func(name string) string { return srv.Path("thv-cache", "team/paper/"+name) })
	})
}

func outputs(e artifacts.Entry) map[string]artifacts.Digest {
	m := map[string]artifacts.Digest{}
	for _, o := range e.Outputs {
		m[o.Name] = o.Digest
	}
	return m
}

// TestPublishThenFetch: what one store publishes (signed) another fetches
// with every object re-hashed, entry and objects equal; the remote's
// layout puts objects before the entry.
func TestPublishThenFetch(t *testing.T) {
	eachBackend(t, func(t *testing.T, url string, path func(string) string) {
		ctx := context.Background()
		key := genKey(t, "alice")
		a, b := newStore(t), newStore(t)
		e := putTask(t, a, 1, 5000)
		w, _ := openRemote(t, url, key)
		w.Publish(ctx, a, e.Key, "task1")
		if err := w.Err(); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(path(entryName(e.Key))); err != nil {
			t.Fatalf("no entry on the remote: %v", err)
		}
		r, log := openRemote(t, url, nil, key.Public())
		outs, ok := r.Fetch(ctx, b, e.Key, "run", "task1")
		if !ok {
			t.Fatalf("fetch missed: %s", log)
		}
		if !maps.Equal(outs, outputs(e)) {
			t.Fatalf("outputs %v, want %v", outs, outputs(e))
		}
		got, ok, err := b.GetEntry(e.Key)
		if err != nil || !ok {
			t.Fatalf("entry not imported: %v", err)
		}
		want, _ := artifacts.EncodeEntry(e)
		gotb, _ := artifacts.EncodeEntry(got)
		if string(want) != string(gotb) {
			t.Fatalf("imported entry differs:\n%s\n%s", gotb, want)
		}
		for _, o := range e.Outputs {
			if err := b.Verify(o.Digest); err != nil {
				t.Fatal(err)
			}
		}
		// A key the remote does not hold is a silent miss.
		if _, ok := r.Fetch(ctx, b, artifacts.Key{1}, "run", "nothing"); ok || log.String() != "" {
			t.Fatalf("a missing entry: ok=%v, log %q", ok, log)
		}
		// A push files the published entry in a batch (with its objects
		// in a pack); resuming a push that is done uploads nothing.
		rep := w.Push(ctx, a, []Item{{Task: "task1", Key: e.Key}}, 2, nil)
		if rep.Done != 1 || rep.Skipped != 0 || rep.Bytes == 0 {
			t.Fatalf("push: %+v", rep)
		}
		rep = w.Push(ctx, a, []Item{{Task: "task1", Key: e.Key}}, 2, nil)
		if rep.Done != 1 || rep.Skipped != 1 || rep.Bytes != 0 {
			t.Fatalf("second push: %+v", rep)
		}
	})
}

// TestFlippedByteInRemoteObject: a remote object with one byte changed is
// detected when fetched (the entry is not used, the log says which object),
// nothing of it enters the local store, and the next publish repairs it.
func TestFlippedByteInRemoteObject(t *testing.T) {
	eachBackend(t, func(t *testing.T, url string, path func(string) string) {
		ctx := context.Background()
		key := genKey(t, "alice")
		a, b := newStore(t), newStore(t)
		e := putTask(t, a, 2, 3000)
		w, _ := openRemote(t, url, key)
		w.Publish(ctx, a, e.Key, "t")
		p := path(objectName(e.Outputs[1].Digest))
		data := mustRead(t, p)
		data[len(data)/2] ^= 0x01
		os.Chmod(p, 0o644)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		r, log := openRemote(t, url, key, key.Public())
		if _, ok := r.Fetch(ctx, b, e.Key, "run", "t"); ok {
			t.Fatal("a corrupt remote object was used")
		}
		if !strings.Contains(log.String(), "is corrupt") || !strings.Contains(log.String(), e.Outputs[1].Digest.Hex()) {
			t.Fatalf("the log does not say which object is corrupt: %s", log)
		}
		if b.Has(e.Outputs[1].Digest) {
			t.Fatal("the corrupt object entered the local store")
		}
		if _, ok, _ := b.GetEntry(e.Key); ok {
			t.Fatal("the entry of a corrupt object entered the local store")
		}
		// The reader computes the task (here: a has it) and publishes: the
		// bad object is uploaded again, although its size matches.
		r.Publish(ctx, a, e.Key, "t")
		if got := artifacts.Sum(mustRead(t, p)); got != e.Outputs[1].Digest {
			t.Fatal("the corrupt remote object was not repaired")
		}
		if _, ok := r.Fetch(ctx, newStore(t), e.Key, "run", "t"); !ok {
			t.Fatalf("after the repair: %s", log)
		}
	})
}

// TestUntrustedEntries: an unsigned entry, one signed by a key not in the
// trusted list, one whose entry bytes were edited after signing, and one
// moved to another key are not used, and the log says why.
func TestUntrustedEntries(t *testing.T) {
	ctx := context.Background()
	dir, url := fileRemote(t)
	alice, mallory := genKey(t, "alice"), genKey(t, "mallory")
	a := newStore(t)
	e := putTask(t, a, 3, 100)
	other := putTask(t, a, 4, 100)
	w, _ := openRemote(t, url, alice)
	w.Publish(ctx, a, e.Key, "t")
	w.Publish(ctx, a, other.Key, "t")
	entryPath := filepath.Join(dir, filepath.FromSlash(entryName(e.Key)))
	good := mustRead(t, entryPath)

	write := func(data []byte) {
		t.Helper()
		if err := os.WriteFile(entryPath, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	unsigned, _ := sealEntry(e, nil)
	byMallory, _ := sealEntry(e, mallory)
	edited := strings.Replace(string(good), `"format"`, `"format"`, 1)
	{ // edit the signed entry's bytes: another output size, same signature
		var env envelope
		mustUnmarshal(t, good, &env)
		env.Entry = []byte(strings.Replace(string(env.Entry), `"size": 100`, `"size": 101`, 1))
		edited = string(mustMarshal(t, env))
	}
	moved := mustRead(t, filepath.Join(dir, filepath.FromSlash(entryName(other.Key))))

	for _, c := range []struct {
		name string
		data []byte
		want error
	}{
		{"unsigned", unsigned, ErrUnsigned},
		{"untrusted key", byMallory, ErrUntrusted},
		{"edited after signing", []byte(edited), ErrBadSignature},
		{"moved to another key", moved, ErrBadSignature},
		{"garbage", []byte("{\"format\":"), ErrBadEntry},
	} {
		t.Run(c.name, func(t *testing.T) {
			write(c.data)
			b := newStore(t)
			r, log := openRemote(t, url, nil, alice.Public())
			if _, ok := r.Fetch(ctx, b, e.Key, "run", "t"); ok {
				t.Fatal("used")
			}
			_, _, err := openEntry(c.data, e.Key, []PublicKey{alice.Public()})
			if !errors.Is(err, c.want) {
				t.Fatalf("error %v, want %v", err, c.want)
			}
			if !strings.Contains(log.String(), "remote entry not used; computing the task") || r.Stats.EntriesRejected.Load() != 1 {
				t.Fatalf("not reported: %q", log)
			}
			if _, ok, _ := b.GetEntry(e.Key); ok {
				t.Fatal("an untrusted entry entered the local store")
			}
		})
	}
	// Revocation: the good entry under a trust list without alice.
	write(good)
	r, _ := openRemote(t, url, nil, mallory.Public())
	if _, ok := r.Fetch(ctx, newStore(t), e.Key, "run", "t"); ok {
		t.Fatal("an entry of a revoked key was used")
	}
	r, _ = openRemote(t, url, nil, alice.Public())
	if _, ok := r.Fetch(ctx, newStore(t), e.Key, "run", "t"); !ok {
		t.Fatal("the good entry was not used")
	}
	// A wrong kind is not used either.
	if _, ok := r.Fetch(ctx, newStore(t), e.Key, "vstar", "t"); ok {
		t.Fatal("an entry of another kind was used")
	}
}

// checkConsistent fails if any entry on the remote (per task, or in a
// batch) names an object that is not there whole, and returns the number
// of keys with a usable entry.
func checkConsistent(t *testing.T, rm *Remote, trusted []PublicKey) (entries int) {
	t.Helper()
	ctx := context.Background()
	keys := map[artifacts.Key]bool{}
	err := rm.r.b.List(ctx, "index/", func(i Info) error {
		k, ok := parseName(i.Name, "index/", ".json")
		if !ok {
			t.Errorf("stray file %s", i.Name)
			return nil
		}
		data, err := rm.r.b.Get(ctx, i.Name, maxEnvelope)
		if err != nil {
			return err
		}
		e, _, err := openEntry(data, artifacts.Key(k), trusted)
		if err != nil {
			t.Errorf("entry %s: %v", i.Name, err)
			return nil
		}
		for _, o := range e.Outputs {
			b, err := rm.r.b.Get(ctx, objectName(o.Digest), maxObject)
			if err != nil || artifacts.Sum(b) != o.Digest {
				t.Errorf("entry %s names object %v, which is not there whole (%v)", i.Name, o.Digest, err)
			}
		}
		keys[artifacts.Key(k)] = true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	idx, err := rm.loadIndex(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, lb := range idx.batches {
		for _, be := range lb.b.Entries {
			e, _, err := openEntry(be.Envelope, be.Key, trusted)
			if err != nil {
				t.Errorf("entry %v of batch %s: %v", be.Key, lb.info.Name, err)
				continue
			}
			for _, o := range e.Outputs {
				locs := idx.objects[o.Digest]
				if len(locs) == 0 {
					t.Errorf("entry %v of batch %s names object %v, which is in no pack", be.Key, lb.info.Name, o.Digest)
					continue
				}
				loc := locs[0]
				pack, err := rm.pack(ctx, loc.pack)
				if err == nil {
					_, err = objectFrom(pack, loc, o.Digest)
				}
				if err != nil {
					t.Errorf("entry %v of batch %s names object %v, which is not there whole: %v", be.Key, lb.info.Name, o.Digest, err)
				}
			}
			keys[be.Key] = true
		}
	}
	return len(keys)
}

// TestServerKilledMidPush kills the S3 server (SIGKILL) while a push of
// 60 entries (in batches of a few) is under way. At no moment is an entry
// visible whose objects are missing; the push reports failures naming the
// URL; after a restart the same push resumes, skips what was done and
// completes.
func TestServerKilledMidPush(t *testing.T) {
	setForTest(t, &remotePackSize, 400_000) // a batch every two entries
	srv, url := s3Remote(t)
	ctx := context.Background()
	key := genKey(t, "ci")
	st := newStore(t)
	var items []Item
	for i := range 60 {
		e := putTask(t, st, 100+i, 200_000)
		items = append(items, Item{Task: e.Key.Hex()[:8], Key: e.Key})
	}
	rm, _ := openRemote(t, url, key)
	var rep SyncReport
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); rep = rm.Push(ctx, st, items, 4, nil) }()
	// Kill once some entries are up but not all.
	deadline := time.Now().Add(20 * time.Second)
	for rm.Stats.EntriesPushed.Load() < 5 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	srv.Kill()
	wg.Wait()
	if rep.Failed == 0 {
		t.Fatalf("the server was killed but the push reports no failure: %+v", rep)
	}
	if msg := rep.Errs[0].Error(); !strings.Contains(msg, url) {
		t.Fatalf("the error does not name the URL: %v", msg)
	}
	// The data directory as the kill left it: every entry has its objects.
	srv.Restart()
	check, _ := openRemote(t, url, nil)
	before := checkConsistent(t, check, []PublicKey{key.Public()})
	if before == 0 || before == len(items) {
		t.Fatalf("%d of %d entries were up when the server died: the test did not interrupt the push", before, len(items))
	}
	rm2, _ := openRemote(t, url, key)
	rep = rm2.Push(ctx, st, items, 4, nil)
	if rep.Failed != 0 || rep.Done != len(items) || rep.Skipped < before {
		t.Fatalf("resumed push: %+v (first errors %v); %d were up before", rep, rep.Errs, before)
	}
	if n := checkConsistent(t, check, []PublicKey{key.Public()}); n != len(items) {
		t.Fatalf("%d entries after the resumed push, want %d", n, len(items))
	}
	t.Logf("killed after %d of %d entries; the rerun skipped %d", before, len(items), rep.Skipped)
}

// TestConcurrentPushes: two clones with the same results, signing with
// different keys, push at once; the remote ends consistent and a reader
// trusting both fetches every entry.
func TestConcurrentPushes(t *testing.T) {
	_, url := s3Remote(t)
	ctx := context.Background()
	ka, kb := genKey(t, "a"), genKey(t, "b")
	sa, sb := newStore(t), newStore(t)
	var items []Item
	for i := range 30 {
		e := putTask(t, sa, 200+i, 50_000)
		putTask(t, sb, 200+i, 50_000)
		items = append(items, Item{Task: "t", Key: e.Key})
	}
	ra, _ := openRemote(t, url, ka)
	rb, _ := openRemote(t, url, kb)
	var wg sync.WaitGroup
	reps := make([]SyncReport, 2)
	for i, p := range []struct {
		r  *Remote
		st *artifacts.Store
	}{{ra, sa}, {rb, sb}} {
		wg.Add(1)
		go func() { defer wg.Done(); reps[i] = p.r.Push(ctx, p.st, items, 4, nil) }()
	}
	wg.Wait()
	for i, rep := range reps {
		if rep.Failed != 0 || rep.Done != len(items) {
			t.Fatalf("push %d: %+v", i, rep)
		}
	}
	both := []PublicKey{ka.Public(), kb.Public()}
	check, _ := openRemote(t, url, nil, both...)
	if n := checkConsistent(t, check, both); n != len(items) {
		t.Fatalf("%d entries, want %d", n, len(items))
	}
	fresh := newStore(t)
	rep := check.Pull(ctx, fresh, items, 4, nil)
	if rep.Failed != 0 {
		t.Fatalf("pull: %+v %v", rep, rep.Errs)
	}
}

// TestFailingServer: against a server that does not answer (a port that
// accepts connections and never replies, then a closed port), every
// operation is retried with backoff, then fails with an error naming the
// URL; Publish keeps the error for the run's end and the local store keeps
// everything; after the first exhausted retry the remote is not tried
// again (a dead server does not slow every task).
func TestFailingServer(t *testing.T) {
	hang, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer hang.Close()
	var conns sync.WaitGroup
	accepted := make(chan net.Conn, 100)
	conns.Add(1)
	go func() {
		defer conns.Done()
		for {
			c, err := hang.Accept()
			if err != nil {
				return
			}
			accepted <- c // hold it open, never answer
		}
	}()
	t.Cleanup(func() {
		hang.Close()
		conns.Wait()
		close(accepted)
		for c := range accepted {
			c.Close()
		}
	})
	for _, c := range []struct{ name, endpoint string }{
		{"hanging", "http://" + hang.Addr().String()},
		{"refusing", "http://127.0.0.1:1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("AWS_ENDPOINT_URL", c.endpoint)
			t.Setenv("AWS_REGION", "us-east-1")
			t.Setenv("AWS_ACCESS_KEY_ID", "x")
			t.Setenv("AWS_SECRET_ACCESS_KEY", "y")
			t.Setenv("AWS_CONFIG_FILE", "/dev/null")
			t.Setenv("AWS_SHARED_CREDENTIALS_FILE", "/dev/null")
			url := "s3://bucket/prefix"
			st := newStore(t)
			e := putTask(t, st, 9, 100)
			lb := &logBuf{}
			policy := Policy{Attempts: 3, Backoff: 20 * time.Millisecond, MaxBackoff: 40 * time.Millisecond, Timeout: 300 * time.Millisecond}
			rm, err := Open(context.Background(), Options{URL: url, SignKey: genKey(t, "k"), Logger: slogTo(lb), Policy: policy})
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			rm.Publish(context.Background(), st, e.Key, "task9")
			first := time.Since(start)
			err = rm.Err()
			var re *RemoteError
			if err == nil || !errors.As(err, &re) || re.Attempts != 3 || !strings.Contains(err.Error(), url) {
				t.Fatalf("want a RemoteError after 3 attempts naming %s, got %v", url, err)
			}
			if !strings.Contains(err.Error(), "nothing is lost") {
				t.Fatalf("the error does not say the local work is kept: %v", err)
			}
			if first < 30*time.Millisecond {
				t.Fatalf("3 attempts took %v: no backoff?", first)
			}
			if _, ok, _ := st.GetEntry(e.Key); !ok {
				t.Fatal("the local entry is gone")
			}
			// Once down, the remote is not tried again.
			fresh := newStore(t)
			start = time.Now()
			if _, ok := rm.Fetch(context.Background(), fresh, e.Key, "run", "task9"); ok {
				t.Fatal("fetched from a dead server")
			}
			// A try on the hanging server waits out the per-try timeout;
			// a load spike alone does not take that long.
			if d := time.Since(start); d >= policy.Timeout {
				t.Fatalf("a fetch after the remote was marked down took %v", d)
			}
			if !strings.Contains(lb.String(), url) {
				t.Fatalf("the log does not name the URL: %s", lb)
			}
			// Reported once, not once per task.
			if n := strings.Count(lb.String(), "level=WARN"); n != 1 {
				t.Fatalf("%d warnings, want 1:\n%s", n, lb)
			}
		})
	}
}

// TestGCGracePeriod: gc --remote deletes entries the lock does not keep
// and the objects only they named, but nothing younger than the grace
// period, and never an object a kept entry names.
func TestGCGracePeriod(t *testing.T) {
	eachBackend(t, func(t *testing.T, url string, path func(string) string) {
		ctx := context.Background()
		key := genKey(t, "k")
		st := newStore(t)
		keepE, dropE := putTask(t, st, 20, 100), putTask(t, st, 21, 100)
		w, _ := openRemote(t, url, key)
		w.Publish(ctx, st, keepE.Key, "k")
		w.Publish(ctx, st, dropE.Key, "d")
		keep := map[artifacts.Key]bool{keepE.Key: true}
		// Everything is younger than an hour: nothing goes.
		s, err := w.GC(ctx, keep, time.Hour, false, time.Now())
		if err != nil || s.EntriesDeleted+s.ObjectsDeleted != 0 || s.Young == 0 {
			t.Fatalf("young files: %+v %v", s, err)
		}
		// Two hours later (the clock moved, not the files).
		s, err = w.GC(ctx, keep, time.Hour, true, time.Now().Add(2*time.Hour))
		if err != nil || s.EntriesDeleted != 1 || s.ObjectsDeleted != 2 {
			t.Fatalf("dry run: %+v %v", s, err)
		}
		if _, err := os.Stat(path(entryName(dropE.Key))); err != nil {
			t.Fatal("a dry run deleted")
		}
		s, err = w.GC(ctx, keep, time.Hour, false, time.Now().Add(2*time.Hour))
		if err != nil || s.EntriesDeleted != 1 || s.ObjectsDeleted != 2 {
			t.Fatalf("gc: %+v %v", s, err)
		}
		if _, err := os.Stat(path(entryName(dropE.Key))); err == nil {
			t.Fatal("the unkept entry is still there")
		}
		if n := checkConsistent(t, w, []PublicKey{key.Public()}); n != 1 {
			t.Fatalf("%d entries left", n)
		}
	})
}
