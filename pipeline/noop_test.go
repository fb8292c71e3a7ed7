package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"testing/fstest"

	"thv/artifacts"
	"thv/artifacts/damage"
)

// The no-op certificate (noop.go): a pass with nothing to do is served
// from it, and every change that a full pass would see — the protocol, the
// code, the lock, an object removed or corrupted, the quarantine — makes
// the next pass a full one again.

const noopPlanDigest = "sha256:plan-one"

// noopPlan is expandPlan with choose's count n: "pick" reads choose's
// output to add n tasks.
func noopPlan(n int) *Plan {
	p := expandPlan(false)
	t, _ := p.Task("choose")
	t.Params = genParams{Name: "choice", N: n}
	return p
}

// noopProject is a fresh process's project of binary over fsys, with the
// plan digest digest.
func (e *env) noopProject(fsys fstest.MapFS, binary string, plan *Plan, digest string) *Project {
	e.t.Helper()
	p := e.memoProject(memoModule(fsys, binary), plan)
	p.PlanDigest = digest
	return p
}

func (e *env) noopRepro(fsys fstest.MapFS, binary string, plan *Plan, digest string) *Report {
	e.t.Helper()
	rep, err := e.noopProject(fsys, binary, plan, digest).Repro(context.Background(), Options{Jobs: 2})
	if err != nil {
		e.t.Fatal(err)
	}
	if rep.Failed+rep.Blocked+rep.Cancelled > 0 {
		e.t.Fatalf("pass: %d failed, %d blocked, %d cancelled", rep.Failed, rep.Blocked, rep.Cancelled)
	}
	return rep
}

// object is a task's output in the store, found from the lock.
func (e *env) object(t *testing.T, fsys fstest.MapFS, digest, id, output string) artifacts.Digest {
	t.Helper()
	return objectOf(t, e.noopProject(fsys, memoBinary, noopPlan(2), digest), id, output)
}

// servedThenRemoved checks that the next pass is served by the
// certificate under digest, and that once an output is removed the pass
// after it is not, and re-executes its producer alone.
func (e *env) servedThenRemoved(t *testing.T, fsys fstest.MapFS, digest string) {
	t.Helper()
	plan := noopPlan(2)
	if rep := e.noopRepro(fsys, memoBinary, plan, digest); !certified(rep, plan) {
		t.Fatal("the pass was not served by the certificate")
	}
	damage.Remove(t, e.store, e.object(t, fsys, digest, "after", "y"))
	plan = noopPlan(2)
	rep := e.noopRepro(fsys, memoBinary, plan, digest)
	if certified(rep, plan) || rep.Executed != 1 {
		t.Fatalf("after an output was removed: certified %v, %d executed (%v), want 1", certified(rep, plan), rep.Executed, ids(rep, Executed))
	}
}

// quarantineAnother puts an object no task outputs, corrupts it and reads
// it, so that the store sets it aside in corrupt/ (and no seal holds).
func (e *env) quarantineAnother(t *testing.T) {
	t.Helper()
	d, err := e.store.Put([]byte("another object"))
	if err != nil {
		t.Fatal(err)
	}
	damage.Flip(t, e.store, d)
	if _, err := e.store.Get(d); err == nil {
		t.Fatal("the corrupt object was not found corrupt")
	}
}

// certificateOf returns the certificate the store holds for the lock of
// binary memoBinary and plan digest digest.
func (e *env) certificateOf(t *testing.T, fsys fstest.MapFS, digest string) *certificate {
	t.Helper()
	p := e.noopProject(fsys, memoBinary, noopPlan(2), digest)
	key, ok := p.certificateKey()
	if !ok {
		t.Fatal("no certificate key")
	}
	cert, ok := loadCertificate(e.store, key, p.Lock.digest)
	if !ok {
		t.Fatal("no certificate")
	}
	return cert
}

// stampedDirs counts the fan-out directories cert has a stamp of.
func stampedDirs(cert *certificate) int {
	n := 0
	for _, st := range cert.stamps.Fanout {
		if st != (artifacts.DirStamp{}) {
			n++
		}
	}
	if cert.stamps.Packs != (artifacts.PackStamp{}) {
		n++
	}
	return n
}

// certified reports whether a certificate served rep: its tasks are the
// lock's records, not the plan's.
func certified(rep *Report, plan *Plan) bool {
	for _, r := range rep.Results {
		if t, ok := plan.Task(r.Task.ID); ok && t == r.Task {
			return false
		}
	}
	return len(rep.Results) > 0
}

// sameReport compares what callers read of two reports.
func sameReport(t *testing.T, got, want *Report) {
	t.Helper()
	if len(got.Results) != len(want.Results) || got.Cached != want.Cached || got.Executed != want.Executed {
		t.Fatalf("%d results (%d cached, %d executed), want %d (%d, %d)", len(got.Results), got.Cached, got.Executed, len(want.Results), want.Cached, want.Executed)
	}
	for i, g := range got.Results {
		w := want.Results[i]
		gp, _ := json.Marshal(g.Task.Params)
		wp, _ := json.Marshal(w.Task.Params)
		if g.Task.ID != w.Task.ID || g.Task.Kind != w.Task.Kind || g.Status != w.Status || g.Key != w.Key || fmt.Sprint(g.Outputs) != fmt.Sprint(w.Outputs) || string(gp) != string(wp) {
			t.Errorf("result %d: %s %s %v %v %v %s, want %s %s %v %v %v %s", i, g.Task.ID, g.Task.Kind, g.Status, g.Key, g.Outputs, gp, w.Task.ID, w.Task.Kind, w.Status, w.Key, w.Outputs, wp)
		}
	}
}

// warm runs a cold pass and checks that the next one is served by the
// certificate, with the report a full pass gives, writing nothing.
func warm(t *testing.T) (*env, fstest.MapFS) {
	e := newEnv(t)
	fsys := memoSources()
	plan := noopPlan(2)
	if rep := e.noopRepro(fsys, memoBinary, plan, noopPlanDigest); rep.Executed != 5 || certified(rep, plan) {
		t.Fatalf("cold pass: %d executed", rep.Executed)
	}
	lock := e.lock()
	plan = noopPlan(2)
	fast := e.noopRepro(fsys, memoBinary, plan, noopPlanDigest)
	if !certified(fast, plan) {
		t.Fatal("the pass after a complete one was not served by its certificate")
	}
	full := e.noopRepro(fsys, memoBinary, noopPlan(2), "") // no plan digest: no certificate
	sameReport(t, fast, full)
	if got := e.lock(); string(got) != string(lock) {
		t.Fatal("the lock changed")
	}
	plan = noopPlan(2)
	st, err := e.noopProject(fsys, memoBinary, plan, noopPlanDigest).Status(context.Background())
	if err != nil || !certified(st, plan) {
		t.Fatalf("status not served by the certificate (%v)", err)
	}
	sameReport(t, st, full)
	return e, fsys
}

func TestNoopCertificate(t *testing.T) {
	warm(t)
}

// TestNoopCertificateInvalidated: each change makes the next pass a full
// one, which decides as it always did; the pass after that is served again.
func TestNoopCertificateInvalidated(t *testing.T) {
	cases := []struct {
		name string
		// change changes something and returns the plan, binary and
		// sources the next pass runs with, and how many tasks it executes.
		change func(t *testing.T, e *env, fsys fstest.MapFS) (plan func() *Plan, binary string, src fstest.MapFS, executed int)
	}{
		{"params", func(t *testing.T, e *env, fsys fstest.MapFS) (func() *Plan, string, fstest.MapFS, int) {
			// Another protocol: choose makes 3, so pick has one more input.
			return func() *Plan { return noopPlan(3) }, memoBinary, fsys, 4 // choose, chosen/2, pick, after
		}},
		{"code", func(t *testing.T, e *env, fsys fstest.MapFS) (func() *Plan, string, fstest.MapFS, int) {
			// Another binary, whose sum package differs.
			edited := fstest.MapFS{}
			for k, v := range fsys {
				edited[k] = v
			}
			edited["sum/sum.go"] = &fstest.MapFile{Data: []byte("package sum\n\nimport \"fake/util\"\n\nvar X = util.X + 1\n")}
			return func() *Plan { return noopPlan(2) }, "otherBinary00001/otherBinary00002", edited, 2 // pick, after
		}},
		{"sources", func(t *testing.T, e *env, fsys fstest.MapFS) (func() *Plan, string, fstest.MapFS, int) {
			// The same build ID over edited sources (as tests build Modules).
			edited := fstest.MapFS{}
			for k, v := range fsys {
				edited[k] = v
			}
			edited["sum/sum.go"] = &fstest.MapFile{Data: []byte("package sum\n\nimport \"fake/util\"\n\nvar X = util.X + 1\n")}
			return func() *Plan { return noopPlan(2) }, memoBinary, edited, 2 // pick, after
		}},
		{"object removed", func(t *testing.T, e *env, fsys fstest.MapFS) (func() *Plan, string, fstest.MapFS, int) {
			damage.Remove(t, e.store, e.object(t, fsys, noopPlanDigest, "after", "y"))
			return func() *Plan { return noopPlan(2) }, memoBinary, fsys, 1 // after
		}},
		{"object corrupted", func(t *testing.T, e *env, fsys fstest.MapFS) (func() *Plan, string, fstest.MapFS, int) {
			// The object that pick's expansion reads (choose's output).
			damage.Flip(t, e.store, e.object(t, fsys, noopPlanDigest, "choose", "x"))
			return func() *Plan { return noopPlan(2) }, memoBinary, fsys, 1 // choose, found corrupt and recomputed
		}},
		{"lock changed", func(t *testing.T, e *env, fsys fstest.MapFS) (func() *Plan, string, fstest.MapFS, int) {
			// The same records with other bytes: no seal, no certificate.
			path := filepath.Join(e.dir, "test.lock")
			b := e.lock()
			if err := os.WriteFile(path, append(b, ' '), 0o644); err != nil {
				t.Fatal(err)
			}
			return func() *Plan { return noopPlan(2) }, memoBinary, fsys, 0
		}},
		{"quarantine", func(t *testing.T, e *env, fsys fstest.MapFS) (func() *Plan, string, fstest.MapFS, int) {
			e.quarantineAnother(t) // the seal no longer holds
			return func() *Plan { return noopPlan(2) }, memoBinary, fsys, 0
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			testNoopInvalidated(t, c.name, c.change)
		})
	}
}

func testNoopInvalidated(t *testing.T, name string, change func(t *testing.T, e *env, fsys fstest.MapFS) (func() *Plan, string, fstest.MapFS, int)) {
	ctx := context.Background()
	e, fsys := warm(t)
	planOf, binary, src, executed := change(t, e, fsys)
	plan := planOf()
	digest := noopPlanDigest
	if name == "params" {
		digest = "sha256:plan-two"
	}
	rep := e.noopRepro(src, binary, plan, digest)
	if certified(rep, plan) {
		t.Fatal("served by the certificate after the change")
	}
	if rep.Executed != executed {
		t.Errorf("%d executed (%v), want %d", rep.Executed, ids(rep, Executed), executed)
	}
	// A full pass with no certificate at all decides the same.
	full, err := e.noopProject(src, binary, planOf(), "").Status(ctx)
	if err != nil || full.Cached != len(full.Results) {
		t.Fatalf("after the full pass, status: %d of %d cached (%v)", full.Cached, len(full.Results), err)
	}
	plan = planOf()
	again := e.noopRepro(src, binary, plan, digest)
	if !certified(again, plan) {
		t.Fatal("the pass after the full one was not served by a certificate")
	}
	sameReport(t, again, full)
}

// TestNoopCertificateStamps: a certificate carries the stamps of the
// packs (exact: names, inodes and sizes, no clock) and of the fan-out
// directories, those that do not exist (the store's objects are packed)
// stamped as absent, so even the certificate written just after its pass
// serves the next pass by its stamps alone; an output removed since is still found missing and recomputed: removing it
// (a kill record appended) changed the packs' stamp.
func TestNoopCertificateStamps(t *testing.T) {
	e, fsys := warm(t)
	cert := e.certificateOf(t, fsys, noopPlanDigest)
	if cert.stamps.Packs == (artifacts.PackStamp{}) || stampedDirs(cert) <= 1 {
		t.Fatalf("the certificate carries %d stamps, the packs' %v", stampedDirs(cert), cert.stamps.Packs != (artifacts.PackStamp{}))
	}
	plan := noopPlan(2)
	if rep := e.noopRepro(fsys, memoBinary, plan, noopPlanDigest); !certified(rep, plan) {
		t.Fatal("the pass after was not served by the certificate")
	}
	e.servedThenRemoved(t, fsys, noopPlanDigest)
}

// TestNoopRenewsStamps: once the packs changed since a certificate's
// stamps (another pass wrote the store), the first no-op pass looks the
// outputs up and writes the certificate again with the stamps it took (a
// status pass, which writes nothing, does not); the renewal writes only
// the certificate's loose entry, so every stamp holds after it and the
// next pass is served by the stamps alone. An output removed afterwards is
// still found missing.
func TestNoopRenewsStamps(t *testing.T) {
	e, fsys := warm(t)
	old := e.certificateOf(t, fsys, noopPlanDigest).stamps
	if _, err := e.store.Put([]byte("another pass's object")); err != nil {
		t.Fatal(err)
	}
	if err := e.store.Sync(); err != nil {
		t.Fatal(err)
	}
	if now, _ := e.store.StampDirs(); now.Packs == old.Packs {
		t.Fatal("writing an object left the packs' stamp as it was")
	}
	plan := noopPlan(2)
	if st, err := e.noopProject(fsys, memoBinary, plan, noopPlanDigest).Status(context.Background()); err != nil || !certified(st, plan) {
		t.Fatalf("status not served by the certificate (%v)", err)
	}
	if e.certificateOf(t, fsys, noopPlanDigest).stamps != old {
		t.Fatal("a status pass renewed the stamps")
	}
	objects, err := e.store.Objects()
	if err != nil {
		t.Fatal(err)
	}
	plan = noopPlan(2)
	if rep := e.noopRepro(fsys, memoBinary, plan, noopPlanDigest); !certified(rep, plan) {
		t.Fatal("the no-op was not served by the certificate")
	}
	renewed := e.certificateOf(t, fsys, noopPlanDigest).stamps
	if renewed.Packs == old.Packs {
		t.Fatal("the no-op did not renew the certificate's stamps")
	}
	// The renewal wrote no object (it rewrote the certificate's
	// entry): every stamp it wrote still holds, so the next no-op
	// has nothing to renew.
	if after, err := e.store.Objects(); err != nil || len(after) != len(objects) {
		t.Fatalf("the renewal wrote objects: %d before, %d after (%v)", len(objects), len(after), err)
	}
	now, err := e.store.StampDirs()
	if err != nil {
		t.Fatal(err)
	}
	for i, st := range renewed.Fanout {
		if st != (artifacts.DirStamp{}) && now.Fanout[i] != st {
			t.Fatalf("fan-out directory %02x changed after its stamp was renewed", i)
		}
	}
	if renewed.Packs != now.Packs {
		t.Fatal("the packs changed after their stamp was renewed")
	}
	plan = noopPlan(2)
	if rep := e.noopRepro(fsys, memoBinary, plan, noopPlanDigest); !certified(rep, plan) {
		t.Fatal("the pass after the renewal was not served by the certificate")
	}
	e.servedThenRemoved(t, fsys, noopPlanDigest)
}

// TestNoopCertificateNotForVerification: a pass that honours no seal uses
// no certificate.
func TestNoopCertificateNotForVerification(t *testing.T) {
	e, fsys := warm(t)
	plan := noopPlan(2)
	p := e.noopProject(fsys, memoBinary, plan, noopPlanDigest)
	p.IgnoreSeal = true
	st, err := p.Status(context.Background())
	if err != nil || certified(st, plan) || st.Cached != len(plan.Tasks) {
		t.Fatalf("status honouring no seal: certified %v, %d cached (%v)", certified(st, plan), st.Cached, err)
	}
}

// TestNoopCertificateForm: a certificate's object round-trips, and is
// refused unless well formed.
func TestNoopCertificateForm(t *testing.T) {
	c := &certificate{reads: []artifacts.Digest{artifacts.Sum([]byte("a")), artifacts.Sum([]byte("b"))}}
	c.stamps.Fanout[0] = artifacts.DirStamp{Dev: 1, Ino: 2, Ctime: 3}
	c.stamps.Fanout[255] = artifacts.DirStamp{Dev: 1 << 63, Ino: 5, Ctime: -1}
	c.stamps.Packs = artifacts.PackStamp{7, 8, 9}
	b, meta := c.encode()
	got, err := decodeCertificate(b, meta)
	if err != nil || !slices.Equal(got.reads, c.reads) || got.stamps != c.stamps {
		t.Fatalf("round trip: %v %v", got, err)
	}
	st := meta["stamps"]
	for _, bad := range []struct {
		object []byte
		stamps string
	}{
		{nil, st}, {[]byte(noopMagic), st}, {b[:len(b)-1], st}, {append(slices.Clone(b), 0), st},
		{[]byte(noopMagic + "-1\n"), st},
		{append([]byte("thv no-op v2\n"), b[len(noopMagic):]...), st}, // another layout
		{b, ""}, {b, st[:len(st)-4]}, {b, st + "AAAA"}, {b, st[:len(st)-1] + "!"}, // the stamps missing, short, long, not base64
		{b, st + "="}, // padded
	} {
		if _, err := decodeCertificate(bad.object, map[string]string{"stamps": bad.stamps}); err == nil {
			t.Errorf("%q, %q: accepted", bad.object, bad.stamps)
		}
	}
}

// TestNoopCertificateSharedListing: a listing shared by several projects
// serves their checks while it holds; once something is quarantined (the
// only way an object leaves a store while the listing's holder keeps the
// store locked shared) it is not used, and the removed object is seen.
func TestNoopCertificateSharedListing(t *testing.T) {
	e, fsys := warm(t)
	unlock, err := e.store.LockShared()
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	l := NewListing(e.store)
	plan := noopPlan(2)
	p := e.noopProject(fsys, memoBinary, plan, noopPlanDigest)
	p.Shared = l
	if st, err := p.Status(context.Background()); err != nil || !certified(st, plan) {
		t.Fatalf("not served with a shared listing (%v)", err)
	}
	if _, ok := l.objects(e.store); !ok {
		t.Fatal("the listing does not hold")
	}
	// Quarantine after's output: the listing still names it.
	d := objectOf(t, p, "after", "y")
	damage.Flip(t, e.store, d)
	if _, err := e.store.Get(d); err == nil {
		t.Fatal("the garbled object was not found corrupt")
	}
	if listed, ok := l.objects(e.store); ok || !listed.Has(d) {
		t.Fatalf("after a quarantine the listing still holds (%v), or never named the object (%v)", ok, listed.Has(d))
	}
	plan = noopPlan(2)
	p = e.noopProject(fsys, memoBinary, plan, noopPlanDigest)
	p.Shared = l
	rep, err := p.Repro(context.Background(), Options{Jobs: 2})
	if err != nil || certified(rep, plan) || !slices.Equal(ids(rep, Executed), []string{"after"}) {
		t.Fatalf("after the quarantine: certified %v, executed %v (%v)", certified(rep, plan), ids(rep, Executed), err)
	}
}
